import type { ChildOutcome, ChildrenCount, ParentRef } from './flows/flow.js';
import type { StepRecord } from './steps/steps.js';

/**
 * Where a job stands. A completed row stays readable for the queue's `keepCompletedMs`. `waiting`:
 * a flow parent waiting for its children (`Flows.add`), or a job waiting for the child its
 * `step.invoke` ran; `awaiting`: a job whose `step.waitForEvent` waits for an event; `cancelled`:
 * ended by `queue.cancel` (terminal, like completed and dead: nothing failed).
 */
export type JobState = 'pending' | 'scheduled' | 'active' | 'completed' | 'dead' | 'waiting' | 'awaiting' | 'cancelled';

/** The states a job ends in: nothing moves it on from one (`clean` deletes them). */
export type FinishedState = 'completed' | 'dead' | 'cancelled';

/** How long to wait before retrying a failed attempt. */
export interface BackoffOptions {
  /** `fixed`: always `delayMs`; `exponential`: `delayMs * 2^(attempt - 1)`. */
  readonly type: 'fixed' | 'exponential';
  /** The base delay in ms (>= 0). */
  readonly delayMs: number;
  /** The longest delay in ms, after growth (default 1 hour). */
  readonly maxDelayMs?: number;
  /** Take off up to this fraction of the delay at random, so retries spread out (0..1, default 0.2). */
  readonly jitter?: number;
}

/** Options for one job at enqueue. */
export interface EnqueueOptions {
  /**
   * The job's id, for idempotent enqueue: the same id again writes nothing and reports a
   * duplicate. Letters, digits and `._:-`, at most 200; it becomes `JOB:<id>`. Default: a fresh
   * `JOB:<sequence>`.
   */
  readonly id?: string;
  /** The group whose lane the job joins: groups share the queue fairly and may have limits. */
  readonly group?: string;
  /** Run no sooner than this many ms from now (server time). */
  readonly delayMs?: number;
  /** Run no sooner than this instant (epoch ms or a Date). */
  readonly runAt?: number | Date;
  /** Lower runs first among claimable jobs of the same lane (0..2097151, default 0). */
  readonly priority?: number;
  /** Attempts before the job is dead (>= 1, default 3). */
  readonly maxAttempts?: number;
  /** Backoff between attempts: a fixed delay in ms, or options (default exponential from 1 s). */
  readonly backoff?: number | BackoffOptions;
  /**
   * A deduplication window (README, "Deduplication and debounce"): while a job added with the same
   * key is unfinished (or, with `ttlMs`, for that long after it was added), this add is a
   * `duplicate` of it; with `replace`, a job of the key not yet started takes this add's payload
   * and delay instead (`replaced`). Not with `id`, which is a deduplication of its own.
   */
  readonly dedupe?: DedupeOptions;
  /**
   * The job's own timeout, in ms (an integer >= 1), over the consumer's `timeoutMs`: its handler's
   * signal aborts with JobTimeoutError at the deadline and the attempt fails as a retry (the
   * handler's later result is not recorded: its lease settled as a retry). On the edge, a beat
   * does not start a job whose timeout cannot end before the beat's deadline: it gives it back.
   */
  readonly timeoutMs?: number;
  /**
   * Expire the job this many ms after the add (an integer >= 1), by the server's clock: not started
   * by then, it never starts; it goes to dead with EMQEXPIRED (docs/guides/job-controls.md). A job
   * started in time runs, and its retries too. Not with `expireAt`.
   */
  readonly expireAfterMs?: number;
  /** Expire the job at this time (epoch ms or a Date), by the server's clock: as `expireAfterMs`. */
  readonly expireAt?: number | Date;
  /**
   * Concurrency keys the job counts against beside its group (1 to 4 names: letters, digits,
   * `._:-`, as `org:7`): it starts only while every key it names is under its limit
   * (`queue.setKeyLimit`); a key without a limit does not hold it back (docs/guides/job-controls.md).
   * Not on a partitioned queue (a key spans groups, which live in different slots).
   */
  readonly keys?: readonly string[];
}

/**
 * A deduplication key and its window (`EnqueueOptions.dedupe`).
 *
 * @example
 * // one reindex per document at a time; a later edit replaces the waiting one and starts its 2 s again
 * await queue.add({ doc }, { delayMs: 2_000, dedupe: { key: `reindex:${doc}`, replace: true } });
 */
