import {
  DEFAULT_JOB_DEFAULTS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  decodeBackoff,
  encodeBackoff,
  encodeJob,
  type JobDefaults,
  toJobId,
} from './encode.js';
import { InvalidArgumentError, JobNotFoundError, JobStateError } from './errors.js';
import type { EnqueueOptions, EnqueueResult, JobRecord, JobState, QueueCounts } from './job.js';
import { assertName } from './keyspace.js';
import { type EnqueueRequest, type ScriptOp, Scripts } from './scripts.js';
import type { Transport } from './transport.js';
import { randomHex } from './random-hex.js';

/** Options of a Queue. */
export interface QueueOptions {
  /** The largest payload accepted, in UTF-8 bytes of JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Defaults for jobs that do not say: max attempts (3) and backoff (exponential from 1 s). */
  readonly defaults?: Partial<JobDefaults>;
  /** How long a completed job stays readable, in ms (-1 forever, 0 not at all; default 1 hour). */
  readonly keepCompletedMs?: number;
  /** How long an idempotency key of the caller's is remembered, in ms (default 24 hours). */
  readonly idempotencyTtlMs?: number;
}

/** How long a key the core makes for one enqueue call is remembered: longer than any transport retries a request. */
const OWN_REQUEST_TTL_MS = 120_000;
const CALLER_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * What makes one call to `add` or `addBulk` safe to repeat.
 *
 * @example
 * await queue.add({ to }, { idempotencyKey: `welcome-${userId}` }); // a retry after a timeout is the same enqueue
 */
export interface RequestOptions {
  /**
   * A key of yours for this call (letters, digits and `._:-`, at most 200): the same key again,
   * within the queue's `idempotencyTtlMs`, answers what the first call answered and writes
   * nothing (with other jobs: `IdempotencyConflictError`, EMQCONFLICT), so a retry after an
   * ambiguous failure is safe even for jobs without an id. Without one, the call still runs at
   * most once however its transport repeats the request (a key of its own, kept two minutes).
   */
  readonly idempotencyKey?: string;
}

/**
 * One job of a bulk enqueue: its payload and the options `add` takes, side by side. The same shape
 * as a job in the HTTP API's bulk body, so `JSON.stringify({ jobs })` is that body.
 *
 * @example
 * await queue.addBulk([{ payload: { to: 'a' } }, { payload: { to: 'b' }, group: 'tenant-1', delayMs: 5000 }]);
 */
export interface BulkJob<Payload> extends EnqueueOptions {
  /** What the handler gets as `job.payload`: anything JSON can carry. */
  readonly payload: Payload;
  /**
   * Not taken: a job's options go beside its payload. Typed `never` so code written for the
   * earlier nested form (`{payload, options: {...}}`) fails to compile instead of
   * enqueueing without its options; at run time it is an InvalidArgumentError.
   */
  readonly options?: never;
}

/** A queue's state at a glance. */
export interface QueueStats {
  /** The queue's name. */
  readonly queue: string;
  /** Whether it is paused (`pause()`): nothing is claimed until `resume()`. */
  readonly paused: boolean;
  /** Its jobs per state. */
  readonly counts: QueueCounts;
}

const BULK_CHUNK = 1000;
const STATES: readonly JobState[] = ['pending', 'scheduled', 'active', 'completed', 'dead'];

const optionalNumber = (value: string | undefined): number | undefined =>
  value === undefined ? undefined : Number(value);

/**
 * A queue: produce jobs, inspect them and control them. The same class runs on Node and in a
 * Worker: it only needs a Transport. Consumers run on its lease protocol (`Leases`).
 *
 * @example
 * const queue = new Queue<{ to: string }>(transport, 'mail');
 * const { id } = await queue.add({ to: 'a@example.com' }, { group: 'tenant-1', delayMs: 5000 });
 */
export class Queue<Payload = unknown> {
  /** The queue's name: letters, digits and `._-`, at most 128. */
  readonly name: string;
  /** How long a completed job stays readable, in ms (see QueueOptions). */
  readonly keepCompletedMs: number;
  private readonly scripts: Scripts;
  private readonly defaults: JobDefaults;
  private readonly maxPayloadBytes: number;
  private readonly idempotencyTtlMs: number;
  /** This Queue's own request keys: a random prefix (96 bits, once) and a count, cheaper than randomness per call. */
  private readonly requestPrefix = randomHex();
  private requestCount = 0;
  /** Whether this Queue has recorded its name in the registry (done with its first enqueue). */
  private registered = false;

