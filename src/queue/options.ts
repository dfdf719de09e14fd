import type { DurabilityOptions } from '../durability.js';
import type { JobDefaults } from '../encode.js';
import type { EnqueueOptions, EnqueueResult, QueueCounts } from '../job.js';
import type { LastHour } from './last-hour.js';
import type { RateLimits } from './rate-limits.js';

/**
 * Options of a Queue. `durability` and `replicationTimeoutMs` (DurabilityOptions) say when its
 * enqueues count as done, and are the default of the consumers built on it.
 */
export interface QueueOptions extends DurabilityOptions {
  /** The largest payload accepted, in UTF-8 bytes of JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Defaults for jobs that do not say: max attempts (3) and backoff (exponential from 1 s). */
  readonly defaults?: Partial<JobDefaults>;
  /** How long a completed job stays readable, in ms (-1 forever, 0 not at all; default 1 hour). */
  readonly keepCompletedMs?: number;
  /**
   * The largest handler result stored, in UTF-8 bytes of JSON (default 64 KiB): a job whose result
   * is larger fails for good, saying so. Consumers built on this Queue use it unless given their own.
   */
  readonly maxResultBytes?: number;
  /** How long an idempotency key of the caller's is remembered, in ms (default 24 hours). */
  readonly idempotencyTtlMs?: number;
  /** close() also closes the transport (as `connectQueue` sets). Default false: a transport you pass in is yours. */
  readonly ownsTransport?: boolean;
  /**
   * Set by PartitionedQueue on each of its partitions' Queues (`mail~3`): the count its first
   * enqueue records for `mail` in the registry. Open a partitioned queue with PartitionedQueue.
   */
  readonly partitions?: number;
}

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
   * nothing (with other jobs: `IdempotencyConflictError`, EMQCONFLICT). Without one, the call
   * still runs at most once however its transport repeats the request.
   */
  readonly idempotencyKey?: string;
  /**
   * A W3C `traceparent` to continue when no span is active (the HTTP API passes its request's
   * header). Ignored when malformed (README, "Telemetry").
   */
  readonly traceparent?: string;
}

/**
 * One job of a bulk enqueue: its payload and the options `add` takes, side by side (the HTTP
 * API's bulk body has the same shape).
 *
 * @example
 * await queue.addBulk([{ payload: { to: 'a' } }, { payload: { to: 'b' }, group: 'tenant-1', delayMs: 5000 }]);
 */
export interface BulkJob<Payload> extends EnqueueOptions {
  /** What the handler gets as `job.payload`: anything JSON can carry. */
  readonly payload: Payload;
  /**
   * Not taken: a job's options go beside its payload. Typed `never` so code written for the
   * earlier nested form (`{payload, options: {...}}`) fails to compile; at run time it is an
   * InvalidArgumentError.
   */
  readonly options?: never;
}

/**
 * How to follow a queue's events (`Queue.events`, `Queue.eventEntries`).
 *
 * @example
 * const stop = new AbortController();
 * for await (const e of queue.events({ after: '0', signal: stop.signal })) console.log(e.event);
 */
export interface EventsOptions {
  /** Start after this entry id (exclusive), or `'0'` for the start of what the stream keeps; default: from now. */
  readonly after?: string;
  /** Ends the iteration, between two entries; so does `break`. */
  readonly signal?: AbortSignal;
  /** On a transport that cannot park (Upstash, the Worker): how often to read an idle stream, in ms (default 1000). */
  readonly pollMs?: number;
}

/**
 * How long to wait for a job (`Queue.waitFor`, `addAndWait`).
 *
 * @example
 * const result = await queue.waitFor(id, { timeoutMs: 5_000 });
 */
export interface WaitForOptions {
  /** The longest wait, in ms (default 30,000); then WaitTimeoutError (EMQTIMEOUT). */
  readonly timeoutMs?: number;
  /** Ends the wait: it rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** How often to read when nothing can be parked on, in ms (default 1000). */
  readonly pollMs?: number;
}

/** `addAndWait`'s options: `add`'s, `waitFor`'s, and a hook between the two. */
export interface AddAndWaitOptions extends Omit<EnqueueOptions, 'timeoutMs'>, RequestOptions, WaitForOptions {
  /** The job's own handler timeout (`EnqueueOptions.timeoutMs`), since here `timeoutMs` is the wait's. */
  readonly jobTimeoutMs?: number;
  /** Called once the job is written (or found a duplicate), before the wait: the HTTP API starts the Worker's drain here. */
  readonly onAdded?: (added: EnqueueResult) => void;
}

/** What `addAndWait` resolves to: the job and what its handler returned. */
export interface JobOutcome {
  /** The job, `JOB:...`. */
  readonly id: string;
  /** Its result (its handler's resolved value, parsed from its JSON; undefined for none). */
  readonly result: unknown;
}

/** A queue's state at a glance. */
export interface QueueStats {
  /** The queue's name. */
  readonly queue: string;
  /** Whether it is paused (`pause()`): nothing is claimed until `resume()`. */
  readonly paused: boolean;
  /** Its jobs per state. */
  readonly counts: QueueCounts;
  /** Its rate limits, the queue's and its groups', and what is throttled now. */
  readonly rateLimits: RateLimits;
  /** Its jobs completed and sent to dead in each minute of the last hour, by the server's clock. */
  readonly lastHour: LastHour;
}