export interface DedupeOptions {
  /** The key: 1 to 256 characters, no control characters. Stored as `emq:{q}:dd:<key>`. */
  readonly key: string;
  /**
   * How long the key holds after the add that took it, in ms (an integer >= 1), even when the job
   * finishes sooner. Default: until the job completes or dies.
   */
  readonly ttlMs?: number;
  /**
   * Debounce: when the job holding the key has not started (pending or scheduled, never claimed),
   * it takes this add's payload, and its delay starts again from now (this add's `delayMs` or
   * `runAt`; none: claimable now), keeping its id, group and order. The key's window becomes this
   * add's. Once it has started, this add is a duplicate. Default false.
   */
  readonly replace?: boolean;
}

/** The result of adding one job. */
export interface EnqueueResult {
  /** `JOB:` and the id given, or the one made for it: what every other call takes. */
  readonly id: string;
  /**
   * Where the job went; `duplicate` when a job with that id, or holding that dedupe key, exists
   * (nothing written: `id` is that job's); `replaced` when that job took this add's payload and
   * delay (`dedupe.replace`; `id` is its id).
   */
  readonly state: 'pending' | 'scheduled' | 'duplicate' | 'replaced';
}

/**
 * A job handed to a handler: claimed under a lease, fenced by `token`.
 *
 * @example
 * const handler: Handler<{ to: string }> = async (job) => {
 *   if (job.attempt === job.maxAttempts) log(`last try for ${job.id}`);
 *   await send(job.payload.to);
 * };
 */
export interface Job<Payload = unknown> {
  /** `JOB:` and the id given at enqueue, or the one made for it: what every other call takes. */
  readonly id: string;
  /** What was enqueued, parsed from its JSON. */
  readonly payload: Payload;
  /**
   * Which attempt this run is: 1 on the first claim since the enqueue (or the last reprocess),
   * counting every claim that ran, a lease that lapsed included. The job is dead when an attempt
   * fails with `attempt >= maxAttempts`.
   */
  readonly attempt: number;
  /** Attempts allowed per run (since the enqueue or a reprocess). */
  readonly maxAttempts: number;
  /** The group whose lane it came from, if any. */
  readonly group: string | undefined;
  /**
   * The lease token: unique in the queue (not a count of anything), carried by every settle call
   * about this job, so a holder whose lease was taken over changes nothing.
   */
  readonly token: number;
  /** When the job was enqueued (server time, epoch ms). */
  readonly createdAt: number;
  /** When the lease ends unless extended (server time, epoch ms). */
  readonly leaseUntil: number;
  /**
   * The W3C traceparent of the span that enqueued it, when there was one (README, "Telemetry"):
   * the parent of its `process` span, for a consumer of your own to continue the trace.
   */
  readonly traceparent?: string | undefined;
  /** The scheduler that fired it and the slot (epoch ms) it was fired for, when a scheduler did. */
  readonly scheduler?: FiredBy | undefined;
  /** A flow child's parent (`Flows.add`), when it is one. */
  readonly parent?: ParentRef | undefined;
  /**
   * A flow parent's children, as they stood when it was claimed: each one's queue, id, state and
   * result (or error, for one that failed with `onFailure: 'ignore'`). Undefined for a job that
   * is not a flow parent.
   *
   * @example
   * const pages = job.children!.filter((c) => c.state === 'completed').map((c) => c.result as Page);
   */
  readonly children?: ChildOutcome[] | undefined;
  /**
   * The durable steps its earlier runs recorded (`context.step`: docs/guides/steps.md), as they
   * stood when it was claimed; undefined for a job that has none.
   */
  readonly steps?: StepRecord[] | undefined;
  /** Its own timeout in ms (`EnqueueOptions.timeoutMs`), over the consumer's; undefined for none. */
  readonly timeoutMs?: number | undefined;
}

/** The scheduler that fired a job and its slot (`Queue.upsertScheduler`). */
export interface FiredBy {
  /** The scheduler's id. */
  readonly id: string;
  /** The slot it was fired for (server time, epoch ms): its id is `JOB:<id>@<slot>`. */
  readonly slot: number;
}

/**
 * A job as read back from its row: what `getJob` and `listDead` return, and, with its undefined
 * fields left out, what the HTTP API shows (`JSON.stringify` of a record is the HTTP job).
 *
 * @example
 * const job = await queue.getJob('welcome-a');
 * if (job?.state === 'dead') console.log(`dead after attempt ${job.attempt} of ${job.maxAttempts}: ${job.error}`);
 */