  constructor(
    /** The transport this queue (and the consumers built on it) talks to Redis through. */
    readonly transport: Transport,
    name: string,
    options: QueueOptions = {},
  ) {
    assertName('queue', name);
    this.name = name;
    this.scripts = new Scripts(transport, name);
    this.defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
    encodeBackoff(this.defaults.backoff);
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isSafeInteger(this.maxPayloadBytes) || this.maxPayloadBytes < 1) {
      throw new InvalidArgumentError(`maxPayloadBytes must be a positive integer, got ${this.maxPayloadBytes}`);
    }
    this.idempotencyTtlMs = options.idempotencyTtlMs ?? 86_400_000;
    if (!Number.isSafeInteger(this.idempotencyTtlMs) || this.idempotencyTtlMs < 1) {
      throw new InvalidArgumentError(`idempotencyTtlMs must be an integer >= 1, got ${this.idempotencyTtlMs}`);
    }
    this.keepCompletedMs = options.keepCompletedMs ?? 3_600_000;
    if (!Number.isSafeInteger(this.keepCompletedMs) || this.keepCompletedMs < -1) {
      throw new InvalidArgumentError(`keepCompletedMs must be an integer >= -1, got ${this.keepCompletedMs}`);
    }
  }

  /**
   * Adds one job. A bad payload or option throws a typed error and writes nothing. However the
   * request is repeated (a lost reply its transport retries), it is one job.
   */
  async add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    const job = encodeJob(payload, options, this.defaults, this.maxPayloadBytes);
    const request = this.requestKey(options?.idempotencyKey);
    const [result] = (await this.enqueue([this.scripts.enqueueOp([job], request)]))[0]!;
    return result!;
  }

  /**
   * Adds many jobs in one round trip (one script call per 1000), each `{payload, ...options}`.
   * Every job is validated first: one bad job throws and nothing is written. Resolves with one
   * result per job, in order, as `add` would answer it.
   *
   * @example
   * const results = await queue.addBulk([{ payload: 1 }, { payload: 2, id: 'two', priority: 1 }]);
   * // [{ id: 'JOB:1', state: 'pending' }, { id: 'JOB:two', state: 'pending' }]
   */
  async addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions = {}): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('addBulk takes an array of {payload, ...options}');
    const request = this.requestKey(options.idempotencyKey);
    const encoded = jobs.map((job, index) => {
      try {
        if (typeof job !== 'object' || job === null) throw new InvalidArgumentError('a bulk job is an object {payload, ...options}');
        // the earlier nested form would otherwise enqueue with every option silently dropped
        if ('options' in job) {
          throw new InvalidArgumentError('a bulk job takes its options beside the payload, {payload, group, delayMs, ...}, not under `options`');
        }
        return encodeJob(job.payload, job, this.defaults, this.maxPayloadBytes);
      } catch (error) {
        if (error instanceof Error) error.message = `job ${index}: ${error.message}`;
        throw error;
      }
    });
    if (encoded.length === 0) return [];
    const ops: Array<ScriptOp<EnqueueResult[]>> = [];
    for (let i = 0; i < encoded.length; i += BULK_CHUNK) {
      // each script call of the request is a request of its own to the scripts
      const part = i === 0 ? request : { ...request, key: `${request.key}:${i / BULK_CHUNK}` };
      ops.push(this.scripts.enqueueOp(encoded.slice(i, i + BULK_CHUNK), part));
    }
    return (await this.enqueue(ops)).flat();
  }

  /** The request key of one enqueue call: the caller's, or one of its own. */
  private requestKey(idempotencyKey: string | undefined): EnqueueRequest {
    if (idempotencyKey === undefined) {
      return { key: `a:${this.requestPrefix}${(this.requestCount++).toString(36)}`, ttlMs: OWN_REQUEST_TTL_MS, callerKey: false };
    }
    if (typeof idempotencyKey !== 'string' || !CALLER_KEY.test(idempotencyKey)) {
      throw new InvalidArgumentError(`idempotencyKey must be 1 to 200 letters, digits, '.', '_', ':' or '-', got ${JSON.stringify(idempotencyKey)}`);
    }
    return { key: `k:${idempotencyKey}`, ttlMs: this.idempotencyTtlMs, callerKey: true };
  }

  /** Runs enqueue ops, registering the queue's name in the same round trip the first time. */
  private async enqueue(ops: Array<ScriptOp<EnqueueResult[]>>): Promise<EnqueueResult[][]> {
    if (this.registered) return this.scripts.runOps(ops);
    const [, ...results] = await this.scripts.runOps([this.scripts.registerOp(), ...ops] as const);
    this.registered = true;
    return results as EnqueueResult[][];
  }

  /** One job, or null when there is no such job (or its completed row expired). */
  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    const jobId = toJobId(id);
    const row = await this.scripts.run(this.scripts.getJobOp(jobId));
    return row && this.decodeRow(jobId, row);
  }

  /** Counts per state and the paused flag. */
  async stats(): Promise<QueueStats> {
    const { paused, pending, scheduled, active, dead, completed } = await this.scripts.run(this.scripts.countsOp());
    return { queue: this.name, paused, counts: { pending, scheduled, active, dead, completed } };
  }

  /** Dead jobs, most recent first. */
  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
    }
    const entries = await this.scripts.run(this.scripts.listDeadOp(offset, limit));
    return entries.map(({ id, row }) => this.decodeRow(id, row));
  }

  /** Removes a job in any state. Throws JobNotFoundError when there is none. */
  async remove(id: string): Promise<void> {
    const jobId = toJobId(id);
    if (!(await this.scripts.run(this.scripts.removeOp(jobId)))) {
      throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    }
  }

  /** Puts a dead job back to be claimed, with a fresh allowance of attempts. */
  async reprocess(id: string): Promise<void> {
    const jobId = toJobId(id);
    const code = await this.scripts.run(this.scripts.reprocessOp(jobId));
    if (code === 0) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    if (code < 0) throw new JobStateError(`job ${jobId} is not dead`, { jobId });
  }

  /** Moves a pending job into `group`'s lane, or out of any group with null. */
  async moveToGroup(id: string, group: string | null): Promise<void> {
    const jobId = toJobId(id);
    if (group !== null) assertName('group', group);
    const code = await this.scripts.run(this.scripts.moveGroupOp(jobId, group ?? ''));
    if (code === 0) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    if (code < 0) throw new JobStateError(`job ${jobId} is not pending`, { jobId });
  }

  /** Stops handing out work; active jobs finish. Resolves false when it was already paused. */
  async pause(): Promise<boolean> {
    return this.scripts.run(this.scripts.pauseOp());
  }

  /** Hands out work again. Resolves false when it was not paused. */
  async resume(): Promise<boolean> {
    return this.scripts.run(this.scripts.resumeOp());
  }

  /** Stops handing out `group`'s work; its active jobs finish. */
  async pauseGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(this.scripts.pauseGroupOp(group));
  }

  /** Hands out `group`'s work again. */
  async resumeGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(this.scripts.resumeGroupOp(group));
  }

  /** At most `limit` of `group`'s jobs active at once; null lifts the limit. */
  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    assertName('group', group);
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new InvalidArgumentError(`a group limit must be an integer >= 0 or null, got ${String(limit)}`);
    }
    await this.scripts.run(this.scripts.groupLimitOp(group, limit));
  }

  /** The counted sweep: recounts `group`'s active jobs and repairs its stored count. */
  async sweepGroup(group: string): Promise<{
    /** The active count Redis held before. */
    stored: number;
    /** The active jobs of the group counted now: what is stored after. */
    counted: number;
  }> {
    assertName('group', group);
    return this.scripts.run(this.scripts.sweepGroupOp(group));
  }

  private decodeRow(id: string, row: Record<string, string>): JobRecord<Payload> {
    const state = STATES.includes(row.s as JobState) ? (row.s as JobState) : 'pending';
    return {
      id,
      state,
      payload: JSON.parse(row.d ?? 'null') as Payload,
      group: row.g,
      priority: Number(row.p ?? 0),
      attempt: Number(row.a ?? 0) - Number(row.z ?? 0),
      maxAttempts: Number(row.m ?? 0),
      attemptsStarted: Number(row.a ?? 0),
      backoff: decodeBackoff(row.b),
      error: row.e,
      createdAt: Number(row.c ?? 0),
      finishedAt: optionalNumber(row.f),
      leaseUntil: optionalNumber(row.l),
      runAt: optionalNumber(row.r),
    };
  }
}
