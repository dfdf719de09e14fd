/**
 * BullMQ's Worker options, and the range checks BullMQ makes of them with its own messages: a
 * value BullMQ refuses is refused here the same way (docs/guides/bullmq.md, "Every option").
 */
import type { QueueBaseOptions } from './connection.js';
import type { KeepJobs } from './options.js';

/** BullMQ's Worker options; the guide's table says what each does here (docs/guides/bullmq.md). */
export interface WorkerOptions extends QueueBaseOptions {
  /** A name for the worker: accepted. */
  readonly name?: string;
  /** Start at once (default true); false: call `run()`. */
  readonly autorun?: boolean;
  /** Jobs processed at once (default 1): the Consumer's `concurrency`. */
  readonly concurrency?: number;
  /** At most `max` job starts in any `duration` ms, queue-wide: echomq's `setRateLimit`, set by `run()`. */
  readonly limiter?: {
    /** Starts allowed per window. */
    readonly max: number;
    /** The window, ms. */
    readonly duration: number;
  };
  /** A job's lease in ms (default 30,000): the Consumer's `leaseMs`. */
  readonly lockDuration?: number;
  /** How often leases are renewed (default half of it in BullMQ, a third here): the Consumer's `renewMs`. */
  readonly lockRenewTime?: number;
  /** The default of the jobs' own `removeOnComplete`. */
  readonly removeOnComplete?: boolean | number | KeepJobs;
  /** The default of the jobs' own `removeOnFail`. */
  readonly removeOnFail?: boolean | number | KeepJobs;
  /** Accepted (at least 0): a job whose lease lapses is reaped at its deadline, counted as an attempt. */
  readonly maxStalledCount?: number;
  /** Accepted (above 0): leases are reaped by their deadline, not by a periodic check. */
  readonly stalledInterval?: number;
  /** Accepted: nothing is checked periodically here. */
  readonly skipStalledCheck?: boolean;
  /** Not supported when true: throws (leases are always renewed while a processor runs). */
  readonly skipLockRenewal?: boolean;
  /** Accepted (above 0): an idle Worker parks on the queue's doorbell and wakes within a millisecond. */
  readonly drainDelay?: number;
  /** Accepted (echomq keeps a minute-by-minute count of the last hour itself). */
  readonly metrics?: {
    /** Accepted. */
    readonly maxDataPoints?: number;
  };
  /** Accepted. */
  readonly maximumRateLimitDelay?: number;
  /** Accepted (at least 0), not enforced: a job's attempts count its starts (`attempts`). */
  readonly maxStartedAttempts?: number;
  /** Accepted. */
  readonly runRetryDelay?: number;
  /** A custom backoff strategy throws: use 'fixed' or 'exponential', or RetryAfterError. */
  readonly settings?: {
    /** Throws UnsupportedBullMQError when set. */
    readonly backoffStrategy?: unknown;
  };
  /** Not supported when true: throws (sandboxed processors). */
  readonly useWorkerThreads?: boolean;
  /** Accepted: echomq traces with OpenTelemetry of its own. */
  readonly telemetry?: unknown;
}

/**
 * BullMQ's check of a Worker's concurrency, with its message.
 *
 * @example
 * checkConcurrency(0); // throws Error('concurrency must be a finite number greater than 0')
 */
export function checkConcurrency(concurrency: number): void {
  if (!Number.isFinite(concurrency) || concurrency <= 0) throw new Error('concurrency must be a finite number greater than 0');
}

/**
 * The range checks BullMQ's Worker constructor makes, with its messages (a plain Error, as
 * BullMQ throws), before anything is opened.
 *
 * @example
 * checkWorkerOptions({ drainDelay: 0 }); // throws Error('drainDelay must be greater than 0')
 */
export function checkWorkerOptions(opts: WorkerOptions): void {
  if (opts.concurrency !== undefined) checkConcurrency(opts.concurrency);
  if (opts.maxStalledCount !== undefined && !(opts.maxStalledCount >= 0)) throw new Error('maxStalledCount must be greater or equal than 0');
  if (opts.maxStartedAttempts !== undefined && !(opts.maxStartedAttempts >= 0)) throw new Error('maxStartedAttempts must be greater or equal than 0');
  if (opts.stalledInterval !== undefined && !(opts.stalledInterval > 0)) throw new Error('stalledInterval must be greater than 0');
  if (opts.drainDelay !== undefined && !(opts.drainDelay > 0)) throw new Error('drainDelay must be greater than 0');
}
