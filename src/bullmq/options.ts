/**
 * BullMQ's job options (`JobsOptions`) and how each becomes echomq's `EnqueueOptions`: one
 * translation, used by `Queue.add`, `addBulk`, `Job.create` and the flows. What echomq does not do
 * throws UnsupportedBullMQError naming the echomq way, before anything is written (the table:
 * docs/guides/bullmq.md).
 */
import type { BackoffOptions as EmqBackoff, EnqueueOptions } from '../job.js';
import { UnsupportedBullMQError } from './errors.js';

/** How many finished jobs to keep (BullMQ's `KeepJobs`): the newest `count`, those younger than `age` seconds, or both. */
export interface KeepJobs {
  /** Keep jobs finished at most this many seconds ago. */
  readonly age?: number;
  /** Keep at most this many, the newest. */
  readonly count?: number;
  /** BullMQ's cap on how many one cleanup deletes: accepted, cleanups here delete what is past the rule. */
  readonly limit?: number;
}

/** Backoff between attempts, as BullMQ spells it: `delay` in ms, `jitter` a fraction (default 0). */
export interface BackoffOptions {
  /** `fixed` or `exponential` (`delay * 2^(attemptsMade - 1)`); a custom strategy's name throws. */
  readonly type: 'fixed' | 'exponential' | (string & {});
  /** The base delay in ms (default 0). */
  readonly delay?: number;
  /** Take up to this fraction off each delay at random (0..1, default 0 as in BullMQ). */
  readonly jitter?: number;
}

/** BullMQ's deduplication: one job per `id` while it is unfinished, or for `ttl` ms. */
export interface DeduplicationOptions {
  /** The deduplication id (echomq's `dedupe.key`). */
  readonly id: string;
  /** Hold the id this many ms after the add (echomq's `dedupe.ttlMs`). */
  readonly ttl?: number;
  /** Debounce: a job of the id not yet started takes this add's data and delay (echomq's `dedupe.replace`). */
  readonly replace?: boolean;
  /** Not supported: throws. */
  readonly extend?: boolean;
  /** Not supported: throws. */
  readonly reschedule?: boolean;
  /** Not supported: throws. */
  readonly keepLastIfActive?: boolean;
}

/** A flow child's parent, as BullMQ names it (`queue` is `<prefix>:<queue name>`). */
export interface ParentOptions {
  /** The parent's id. */
  readonly id: string;
  /** The parent's qualified queue name. */
  readonly queue: string;
}

/**
 * BullMQ's options of one job. Every field BullMQ 6.7 declares is here; the guide's table says
 * what each one does on echomq (docs/guides/bullmq.md).
 *
 * @example
 * await queue.add('send', { to }, { jobId: `welcome-${userId}`, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, delay: 5_000 });
 */
