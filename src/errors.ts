/**
 * One error table: every code a script raises or the core detects, the class that carries it and
 * the HTTP status it maps to. Scripts raise `EMQKIND`, `EMQARG`, `EMQCONFLICT` and `EMQPARTITION`; the rest come
 * from the core.
 */
export const errorCodes = {
  /** An id that is not a `JOB:` id reached a script (the kind door). */
  EMQKIND: 400,
  /** A malformed option or argument: a negative delay, max attempts below 1, a limit below 0... */
  EMQARG: 400,
  /** A queue or group name outside letters, digits and `._-`, or longer than 128. */
  EMQNAME: 400,
  /** A payload that JSON cannot carry (undefined, a function, a BigInt, a cycle). */
  EMQPAYLOAD: 400,
  /** A payload over the configured cap (1 MiB by default). */
  EMQTOOLARGE: 413,
  /** No such job. */
  EMQNOTFOUND: 404,
  /** The job is not in the state the operation needs (reprocess a job that is not dead...). */
  EMQSTATE: 409,
  /** An idempotency key used again with other jobs than it first came with. */
  EMQCONFLICT: 409,
  /**
   * Redis failed or answered something no script returns; or could not be reached
   * (`ConnectionError`: the URL and why, `reason`).
   */
  EMQREDIS: 503,
  /** A job waited for ended dead (`JobFailedError`: its error in `jobError`). */
  EMQFAILED: 422,
  /** A job cancelled: the reason a running job's signal aborts with, and what a wait for it throws (`JobCancelledError`). */
  EMQCANCELLED: 409,
  /** A job waited for expired before it started: dead with EMQEXPIRED (`JobExpiredError`, a JobFailedError). */
  EMQEXPIRED: 410,
  /** A job waited for did not finish within the time given (`WaitTimeoutError`). */
  EMQTIMEOUT: 504,
  /** A request without the bearer token the server requires, or with a wrong one. */
  EMQAUTH: 401,
  /** The server is not configured to serve (a deployed Worker without EMQ_TOKEN). */
  EMQCONFIG: 503,
  /**
   * A write with `durability: 'replicated'` reached fewer replicas than asked in time
   * (`ReplicationError`): it is applied on the master, and safe to send again.
   */
  EMQREPLICA: 503,
  /**
   * A partitioned queue opened without its count of partitions, or with another count, or an
   * unpartitioned queue's name opened partitioned (`PartitionError`): nothing was written.
   */
  EMQPARTITION: 409,
  /**
   * A durable step refused (`StepError`, its `reason`): a handler that ran its steps in another
   * order than the recorded one (non-determinism), a step name used twice, past the steps or
   * bytes a job may record, or a step outside a consumer's lease. The job fails for good.
   */
  EMQSTEP: 422,
} as const;

/** A code of the error table. */
export type EmqErrorCode = keyof typeof errorCodes;

/** Where an error arose: the script and the job it was about, when known. */
export interface EmqErrorContext {
  /** The script that raised it. */
  readonly script?: string;
  /** The job it was about. */
  readonly jobId?: string;
  /** The error underneath (Redis's reply, a client's failure): `error.cause`. */
  readonly cause?: unknown;
}

/**
 * The base of every echomq error: `code` names the row of the error table, `status` its HTTP
 * status.
 *
 * @example
 * try { await queue.add(undefined) } catch (e) { if (e instanceof EmqError) console.log(e.code) }
 */
export class EmqError extends Error {
  /** The row of the error table: what kind of failure, and (`status`) its HTTP status. */
  readonly code: EmqErrorCode;
  /** The script that raised it, when a script did. */
  readonly script: string | undefined;
  /** The job it was about, when one was. */
  readonly jobId: string | undefined;

  constructor(code: EmqErrorCode, message: string, context: EmqErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = new.target.name;
    this.code = code;
    this.script = context.script;
    this.jobId = context.jobId;
  }

  /** The HTTP status this error maps to. */
  get status(): number {
    return errorCodes[this.code];
  }
}

/** A script refused an id that is not a `JOB:` id. */
export class KindError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQKIND', message, context);
  }
}

/** Bad input: nothing was written. */
export class InvalidArgumentError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQARG', message, context);
  }
}

/** A queue or group name that would make a bad key. */
export class InvalidNameError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQNAME', message, context);
  }
}

/** A payload JSON cannot carry. */
export class PayloadError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQPAYLOAD', message, context);
  }
}

