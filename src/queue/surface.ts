import type { EventsPage, EventsSettings, QueueEvent, ReadEventsOptions } from '../events/events.js';
import type { EventBatch } from '../events/subscribe.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, FinishedState, JobRecord, JobState, PageOptions } from '../job.js';
import type { SchedulerJob, SchedulerRecord, SchedulerSpec, UpsertSchedulerResult } from '../schedulers/schedulers.js';
import type { Replication, Transport } from '../transport.js';
import type { SendEventOptions, SentEvent } from '../steps/steps.js';
import type { GroupsOptions, GroupsPage } from './groups.js';
import type { AddAndWaitOptions, BulkJob, EventsOptions, JobOutcome, QueueStats, RequestOptions, WaitForOptions } from './options.js';
import type { RateLimit, RateLimits } from './rate-limits.js';
import type { CancelJobsOptions, CancelJobsResult, CancelOptions, CancelResult } from './cancels.js';
import type { KeyInfo } from './key-limits.js';

/** What `sweepGroup` found and repaired. */
export interface GroupSweep {
  /** The active count Redis held before. */
  readonly stored: number;
  /** The active jobs of the group counted now: what is stored after. */
  readonly counted: number;
}

/**
 * A queue's public surface, declared once: what every queue answers, a `Queue` (one slot of a
 * Redis Cluster) and a `PartitionedQueue` (N of them) alike, so the HTTP API, the CLI and the
 * consumers serve any queue by name without asking which kind it is. A partitioned queue answers
 * each call across its partitions: by id in the partition holding the job, by group in the
 * group's, listings merged in the state's order, counts summed, settings on every partition
 * (docs/design.md, "Partitioned queues"). What owns a stream, a `QueuePartition`, adds the
 * readers of that one stream.
 *
 * @example
 * const queue: QueueSurface<{ to: string }> = await openQueue(transport, 'mail');
 * await queue.add({ to: 'a@example.com' }, { group: 'tenant-1' });
 */
export interface QueueSurface<Payload = unknown> {
  /** The queue's name: letters, digits and `._-`, at most 128. */
  readonly name: string;
  /** The transport it (and the consumers built on it) talks to Redis through. */
  readonly transport: Transport;
  /**
   * What its enqueues wait for after Redis ran them, and the consumers built on it after their
   * settles: a replica (`durability: 'replicated'`), or nothing (undefined, the default).
   */
  readonly replication: Replication | undefined;
  /** How long a completed job stays readable, in ms (see QueueOptions). */
  readonly keepCompletedMs: number;
  /** The largest handler result stored, in UTF-8 bytes of JSON (see QueueOptions). */
  readonly maxResultBytes: number;
  /** How many partitions it spans: 1 for a Queue. */
  readonly partitions: number;
  /** Its partitions, partition `i` at index `i`: a Queue's is itself alone. Each owns one events stream. */
  readonly parts: ReadonlyArray<QueuePartition<Payload>>;
  /**
   * The partition a job just added went to (`id` its answer, `group` its group): a Queue's is
   * itself. Where its events are (a job's timeline, the drain of the partition it joined).
   */
  partitionOfAdded(id: string, group?: string | null): QueuePartition<Payload>;