export interface JobsOptions {
  /** The job's creation time (default: now); kept in `opts`, shown as `job.timestamp`. */
  readonly timestamp?: number;
  /** 0 (default) or 1..2097151, lower runs sooner: echomq's `priority`, the same scale. */
  readonly priority?: number;
  /** Run no sooner than this many ms from now: echomq's `delayMs`. */
  readonly delay?: number;
  /** Attempts before the job fails (default 1, BullMQ's): echomq's `maxAttempts`. */
  readonly attempts?: number;
  /** Backoff between attempts: ms (fixed) or options (default: none, retry at once). */
  readonly backoff?: number | BackoffOptions;
  /** Not supported: throws (echomq's lanes run first in, first out). */
  readonly lifo?: boolean;
  /** Delete the job once it completes: true, a count to keep, or KeepJobs. Applied by the Worker. */
  readonly removeOnComplete?: boolean | number | KeepJobs;
  /** Delete the job once it has failed for good: as removeOnComplete. Applied by the Worker. */
  readonly removeOnFail?: boolean | number | KeepJobs;
  /** Accepted: there are no job logs here (`job.log` throws), so nothing to keep. */
  readonly keepLogs?: number;
  /** Accepted: a failed job keeps its last error's stack (one entry of `stacktrace`). */
  readonly stackTraceLimit?: number;
  /** The largest `data`, in bytes of JSON: a larger one throws before any write, as in BullMQ. */
  readonly sizeLimit?: number;
  /** The job's id: the same id again adds nothing (echomq's `id`). Letters, digits and `._:-` here. */
  readonly jobId?: string;
  /** Not supported on `add`: throws (use FlowProducer). */
  readonly parent?: ParentOptions;
  /** Internal to BullMQ's schedulers: throws. */
  readonly repeatJobKey?: string;
  /** Internal to BullMQ's schedulers: accepted and kept in `opts`. */
  readonly prevMillis?: number;
  /** One job per id at a time (see DeduplicationOptions). */
  readonly deduplication?: DeduplicationOptions;
  /** Removed in BullMQ 6: throws BullMQ's error (use `deduplication`). */
  readonly debounce?: DeduplicationOptions;
  /** In a flow, this child's failure fails its parent (echomq's `onFailure: 'fail-parent'`); without a flag the parent waits (`wait`), as BullMQ's does. */
  readonly failParentOnFailure?: boolean;
  /** Not supported: throws (echomq's parent waits for every child). */
  readonly continueParentOnFailure?: boolean;
  /** In a flow, this child's failure is recorded and the parent runs (echomq's `onFailure: 'ignore'`). */
  readonly ignoreDependencyOnFailure?: boolean;
  /** In a flow, this child is dropped when it fails and the parent runs (echomq's `onFailure: 'remove'`). */
  readonly removeDependencyOnFailure?: boolean;
  /** Accepted: echomq traces with OpenTelemetry of its own (README, "Telemetry"). */
  readonly telemetry?: {
    /** Accepted. */
    readonly metadata?: string;
    /** Accepted. */
    readonly omitContext?: boolean;
  };
}

/** BullMQ's options for a bulk add's job: the same as `add`'s. */
export type BulkJobOptions = JobsOptions;

/** The longest backoff delay echomq's retry takes after growth: the exponential curve is never capped sooner. */
const UNCAPPED_MS = 2 ** 53 - 1;

/**
 * echomq's enqueue options for BullMQ's `opts`, or UnsupportedBullMQError for what echomq does
 * not do. Attempts default to BullMQ's 1 and backoff to none (retry at once), never echomq's
 * defaults (3, exponential from 1 s with jitter).
 *
 * @example
 * enqueueOptionsOf({ jobId: 'a', attempts: 3, backoff: 1000 });
 * // { id: 'a', maxAttempts: 3, backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } }
 */
export function enqueueOptionsOf(opts: JobsOptions): EnqueueOptions {
  checkAsBullMQ(opts);
  if (opts.lifo) throw new UnsupportedBullMQError('JobsOptions.lifo', 'echomq runs each lane first in, first out; use `priority` (lower runs sooner) to put a job ahead');
  if (opts.parent !== undefined) throw new UnsupportedBullMQError('JobsOptions.parent on add', 'add parent and children together with FlowProducer.add');
  if (opts.repeatJobKey !== undefined) throw new UnsupportedBullMQError('JobsOptions.repeatJobKey', 'use queue.upsertJobScheduler');
  if (opts.continueParentOnFailure) throw new UnsupportedBullMQError('JobsOptions.continueParentOnFailure', "a flow parent here waits for every child; use ignoreDependencyOnFailure (echomq's onFailure: 'ignore')");
  const dedupe = opts.deduplication;
  const attempts = opts.attempts ?? 1;
  return {
    // BullMQ ignores an empty jobId and numbers the job
    ...(opts.jobId !== undefined && opts.jobId !== '' ? { id: opts.jobId } : {}),
    ...(opts.delay !== undefined && opts.delay > 0 ? { delayMs: opts.delay } : {}),
    ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    maxAttempts: attempts,
    backoff: backoffOf(opts.backoff),
    ...(dedupe !== undefined ? { dedupe: dedupeOf(dedupe) } : {}),
  };
}

/** The flow flags of which BullMQ takes one at most. */
const EXCLUSIVE: ReadonlyArray<keyof JobsOptions> = ['removeDependencyOnFailure', 'failParentOnFailure', 'continueParentOnFailure', 'ignoreDependencyOnFailure'];

/** The largest priority BullMQ takes. */
const PRIORITY_LIMIT = 2 ** 21 - 1;