/** A payload over the size cap. */
export class PayloadTooLargeError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQTOOLARGE', message, context);
  }
}

/** No such job. */
export class JobNotFoundError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQNOTFOUND', message, context);
  }
}

/** The job is not in the state the operation needs. */
export class JobStateError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQSTATE', message, context);
  }
}

/** An idempotency key used again with other jobs: nothing was written. */
export class IdempotencyConflictError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQCONFLICT', message, context);
  }
}

/**
 * A job waited for (`Queue.waitFor`, `addAndWait`) ended dead: its attempts used up, failed for
 * good, or its last lease lapsed. `jobError` is the error the job ended with, `jobId` the job.
 *
 * @example
 * try { await queue.waitFor(id) } catch (e) { if (e instanceof JobFailedError) console.log(e.jobId, e.jobError) }
 */
export class JobFailedError extends EmqError {
  /** What the job failed with (its row's `error`). */
  readonly jobError: string;

  constructor(message: string, context: EmqErrorContext & { jobError?: string } = {}, code: 'EMQFAILED' | 'EMQEXPIRED' = 'EMQFAILED') {
    super(code, message, context);
    this.jobError = context.jobError ?? message;
  }
}

/**
 * A job waited for (`waitFor`, `addAndWait`) expired before it started (`expireAfterMs`,
 * `expireAt`: docs/guides/job-controls.md): dead with EMQEXPIRED. A JobFailedError, so what
 * handles a failed job handles it too.
 */
export class JobExpiredError extends JobFailedError {
  constructor(message: string, context: EmqErrorContext & { jobError?: string } = {}) {
    super(message, context, 'EMQEXPIRED');
  }
}

/**
 * A job cancelled (`queue.cancel`: docs/guides/job-controls.md): the reason a running job's
 * handler signal aborts with (whatever the handler does then, its settle ends the job
 * `cancelled`; throwing this, or letting it through, is the quick way out), and what `waitFor` and
 * `addAndWait` throw for a job that ended cancelled.
 */
export class JobCancelledError extends EmqError {
  constructor(
    jobId: string,
    /** Why, as the cancel gave it (`CancelOptions.reason`). */
    readonly reason: string,
  ) {
    super('EMQCANCELLED', `job ${jobId} was cancelled: ${reason}`, { jobId });
  }
}

/**
 * A durable step refused (docs/guides/steps.md): `reason` says which way. Thrown into the handler
 * by `step.run`, `step.sleep`, `step.waitForEvent` and `step.invoke`; a handler that lets it out
 * fails its job for good (dead), since running the same code again would refuse again.
 *
 * @example
 * // a deploy that renamed a step under jobs already past it:
 * // StepError (EMQSTEP): step 2 is "charge" in this job's record, but the handler called "bill" there
 */
export class StepError extends EmqError {
  constructor(
    /** `order`: another name than the one recorded at that place; `duplicate`: a name used twice; `limit`: past a limit; `context`: no lease to record under. */
    readonly reason: 'order' | 'duplicate' | 'limit' | 'context',
    message: string,
    context?: EmqErrorContext,
  ) {
    super('EMQSTEP', message, context);
  }
}

/**
 * A job waited for (`Queue.waitFor`, `addAndWait`) did not finish within the time given: it may
 * still. `jobId` is the job.
 */
export class WaitTimeoutError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQTIMEOUT', message, context);
  }
}

/** Redis failed, or replied with something no script returns. */
export class RedisError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQREDIS', message, context);
  }
}

/**
 * A write sent with `durability: 'replicated'` was applied on the master, but Redis's `WAIT`
 * answered that fewer replicas than asked had it within the timeout: a failover now could lose
 * it. Every write echomq sends is harmless twice (enqueues by id or request key, settles by lease
 * token), so the caller sends it again; a consumer does so on its own. A Redis with no replica
 * answers every such write with this error, after the timeout (docs/design.md, "Durability").
 *
 * @example
 * try { await queue.add(job) } catch (e) { if (e instanceof ReplicationError) await queue.add(job) }
 */
export class ReplicationError extends EmqError {
  /** How many replicas acknowledged the write (the fewest, when several masters were written). */
  readonly acknowledged: number;
  /** How many were asked for. */
  readonly replicas: number;
  /** How long Redis waited for them, in ms. */
  readonly timeoutMs: number;