export interface JobRecord<Payload = unknown, Result = unknown> {
  /** `JOB:` and the id given at enqueue, or the one made for it. */
  readonly id: string;
  /** Where the job stands now. */
  readonly state: JobState;
  /** What was enqueued, parsed from its JSON. */
  readonly payload: Payload;
  /** The group whose lane it belongs to, if any. */
  readonly group: string | undefined;
  /** Lower runs first among claimable jobs of its lane (default 0). */
  readonly priority: number;
  /**
   * The latest attempt of this run: claims since the enqueue or the last reprocess, 0 before the
   * first. The same count a handler sees as `Job.attempt`; compare it with `maxAttempts`.
   */
  readonly attempt: number;
  /** Attempts allowed per run. */
  readonly maxAttempts: number;
  /**
   * Every claim that ran, across every run (reprocesses do not reset it): BullMQ's
   * `attemptsStarted`. A claim given back unstarted (`release`) is not counted.
   */
  readonly attemptsStarted: number;
  /** Backoff between attempts, with the queue's defaults filled in. */
  readonly backoff: BackoffOptions;
  /** The last error an attempt ended with. */
  readonly error: string | undefined;
  /** When it was enqueued (server time, epoch ms). */
  readonly createdAt: number;
  /** When it completed or died. */
  readonly finishedAt: number | undefined;
  /** Its lease deadline, while active. */
  readonly leaseUntil: number | undefined;
  /** Its due time, while scheduled. */
  readonly runAt: number | undefined;
  /**
   * What its handler resolved with, parsed from its JSON, once completed (kept as long as the
   * completed row: the queue's `keepCompletedMs`); undefined when the handler returned nothing.
   */
  readonly result: Result | undefined;
  /**
   * The last progress a run reported (`context.progress`): a number from 0 to 100 or a small JSON
   * value; kept through completion, retries and death until a later report replaces it.
   * Undefined when none was reported.
   */
  readonly progress: unknown;
  /** The scheduler that fired it and its slot, when a scheduler did (`Queue.upsertScheduler`). */
  readonly scheduler?: FiredBy | undefined;
  /** A flow child's parent, when it is one (`Flows.add`). */
  readonly parent?: ParentRef | undefined;
  /** A flow parent's children: each one's queue, id, state and result or error. */
  readonly children?: ChildOutcome[] | undefined;
  /** A flow parent's count of its children: how many it waits for, how many have finished. */
  readonly flow?: ChildrenCount | undefined;
  /** Its durable steps, in order (docs/guides/steps.md); undefined for a job that recorded none. */
  readonly steps?: StepRecord[] | undefined;
  /** While it waits for an event (`awaiting`), when its wait times out (server ms); undefined for no timeout. */
  readonly timeoutAt?: number | undefined;
  /** Its own handler timeout in ms (`EnqueueOptions.timeoutMs`); undefined for the consumer's. */
  readonly timeoutMs?: number | undefined;
  /**
   * Why it was cancelled (`queue.cancel`): on a `cancelled` job, and on an `active` one whose cancel
   * was asked and whose run has not ended yet (docs/guides/job-controls.md). Undefined otherwise.
   */
  readonly cancelReason?: string | undefined;
  /** Its concurrency keys (`EnqueueOptions.keys`); undefined for none. */
  readonly keys?: string[] | undefined;
  /** When it expires unless started by then (server ms: `expireAfterMs`, `expireAt`); undefined for none. */
  readonly expiresAt?: number | undefined;
}

/** How many jobs are in each state. */
export interface QueueCounts {
  /** Claimable now (their queue or group may be paused or at its limit). */
  readonly pending: number;
  /** Waiting for a due time: delayed, or a retry's backoff. */
  readonly scheduled: number;
  /** Leased to a consumer. */
  readonly active: number;
  /** Attempts used up or failed for good, until removed or reprocessed. */
  readonly dead: number;
  /** Jobs completed since the queue began (a counter: completed rows expire). */
  readonly completed: number;
  /** Flow parents waiting for their children (`Flows.add`), and jobs waiting for an invoked child. */
  readonly waiting: number;
  /** Jobs waiting for an event (`step.waitForEvent`). */
  readonly awaiting: number;
  /** Scheduled jobs in a durable sleep (`step.sleep`): counted in `scheduled` too. */
  readonly sleeping: number;
  /** Jobs ended by a cancel (`queue.cancel`), until removed or cleaned. */
  readonly cancelled: number;
}

/**
 * How long a queue keeps its dead jobs and how many: a setting stored with the queue, applied by
 * whichever runtime buries a job (each burial deletes at most two of the oldest dead jobs past
 * it). null: no limit of that kind. Both null (the default): dead jobs stay until removed,
 * cleaned or reprocessed.
 */
export interface DeadRetention {
  /** The most ms a dead job is kept after it died. */
  readonly maxAgeMs: number | null;
  /** The most dead jobs kept: past it, the oldest go first. */
  readonly maxCount: number | null;
}

/** Which jobs a page lists: `limit` (1 to 1000, default 50) from `offset` (default 0). */
export interface PageOptions {
  /** How many jobs of the state's order to skip (default 0). */
  readonly offset?: number;
  /** How many jobs at most, 1 to 1000 (default 50). */
  readonly limit?: number;
}