/**
 * BullMQ's own checks of a job's options, with BullMQ's messages (its `Job.validateOptions`), so
 * code that expects them sees them: the flow flags one at most, no integer or `:` jobId, an integer
 * priority up to 2^21 - 1, a deduplication id, no `debounce`, a jitter from 0 to 1.
 *
 * @example
 * checkAsBullMQ({ jobId: '42' }); // throws 'Custom Id cannot be integers'
 */
export function checkAsBullMQ(opts: JobsOptions): void {
  const exclusive = EXCLUSIVE.filter((o) => opts[o]);
  if (exclusive.length > 1) throw new Error(`The following options cannot be used together: ${exclusive.join(', ')}`);
  const { jobId } = opts;
  if (jobId === '0' || jobId?.startsWith('0:')) throw new Error("JobId cannot be '0' or start with '0:'");
  if (jobId) {
    if (`${Number.parseInt(jobId, 10)}` === jobId) throw new Error('Custom Id cannot be integers');
    if (jobId.includes(':') && jobId.split(':').length !== 3) throw new Error('Custom Id cannot contain :');
  }
  if (opts.priority) {
    if (Math.trunc(opts.priority) !== opts.priority) throw new Error('Priority should not be float');
    if (opts.priority > PRIORITY_LIMIT) throw new Error(`Priority should be between 0 and ${PRIORITY_LIMIT}`);
  }
  if (opts.deduplication) {
    if (!opts.deduplication.id) throw new Error('Deduplication id must be provided');
    if (opts.parent) throw new Error('Deduplication and parent options cannot be used together');
  }
  if (Object.prototype.hasOwnProperty.call(opts, 'debounce')) throw new Error('Debounce option has been removed. Use deduplication option instead');
  const { backoff } = opts;
  if (typeof backoff === 'object' && typeof backoff.jitter === 'number' && (backoff.jitter < 0 || backoff.jitter > 1)) {
    throw new Error('Jitter should be between 0 and 1');
  }
}

/** echomq's backoff for BullMQ's: none is a fixed 0 (BullMQ retries at once), jitter 0 unless given. */
export function backoffOf(backoff: JobsOptions['backoff']): EmqBackoff {
  if (backoff === undefined) return { type: 'fixed', delayMs: 0, jitter: 0 };
  if (typeof backoff === 'number') return { type: 'fixed', delayMs: backoff, jitter: 0 };
  const type: string = backoff.type;
  if (type !== 'fixed' && type !== 'exponential') {
    throw new UnsupportedBullMQError(`a custom backoff strategy ('${backoff.type}')`, "use 'fixed' or 'exponential', or throw RetryAfterError (echomq) from the processor with the exact delay");
  }
  const delayMs = backoff.delay ?? 0;
  return { type, delayMs, maxDelayMs: type === 'exponential' ? UNCAPPED_MS : delayMs, jitter: backoff.jitter ?? 0 };
}

function dedupeOf(d: DeduplicationOptions): NonNullable<EnqueueOptions['dedupe']> {
  if (d.extend) throw new UnsupportedBullMQError('deduplication.extend', 'a dedupe window here runs from the add that took it (`ttl`); add with `replace: true` to restart a waiting job');
  if (d.reschedule) throw new UnsupportedBullMQError('deduplication.reschedule', 'use `replace: true`, which restarts the waiting job\'s delay from this add');
  if (d.keepLastIfActive) throw new UnsupportedBullMQError('deduplication.keepLastIfActive', 'an add while the job of the id is active is a duplicate here; add again once it finishes');
  return { key: d.id, ...(d.ttl !== undefined ? { ttlMs: d.ttl } : {}), ...(d.replace ? { replace: true } : {}) };
}

/**
 * Checks `data` against `sizeLimit` as BullMQ does (bytes of its JSON), before any write.
 *
 * @example
 * checkSize('send', { to }, { sizeLimit: 1024 });
 */
export function checkSize(name: string, data: unknown, opts: JobsOptions): void {
  if (opts.sizeLimit === undefined) return;
  const size = Buffer.byteLength(JSON.stringify(data) ?? '', 'utf8');
  if (size > opts.sizeLimit) throw new Error(`The size of job ${name} exceeds the limit ${opts.sizeLimit} bytes`);
}