  constructor(message: string, context: EmqErrorContext & { acknowledged?: number; replicas?: number; timeoutMs?: number } = {}) {
    super('EMQREPLICA', message, context);
    this.acknowledged = context.acknowledged ?? 0;
    this.replicas = context.replicas ?? 1;
    this.timeoutMs = context.timeoutMs ?? 0;
  }
}

/**
 * The ReplicationError of a WAIT that answered `acknowledged` when `replicas` were asked for
 * within `timeoutMs`, at `endpoint`: what each transport throws.
 */
export function replicationShortfall(endpoint: string | undefined, acknowledged: number, replicas: number, timeoutMs: number): ReplicationError {
  const at = endpoint === undefined ? 'Redis' : `Redis at ${endpoint}`;
  return new ReplicationError(
    `${at} applied the write, but ${acknowledged} of ${replicas} replica(s) acknowledged it within ${timeoutMs} ms ` +
      `(durability 'replicated'): it is on the master only, and safe to send again`,
    { acknowledged, replicas, timeoutMs },
  );
}

/**
 * Why Redis could not be reached: the connection was refused, the host name did not resolve, the
 * credentials were refused, TLS failed, nothing answered in time, the connection was lost (and not
 * back in time), or the transport was closed.
 */
export type ConnectionFailure = 'refused' | 'dns' | 'auth' | 'tls' | 'timeout' | 'lost' | 'closed';

/**
 * Redis could not be reached: the message names the URL (never its password) and the cause, and
 * `reason` says which kind of cause. A RedisError (EMQREDIS, HTTP 503) like any other Redis
 * trouble, so code that retries on EMQREDIS retries on it too.
 *
 * @example
 * try { await queue.add(job) } catch (e) { if (e instanceof ConnectionError && e.reason === 'auth') process.exit(1) }
 */
export class ConnectionError extends RedisError {
  /** The Redis it tried to reach, without credentials. */
  readonly url: string;
  /** Which kind of cause: refused, dns, auth, tls, timeout, lost or closed. */
  readonly reason: ConnectionFailure;

  constructor(message: string, context: EmqErrorContext & { url: string; reason: ConnectionFailure }) {
    super(message, context);
    this.url = context.url;
    this.reason = context.reason;
  }
}

/**
 * A refused value as an error message shows it: a number as itself, anything else as its JSON, and
 * what JSON cannot show (a BigInt, a cycle, a symbol, a function, an object without a prototype)
 * as a short description. Never throws: a message about a bad value must not become a TypeError.
 *
 * @example
 * throw new InvalidArgumentError(`limit must be an integer, got ${shown(limit)}`); // got 10n, got "x", got [object]
 */
/**
 * The registry knows queue `name` otherwise than it was opened: partitioned with another count of
 * partitions, partitioned when opened without `partitions`, or unpartitioned when opened with them
 * (docs/design.md, "Partitioned queues"). Nothing was written.
 *
 * @example
 * try { await new Queue(transport, 'mail').add(job) } catch (e) { if (e instanceof PartitionError) console.log(e.message) }
 */
export class PartitionError extends EmqError {
  constructor(message: string, context?: EmqErrorContext) {
    super('EMQPARTITION', message, context);
  }
}

export function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {
    // a cycle, a BigInt inside, a toJSON that throws: described below
  }
  if (typeof value === 'symbol' || typeof value === 'function' || value === undefined) return String(value);
  return `[${typeof value}]`;
}

const SCRIPT_CODES = /^(EMQ[A-Z]+) (.*?)(?: script: [0-9a-f]+, on @user_script:\d+\.)?$/s;

/**
 * The typed error for an error a script or Redis replied with: `EMQKIND` and `EMQARG` become
 * their classes; anything else is a RedisError.
 */
export function fromReplyError(error: Error, context: EmqErrorContext): EmqError {
  const match = SCRIPT_CODES.exec(error.message.replace(/^ERR /, ''));
  if (match?.[1] === 'EMQKIND') return new KindError(match[2]!, { ...context, cause: error });
  if (match?.[1] === 'EMQARG') return new InvalidArgumentError(match[2]!, { ...context, cause: error });
  if (match?.[1] === 'EMQCONFLICT') return new IdempotencyConflictError(match[2]!, { ...context, cause: error });
  if (match?.[1] === 'EMQPARTITION') return new PartitionError(match[2]!, { ...context, cause: error });
  return new RedisError(error.message, { ...context, cause: error });
}