  /**
   * Adds one job. A bad payload or option throws a typed error and writes nothing. However the
   * request is repeated (a lost reply its transport retries), it is one job. With `dedupe`, a job
   * holding the key makes this add a `duplicate` (or, with `replace`, takes its payload and delay:
   * `replaced`), answered with that job's id.
   *
   * @example
   * await queue.add({ doc: 7 }, { delayMs: 2_000, dedupe: { key: 'reindex:7', replace: true } });
   */
  add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult>;
  /**
   * Adds many jobs in one round trip (one script call per 1000; a partitioned queue sends each
   * partition's share at once), each `{payload, ...options}`. Every job is validated first: one
   * bad job throws and nothing is written. Resolves with one result per job, in order, as `add`
   * would answer it; jobs with the same dedupe key behave as adds one after the other.
   *
   * @example
   * const results = await queue.addBulk([{ payload: 1 }, { payload: 2, id: 'two', priority: 1 }]);
   * // [{ id: 'JOB:1', state: 'pending' }, { id: 'JOB:two', state: 'pending' }]
   */
  addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options?: RequestOptions): Promise<EnqueueResult[]>;
  /**
   * Adds a job and waits for it (`add`, then `waitFor`): resolves to its id and result, rejects
   * as `waitFor` does. The stream's position is taken before the add, so a job that finishes at
   * once is not missed; a duplicate waits for the job that has the id or key.
   *
   * @example
   * const { id, result } = await queue.addAndWait({ to: 'a@example.com' }, { timeoutMs: 10_000 });
   */
  addAndWait(payload: Payload, options?: AddAndWaitOptions): Promise<JobOutcome>;
  /**
   * Waits for a job to finish: resolves to its result; rejects with JobFailedError (EMQFAILED,
   * the job's error in `jobError`) when it ends dead, WaitTimeoutError (EMQTIMEOUT) after
   * `timeoutMs`, JobNotFoundError when there is no such job (or it is removed meanwhile). It
   * follows the queue's events; with events off it reads the job's row every `pollMs`
   * (docs/design.md, "Results and progress").
   *
   * @example
   * const { id } = await queue.add({ to: 'a@example.com' });
   * const result = await queue.waitFor(id, { timeoutMs: 10_000 });
   */
  waitFor(id: string, options?: WaitForOptions): Promise<unknown>;

  /**
   * One job, or null when there is no such job (or its completed row expired). A completed job
   * carries what its handler returned (`result`), any job the last progress a run reported.
   */
  getJob(id: string): Promise<JobRecord<Payload> | null>;
  /**
   * A page of the jobs in `state`, in that state's order: pending lane by lane (ungrouped first,
   * then the groups by name), each lane in the order a claim takes it; scheduled by due time and
   * active by lease deadline, soonest first; waiting longest first; completed and dead most
   * recent first. A completed row that expired since is left out, so that page may be short.
   *
   * @example
   * const next = await queue.getJobs('pending', { limit: 10 }); // the next ten, lane by lane
   */
  getJobs(state: JobState, options?: PageOptions): Promise<Array<JobRecord<Payload>>>;
  /** Dead jobs, most recent first. */
  listDead(options?: PageOptions): Promise<Array<JobRecord<Payload>>>;
  /** Counts per state, the paused flag (paused when every partition is), the rate limits and the last hour's minutes. */
  stats(): Promise<QueueStats>;
  /** The queue's rate limits and its groups', and what is throttled now (soonest first, at most 1000). */
  rateLimits(): Promise<RateLimits>;
  /**
   * One page of the queue's groups (every group that ever had a job) with their numbers: active
   * jobs, limit, rate limit, paused, hold, throttle and jobs waiting in its lane, sorted by name
   * within the page. Pass a page's `cursor` to the next call; it is null once the walk is done (a
   * walk by SSCAN: docs/design.md, "Admin in bulk"). `prefix` keeps the groups whose name starts
   * with it. Throws InvalidArgumentError before any Redis call for a bad limit, prefix or cursor.
   *
   * @example
   * let cursor: string | null | undefined;
   * do {
   *   const page = await queue.groups({ prefix: 'tenant-', ...(cursor ? { cursor } : {}) });
   *   for (const g of page.groups) console.log(g.group, g.active, g.waiting);
   *   cursor = page.cursor;
   * } while (cursor !== null);
   */
  groups(options?: GroupsOptions): Promise<GroupsPage>;

  /**
   * Removes a job in any state. Throws JobNotFoundError when there is none. A flow child still
   * unfinished is dropped from its parent's children; a flow parent's unfinished children are
   * removed too (docs/design.md, "Flows").
   */
  remove(id: string): Promise<void>;
  /**
   * Cancels a job that has not finished (docs/guides/job-controls.md). One not running (pending,
   * scheduled, waiting, awaiting) ends `cancelled` at once and never runs. A running one answers
   * `cancelling`: its handler's signal aborts with JobCancelledError (within milliseconds on a
   * Node consumer; at its next lease renewal or its end on the edge), and its settle ends it
   * `cancelled` whatever the handler returns. A cancel sent twice answers as the first did (or
   * `cancelled`, once the run it stopped ended). A flow child's parent reads it as a failed child
   * (its `onFailure` decides); a flow parent's unfinished children are cancelled too. Throws
   * JobNotFoundError when there is no such job, JobStateError when it completed or is dead,
   * InvalidArgumentError for a bad reason (before any Redis call).
   *
   * @example
   * await queue.cancel(id, { reason: 'the user deleted the upload' }); // { id, state: 'cancelling' }
   */
  cancel(id: string, options?: CancelOptions): Promise<CancelResult>;
  /**
   * Cancels the jobs in one unfinished state (of one group), as `cancel` each, a page at a time;
   * how many ended and how many are stopping.
   *
   * @example
   * await queue.cancelJobs({ state: 'pending', group: 'tenant-7', reason: 'tenant closed' });
   */
  cancelJobs(options: CancelJobsOptions): Promise<CancelJobsResult>;
  /** Puts a dead job back to be claimed, with a fresh allowance of attempts. A flow child's parent learns it runs again. */
  reprocess(id: string): Promise<void>;
  /**
   * Gives a job waiting to run (pending or scheduled) another priority (0 to 2097151, lower runs
   * first); among jobs of that priority it keeps its place by arrival. Throws JobNotFoundError
   * when there is none, JobStateError when it is active, completed or dead.
   *
   * @example
   * await queue.changePriority(id, 0);
   */
  changePriority(id: string, priority: number): Promise<void>;
  /**
   * Replaces the payload of a job waiting to run (pending or scheduled), within the payload cap.
   * Throws JobNotFoundError when there is none, JobStateError when it is active, completed or
   * dead; a bad payload throws before any Redis call.
   *
   * @example
   * await queue.updateData(id, { to: 'b@example.com' });
   */
  updateData(id: string, payload: Payload): Promise<void>;
  /**
   * Moves a pending job into `group`'s lane, or out of any group with null. On a partitioned
   * queue a group lives in one partition: a move to a group of another partition is a
   * PartitionError (nothing moved).
   */
  moveToGroup(id: string, group: string | null): Promise<void>;

  /** Stops handing out work; active jobs finish. Resolves false when it was already paused. */
  pause(): Promise<boolean>;
  /** Hands out work again. Resolves false when it was not paused. */
  resume(): Promise<boolean>;
  /** Stops handing out `group`'s work; its active jobs finish. */
  pauseGroup(group: string): Promise<boolean>;
  /** Hands out `group`'s work again. */
  resumeGroup(group: string): Promise<boolean>;
  /** At most `limit` of `group`'s jobs active at once; null lifts the limit. */
  setGroupLimit(group: string, limit: number | null): Promise<void>;
  /**
   * At most `limit` running jobs naming concurrency key `key` (`EnqueueOptions.keys`); null lifts
   * it. Jobs over it wait parked while the others go on; raising or lifting it readmits as many as
   * it has room for (answered), lowering takes nothing back. Partitioned queues refuse keys.
   *
   * @example
   * await queue.setKeyLimit('org:7', 10);
   * await queue.add(payload, { group: 'user-42', keys: ['org:7', 'plan:free'] });
   */
  setKeyLimit(key: string, limit: number | null): Promise<number>;
  /** At most `rate.limit` starts of jobs naming `key` in any `rate.periodMs`, as a group's rate counts (null lifts it); answers the parked jobs readmitted. */
  setKeyRateLimit(key: string, rate: RateLimit | null): Promise<number>;
  /** Every concurrency key the queue's jobs named, with its limit, rate, running and parked jobs, sorted by name. */
  keyLimits(): Promise<KeyInfo[]>;
  /**
   * At most `rate.limit` job starts (claims) of the whole queue in any window of `rate.periodMs`,
   * on the server's clock; null lifts it (docs/design.md, "Rate limits and holds"). On a
   * partitioned queue each partition admits it on its own: N partitions admit N times the rate.
   *
   * @example
   * await queue.setRateLimit({ limit: 100, periodMs: 60_000 }); // 100 starts a minute
   */
  setRateLimit(rate: RateLimit | null): Promise<void>;
  /**
   * At most `rate.limit` starts of `group`'s jobs in any window of `rate.periodMs`; null lifts
   * it. A group at its rate limit leaves the ring until one more start fits.
   *
   * @example
   * await queue.setGroupRateLimit('stripe', { limit: 50, periodMs: 1_000 });
   */
  setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void>;
  /**
   * No job of `group` (null: the ungrouped jobs) starts for `ms` from now, on the server's clock:
   * what a handler's RateLimitedError does after a 429. A longer hold it has is kept. Resolves the
   * time (epoch ms, server clock) it is held until.
   *
   * @example
   * await queue.holdGroup('stripe', 30_000);
   */
  holdGroup(group: string | null, ms: number): Promise<number>;
  /** The counted sweep: recounts `group`'s active jobs and repairs its stored count. */
  sweepGroup(group: string): Promise<GroupSweep>;

  /**
   * Deletes finished jobs, completed or dead, that finished at least `olderThanMs` ago (default
   * 0: all of them), oldest first, at most `limit` (default: no limit), and resolves with their ids.
   *
   * @example
   * const gone = await queue.clean('dead', { olderThanMs: 7 * 86_400_000 }); // dead for a week
   */
  clean(state: FinishedState, options?: { olderThanMs?: number; limit?: number }): Promise<string[]>;
  /**
   * Deletes the jobs waiting to run, pending and scheduled, never active ones, at most `limit`
   * (default: no limit), and resolves with how many.
   *
   * @example
   * await queue.drain();
   */
  drain(options?: { limit?: number }): Promise<number>;
  /**
   * Puts dead jobs back to be claimed, oldest first, each with a fresh allowance of attempts (as
   * `reprocess`), at most `limit` (default: all), and resolves with how many.
   *
   * @example
   * await queue.reprocessDead({ limit: 100 });
   */
  reprocessDead(options?: { limit?: number }): Promise<number>;
  /**
   * Deletes the whole queue, every job and setting, and takes its name out of the registry.
   * Refused with JobStateError (EMQSTATE), nothing deleted, while jobs are active, unless `force`.
   * With `limit`, it stops after about that many rows and resolves false: call again to go on.
   * Resolves true once the queue is gone.
   *
   * @example
   * await queue.obliterate({ force: true });
   */
  obliterate(options?: { force?: boolean; limit?: number }): Promise<boolean>;

  /**
   * Sends event `name` with `data` (JSON, within the payload cap) to the queue's jobs waiting for
   * it (`step.waitForEvent`: docs/guides/steps.md): every job whose wait matches resumes with the
   * data, at most once each, in one script. The event is kept `keepMs` (default 10 minutes) for
   * waits that begin after it. With `id`, the same send again is harmless: it answers as the first
   * and resumes nobody. Throws InvalidArgumentError before any write for a bad name, data or option.
   *
   * @example
   * await queue.sendEvent('email.verified', { userId: 42 }, { id: `verified-42` });
   */
  sendEvent(name: string, data?: unknown, options?: SendEventOptions): Promise<SentEvent>;

  /**
   * Makes scheduler `id`, or changes it in place: from `spec` on, it enqueues `job` once per slot
   * (docs/design.md, "Schedulers"). Each fired job's id is `JOB:<id>@<slot>`. Throws
   * InvalidArgumentError naming the field before any write.
   *
   * @example
   * await queue.upsertScheduler('digest', { cron: '0 8 * * 1-5', tz: 'America/New_York' }, { payload: { kind: 'digest' } });
   */
  upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult>;
  /** Scheduler `id` as it stands (spec, job, next and last slot, slots fired), or null when there is none. */
  getScheduler(id: string): Promise<SchedulerRecord<Payload> | null>;
  /** Every scheduler of the queue, soonest next slot first (those that fire no more last). */
  listSchedulers(): Promise<Array<SchedulerRecord<Payload>>>;
  /** Deletes scheduler `id`: it fires no more (jobs it fired stay). Resolves false when there was none. */
  removeScheduler(id: string): Promise<boolean>;

  /**
   * Sets how long dead jobs are kept and how many (null or absent: no limit of that kind), stored
   * with the queue so every runtime that buries a job applies it.
   *
   * @example
   * await queue.setDeadRetention({ maxAgeMs: 7 * 86_400_000, maxCount: 10_000 });
   */
  setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention>;
  /** The queue's retention of dead jobs (see setDeadRetention). */
  deadRetention(): Promise<DeadRetention>;
  /**
   * Sets the queue's events settings (a setting left out stays as it is): `maxLen`, about how
   * many entries the stream keeps (0 turns events off), and `resultBytes`, the most bytes of a
   * result a `completed` event carries (docs/design.md, "Events").
   *
   * @example
   * await queue.setEvents({ maxLen: 1000, resultBytes: 256 });
   */
  setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings>;
  /** The queue's events settings (see setEvents); the defaults, 10,000 and 1024, until set. */
  eventsSettings(): Promise<EventsSettings>;
  /**
   * The queue's events as they happen, one at a time (a partitioned queue's partitions
   * interleaved, each in its order): an async iterator that ends on `signal` or `break`. From now
   * by default, or after entry id `after`. On Node it parks (XREAD BLOCK, one read shared by every
   * subscriber of the queue on a transport); elsewhere it reads every `pollMs`.
   *
   * @example
   * for await (const e of queue.events({ signal })) {
   *   if (e.event === 'completed') console.log(e.jobId, e.result);
   * }
   */
  events(options?: EventsOptions): AsyncIterable<QueueEvent>;

  /**
   * Closes the transport when the queue owns it (`ownsTransport`, as `connectQueue` sets), so a
   * process with nothing else to do exits. Harmless twice. `await using` calls it.
   */
  close(): Promise<void>;
  /** close(), for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A queue in one cluster slot, with one events stream: a Queue, or one partition of a
 * partitioned queue. It adds to the surface the readers that need one stream, since an entry id
 * is a position in one stream.
 */
export interface QueuePartition<Payload = unknown> extends QueueSurface<Payload> {
  /**
   * A page of the queue's events, oldest first, after entry id `after` (default `'0'`), at most
   * `limit` events of whole entries and at least one entry. `next` is the last entry id read:
   * pass it as the next `after`.
   *
   * @example
   * let after = '0';
   * for (;;) {
   *   const page = await queue.readEvents({ after });
   *   if (page.next === after) break;
   *   after = page.next;
   * }
   */
  readEvents(options?: ReadEventsOptions): Promise<EventsPage>;
  /**
   * The queue's events as `events` gives them, one stream entry at a time, with its entry id,
   * which is where to go on from (`after`). What the HTTP API's SSE route sends.
   *
   * @example
   * let after = '0';
   * for await (const entry of queue.eventEntries({ after, signal })) after = entry.id;
   */
  eventEntries(options?: EventsOptions): AsyncIterable<EventBatch>;
}

/**
 * The one stream a queue's events are in: the queue itself when it is its own only partition (a
 * Queue), else undefined (a partitioned queue's events are in its partitions' streams, and an
 * entry id is a place in one of them).
 *
 * @example
 * const stream = streamOwner(queue);
 * if (stream) console.log(await stream.readEvents({ after: '0' }));
 */
export function streamOwner<Payload>(queue: QueueSurface<Payload>): QueuePartition<Payload> | undefined {
  const [only, ...more] = queue.parts;
  return only !== undefined && more.length === 0 && only.name === queue.name ? only : undefined;
}
