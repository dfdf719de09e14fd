// [Symbol.asyncDispose] below is typed by a lib newer than ES2022, which a Worker's project
// may lack (workers-types does not declare it): the .d.ts names that lib itself.
/// <reference lib="esnext.disposable" preserve="true" />
import { encodePayload, MAX_PRIORITY, jobIdOf } from '../encode.js';
import { InvalidArgumentError, JobNotFoundError, shown } from '../errors.js';
import { type EventsPage, type EventsSettings, MAX_EVENT_RESULT_BYTES, MAX_EVENTS_MAX_LEN, type QueueEvent, type ReadEventsOptions } from '../events/events.js';
import { relayOrLeave } from '../flows/flow-relay.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, JobRecord, JobState, PageOptions } from '../job.js';
import { checkGroupsOptions, type GroupsOptions, type GroupsPage } from './groups.js';
import { assertName } from '../keyspace.js';
import { findOpenTelemetry } from '../telemetry/opentelemetry.js';
import { checkChangePriority, changePriorityOp } from '../ops/change-priority.js';
import { countsOp } from '../ops/counts.js';
import { deadRetentionOp } from '../ops/dead-retention.js';
import { eventsSettingsOp } from '../ops/events-settings.js';
import { getJobOp } from '../ops/get-job.js';
import { getSchedulerOp } from '../ops/get-scheduler.js';
import { groupLimitOp } from '../ops/group-limit.js';
import { holdGroupOp } from '../ops/hold-group.js';
import { listDeadOp } from '../ops/list-dead.js';
import { listGroupsOp } from '../ops/list-groups.js';
import { listJobsOp } from '../ops/list-jobs.js';
import { listSchedulersOp } from '../ops/list-schedulers.js';
import { checkMoveGroup, moveGroupOp } from '../ops/move-group.js';
import { pauseOp } from '../ops/pause.js';
import { pauseGroupOp } from '../ops/pause-group.js';
import { rateLimitsOp } from '../ops/rate-limits.js';
import { removeOp } from '../ops/remove.js';
import { removeSchedulerOp } from '../ops/remove-scheduler.js';
import { checkReprocess, reprocessOp } from '../ops/reprocess.js';
import { resumeOp } from '../ops/resume.js';
import { resumeGroupOp } from '../ops/resume-group.js';
import { setDeadRetentionOp } from '../ops/set-dead-retention.js';
import { setEventsOp } from '../ops/set-events.js';
import { setRateOp } from '../ops/set-rate.js';
import { sweepGroupOp } from '../ops/sweep-group.js';
import { checkUpdateData, updateDataOp } from '../ops/update-data.js';
import { watchJobOp } from '../ops/watch-job.js';
import { checkHoldMs, checkRateLimit, type RateLimit, type RateLimits, rateLimitsOf } from './rate-limits.js';
import { assertSchedulerId, decodeScheduler, type SchedulerJob, type SchedulerRecord, type SchedulerSpec, type UpsertSchedulerResult } from '../schedulers/schedulers.js';
import { Scripts } from '../ops/scripts.js';
import type { EventBatch } from '../events/subscribe.js';
import type { Replication, Transport } from '../transport.js';
import * as admin from './bulk-admin.js';
import { assertObject, JOB_STATES, pageOf, settingsOf, waitOf } from './checks.js';
import type { AddAndWaitOptions, BulkJob, EventsOptions, JobOutcome, QueueOptions, QueueStats, RequestOptions, WaitForOptions } from './options.js';
import { Producer } from './producer.js';
import { markRegistered, Registrar, registrationFor } from './registration.js';
import { RequestKeys } from './request-keys.js';
import { QueueStream } from './stream.js';

export type { AddAndWaitOptions, BulkJob, EventsOptions, JobOutcome, QueueOptions, QueueStats, RequestOptions, WaitForOptions } from './options.js';
export { encodeBulk } from './checks.js';

/** The most throttled entries a read of the rate limits lists. */
const THROTTLED_SHOWN = 1000;
/** Schedulers per page of listSchedulers. */
const SCHEDULERS_PAGE = 1000;

/**
 * Tells `queue` that the registry holds its registration already, as a read of the registry just
 * found (src/queue/open-queue.ts), so its first enqueue sends none: a round trip less per name, which a
 * Worker pays per isolate. Not part of the package's API.
 */
export function registeredAlready(queue: Queue<unknown>): void {
  markRegistered(queue);
}

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
  /** The largest handler result stored, in UTF-8 bytes of JSON (see QueueOptions). */
  readonly maxResultBytes: number;
  /** What its enqueues, and its consumers' settles, wait for after Redis ran them: a replica, or nothing (undefined). */
  readonly replication: Replication | undefined;
  private readonly scripts: Scripts;
  private readonly maxPayloadBytes: number;
  private readonly ownsTransport: boolean;
  private readonly keys: RequestKeys;
  private readonly registrar: Registrar;
  private readonly stream: QueueStream;
  private readonly producer: Producer<Payload>;

  constructor(
    /** The transport this queue (and the consumers built on it) talks to Redis through. */
    readonly transport: Transport,
    name: string,
    options: QueueOptions = {},
  ) {
    assertObject('options', options);
    const registration = registrationFor(name, options.partitions);
    const settings = settingsOf(options);
    this.name = name;
    this.scripts = new Scripts(transport, name);
    this.maxPayloadBytes = settings.maxPayloadBytes;
    this.maxResultBytes = settings.maxResultBytes;
    this.keepCompletedMs = settings.keepCompletedMs;
    this.ownsTransport = settings.ownsTransport;
    this.replication = settings.replication;
    this.keys = new RequestKeys(settings.idempotencyTtlMs);
    this.registrar = new Registrar(this.scripts, registration, this);
    this.stream = new QueueStream(this.scripts);
    this.producer = new Producer(this.scripts, this.registrar, this.keys, this.stream, settings);
    // once per process: spans need @opentelemetry/api, looked for without waiting (README, "Telemetry")
    void findOpenTelemetry();
  }

  /**
   * Adds one job; a bad payload or option throws a typed error and writes nothing. However its
   * request is repeated, it is one job. With `dedupe`, a job holding the key makes this add a
   * `duplicate` (with `replace`, it takes the new payload and delay: `replaced`) of that job's id.
   *
   * @example
   * await queue.add({ doc: 7 }, { delayMs: 2_000, dedupe: { key: 'reindex:7', replace: true } });
   */
  add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    return this.producer.add(payload, options);
  }

  /**
   * Adds many jobs in one round trip (a script call per 1000), each `{payload, ...options}`, all
   * checked first (one bad job throws, nothing written); one result per job, as `add` answers.
   *
   * @example
   * const results = await queue.addBulk([{ payload: 1 }, { payload: 2, id: 'two', priority: 1 }]);
   * // [{ id: 'JOB:1', state: 'pending' }, { id: 'JOB:two', state: 'pending' }]
   */
  addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions = {}): Promise<EnqueueResult[]> {
    return this.producer.addBulk(jobs, options);
  }

  /** One job, or null when there is none (or its completed row expired), with its `result` and last `progress`. */
  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    return this.scripts.run(getJobOp<Payload>(jobIdOf(id)));
  }

  /** Counts per state, the paused flag, the rate limits and the last hour's minutes, in one round trip. */
  async stats(): Promise<QueueStats> {
    const [counts, rates] = await this.scripts.runOps([countsOp(), rateLimitsOp(THROTTLED_SHOWN)] as const);
    const { paused, pending, scheduled, active, dead, completed, waiting, lastHour } = counts;
    return { queue: this.name, paused, counts: { pending, scheduled, active, dead, completed, waiting }, rateLimits: rateLimitsOf(rates), lastHour };
  }

  /** The queue's rate limits and its groups', and what is throttled now (soonest first, at most 1000). */
  async rateLimits(): Promise<RateLimits> {
    return rateLimitsOf(await this.scripts.run(rateLimitsOp(THROTTLED_SHOWN)));
  }

  /**
   * A page of the queue's groups with their numbers, sorted by name within the page; pass its
   * `cursor` to the next call (null once done). A walk by SSCAN (docs/design.md, "Admin in bulk"):
   * about `limit` groups a page (1 to 1000, default 100), only those starting with `prefix`.
   *
   * @example
   * let cursor: string | null | undefined;
   * do {
   *   const page = await queue.groups({ prefix: 'tenant-', ...(cursor ? { cursor } : {}) });
   *   for (const g of page.groups) console.log(g.group, g.active, g.waiting);
   *   cursor = page.cursor;
   * } while (cursor !== null);
   */
  async groups(options: GroupsOptions = {}): Promise<GroupsPage> {
    const { cursor, limit, prefix } = checkGroupsOptions(options, true);
    return this.scripts.run(listGroupsOp(cursor, limit, prefix));
  }

  /** Dead jobs, most recent first. */
  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    assertObject('options', options);
    const { offset, limit } = pageOf(options);
    return this.scripts.run(listDeadOp<Payload>(offset, limit));
  }

  /**
   * Removes a job in any state; JobNotFoundError when there is none. A flow child leaves its
   * parent's children, a flow parent's unfinished children go too (docs/design.md, "Flows").
   */
  async remove(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(removeOp(jobId));
    await relayOrLeave(this.transport, this.name, outbox);
    if (!value) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
  }

  /** Puts a dead job back to be claimed, with a fresh allowance of attempts (a flow child's parent waits again). */
  async reprocess(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(reprocessOp(jobId));
    await relayOrLeave(this.transport, this.name, outbox);
    checkReprocess(value, jobId);
  }

  /** Moves a pending job into `group`'s lane, or out of any group with null. */
  async moveToGroup(id: string, group: string | null): Promise<void> {
    const jobId = jobIdOf(id);
    if (group !== null) assertName('group', group);
    checkMoveGroup(await this.scripts.run(moveGroupOp(jobId, group ?? '')), jobId);
  }

  /** Stops handing out work; active jobs finish. Resolves false when it was already paused. */
  async pause(): Promise<boolean> {
    return this.scripts.run(pauseOp());
  }

  /** Hands out work again. Resolves false when it was not paused. */
  async resume(): Promise<boolean> {
    return this.scripts.run(resumeOp());
  }

  /** Stops handing out `group`'s work; its active jobs finish. */
  async pauseGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(pauseGroupOp(group));
  }

  /** Hands out `group`'s work again. */
  async resumeGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(resumeGroupOp(group));
  }

  /** At most `limit` of `group`'s jobs active at once; null lifts the limit. */
  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    assertName('group', group);
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) throw new InvalidArgumentError(`a group limit must be an integer >= 0 or null, got ${shown(limit)}`);
    await this.scripts.run(groupLimitOp(group, limit));
  }

  /**
   * At most `rate.limit` job starts of the whole queue in any window of `rate.periodMs` on the
   * server's clock, exact and live (docs/design.md, "Rate limits and holds"); null lifts it.
   *
   * @example
   * await queue.setRateLimit({ limit: 100, periodMs: 60_000 }); // 100 starts a minute
   */
  async setRateLimit(rate: RateLimit | null): Promise<void> {
    await this.scripts.run(setRateOp(null, checkRateLimit(rate)));
  }

  /**
   * At most `rate.limit` starts of `group`'s jobs in any window of `rate.periodMs`; null lifts it.
   * A group at its limit leaves the ring until a start fits; other groups keep flowing.
   *
   * @example
   * await queue.setGroupRateLimit('stripe', { limit: 50, periodMs: 1_000 });
   */
  async setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void> {
    assertName('group', group);
    await this.scripts.run(setRateOp(group, checkRateLimit(rate)));
  }

  /**
   * No job of `group` (null: the ungrouped jobs) starts for `ms` from now, as a handler's
   * RateLimitedError does; a longer hold is kept. Resolves the server time it is held until.
   *
   * @example
   * await queue.holdGroup('stripe', 30_000);
   */
  async holdGroup(group: string | null, ms: number): Promise<number> {
    if (group !== null) assertName('group', group);
    return this.scripts.run(holdGroupOp(group, checkHoldMs(ms)));
  }

  /** The counted sweep: recounts `group`'s active jobs and repairs its stored count. */
  async sweepGroup(group: string): Promise<{
    /** The active count Redis held before. */
    stored: number;
    /** The active jobs of the group counted now: what is stored after. */
    counted: number;
  }> {
    assertName('group', group);
    return this.scripts.run(sweepGroupOp(group));
  }

  /**
   * Makes scheduler `id`, or changes it in place: it enqueues `job` once per slot of `spec`
   * (docs/design.md, "Schedulers"), each fired job `JOB:<id>@<slot>`. Bad input throws
   * InvalidArgumentError naming the field, before any write.
   *
   * @example
   * await queue.upsertScheduler('digest', { cron: '0 8 * * 1-5', tz: 'America/New_York' }, { payload: { kind: 'digest' } });
   * await queue.upsertScheduler('poll-feeds', { every: 30_000 }, { payload: {}, group: 'feeds' });
   */
  upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult> {
    return this.producer.upsertScheduler(id, spec, job);
  }

  /** Scheduler `id` as it stands (spec, job, next and last slot, slots fired), or null when there is none. */
  async getScheduler(id: string): Promise<SchedulerRecord<Payload> | null> {
    assertSchedulerId(id);
    const { row } = await this.scripts.run(getSchedulerOp(id));
    return row.v === undefined ? null : decodeScheduler<Payload>(id, row);
  }

  /** Every scheduler of the queue, soonest next slot first (those that fire no more last). */
  async listSchedulers(): Promise<Array<SchedulerRecord<Payload>>> {
    const out: Array<SchedulerRecord<Payload>> = [];
    for (let offset = 0; ; offset += SCHEDULERS_PAGE) {
      const page = await this.scripts.run(listSchedulersOp(offset, SCHEDULERS_PAGE));
      for (const { id, row } of page) if (row.v !== undefined) out.push(decodeScheduler<Payload>(id, row));
      if (page.length < SCHEDULERS_PAGE) return out;
    }
  }

  /** Deletes scheduler `id`: it fires no more (jobs it fired stay). Resolves false when there was none. */
  async removeScheduler(id: string): Promise<boolean> {
    assertSchedulerId(id);
    return this.scripts.run(removeSchedulerOp(id));
  }

  /**
   * Closes the transport when this Queue owns it (`ownsTransport`), so a process with nothing else
   * to do exits; a transport you passed in is yours to close. Harmless twice; `await using` calls it.
   *
   * @example
   * await using mail = connectQueue<{ to: string }>(process.env.REDIS_URL!, 'mail'); // echomq/node
   * await mail.add({ to: 'a@example.com' });
   */
  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  /** close(), for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * A page of the jobs in `state`, in that state's order: pending lane by lane as a claim takes
   * them, scheduled by due time, active by lease deadline, completed and dead most recent first.
   *
   * @example
   * const next = await queue.getJobs('pending', { limit: 10 }); // the next ten, lane by lane
   */
  async getJobs(state: JobState, options: PageOptions = {}): Promise<Array<JobRecord<Payload>>> {
    if (!JOB_STATES.includes(state)) throw new InvalidArgumentError(`state must be one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(state)}`);
    const { offset, limit } = pageOf(options);
    return this.scripts.run(listJobsOp<Payload>(state, offset, limit));
  }

  /**
   * Deletes finished jobs (completed or dead) that finished at least `olderThanMs` ago (default 0:
   * all), oldest first, at most `limit` (default: no limit); resolves with their ids.
   *
   * @example
   * const gone = await queue.clean('dead', { olderThanMs: 7 * 86_400_000 }); // dead for a week
   */
  clean(state: 'completed' | 'dead', options: { olderThanMs?: number; limit?: number } = {}): Promise<string[]> {
    return admin.clean(this.scripts, this.keys, state, options);
  }

  /**
   * Deletes the jobs waiting to run (pending and scheduled, never active), at most `limit`
   * (default: no limit); resolves with how many.
   *
   * @example
   * await queue.drain();
   */
  drain(options: { limit?: number } = {}): Promise<number> {
    return admin.drain(this.scripts, this.keys, options);
  }

  /**
   * Deletes the whole queue, every job and setting, and its registry entry. Refused with
   * JobStateError while jobs are active, unless `force`. With `limit`, it stops after about that
   * many rows and resolves false: call again to go on. Stop its producers first.
   *
   * @example
   * await queue.obliterate({ force: true });
   */
  obliterate(options: { force?: boolean; limit?: number } = {}): Promise<boolean> {
    return admin.obliterate(this.scripts, this.registrar, options);
  }

  /**
   * Puts dead jobs back to be claimed, oldest first, as `reprocess` does, at most `limit`
   * (default: all); resolves with how many.
   *
   * @example
   * await queue.reprocessDead({ limit: 100 });
   */
  reprocessDead(options: { limit?: number } = {}): Promise<number> {
    return admin.reprocessDead(this.scripts, this.keys, options);
  }

  /**
   * Gives a waiting job (pending or scheduled) another priority (0 to 2097151, lower first),
   * keeping its place by arrival; JobNotFoundError, or JobStateError when it is not waiting.
   *
   * @example
   * await queue.changePriority(id, 0); // to the front of its lane's default-priority jobs
   */
  async changePriority(id: string, priority: number): Promise<void> {
    const jobId = jobIdOf(id);
    if (!Number.isSafeInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
      throw new InvalidArgumentError(`priority must be an integer from 0 to ${MAX_PRIORITY}, got ${String(priority)}`);
    }
    checkChangePriority(await this.scripts.run(changePriorityOp(jobId, priority)), jobId);
  }

  /**
   * Replaces a waiting job's payload (within the cap): its next run gets the new one.
   * JobNotFoundError, or JobStateError when it is not waiting; a bad payload throws first.
   *
   * @example
   * await queue.updateData(id, { to: 'b@example.com' });
   */
  async updateData(id: string, payload: Payload): Promise<void> {
    const jobId = jobIdOf(id);
    const text = encodePayload(payload, this.maxPayloadBytes);
    checkUpdateData(await this.scripts.run(updateDataOp(jobId, text)), jobId);
  }

  /**
   * How long dead jobs are kept and how many (null or absent: no limit of that kind), applied by
   * every burial (two of the oldest past it at most); `clean('dead')` removes a backlog.
   *
   * @example
   * await queue.setDeadRetention({ maxAgeMs: 7 * 86_400_000, maxCount: 10_000 });
   */
  async setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention> {
    if (typeof retention !== 'object' || retention === null) throw new InvalidArgumentError('setDeadRetention takes {maxAgeMs?, maxCount?}');
    const { maxAgeMs = null, maxCount = null } = retention;
    for (const [name, value] of [['maxAgeMs', maxAgeMs], ['maxCount', maxCount]] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0)) throw new InvalidArgumentError(`${name} must be an integer >= 0 or null, got ${String(value)}`);
    }
    return this.scripts.run(setDeadRetentionOp(maxAgeMs, maxCount));
  }

  /** The queue's retention of dead jobs (see setDeadRetention). */
  async deadRetention(): Promise<DeadRetention> {
    return this.scripts.run(deadRetentionOp());
  }

  /**
   * Sets the queue's events settings (docs/design.md, "Events"; one left out stays): `maxLen`, about
   * how many entries the stream keeps (0 to 10,000,000; 0 turns events off), and `resultBytes`, the
   * most bytes of a result a `completed` event carries (0 to 1 MiB). Resolves the settings now.
   *
   * @example
   * await queue.setEvents({ maxLen: 1000, resultBytes: 256 });
   */
  async setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings> {
    assertObject('setEvents takes {maxLen?, resultBytes?}: settings', settings);
    const { maxLen = null, resultBytes = null } = settings;
    for (const [name, value, max] of [['maxLen', maxLen, MAX_EVENTS_MAX_LEN], ['resultBytes', resultBytes, MAX_EVENT_RESULT_BYTES]] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > max)) throw new InvalidArgumentError(`${name} must be an integer from 0 to ${max}, got ${shown(value)}`);
    }
    return this.scripts.run(setEventsOp(maxLen, resultBytes));
  }

  /** The queue's events settings (see setEvents); the defaults, 10,000 and 1024, until set. */
  async eventsSettings(): Promise<EventsSettings> {
    return this.scripts.run(eventsSettingsOp());
  }

  /**
   * A page of the queue's events, oldest first, after entry id `after` (default `'0'`), at most
   * `limit` events (1 to 1000, default 100) of whole entries; pass `next` as the next `after`.
   *
   * @example
   * const page = await queue.readEvents({ after: '0' });
   * for (const e of page.events) console.log(e.time, e.event);
   */
  readEvents(options: ReadEventsOptions = {}): Promise<EventsPage> {
    return this.stream.page(options);
  }

  /**
   * The queue's events as they happen, until `signal` or `break`: from now, or after entry id
   * `after`. Node parks on the stream (one read shared per transport); elsewhere it reads every
   * `pollMs`. The events of one script call share their entry id (see `eventEntries`).
   *
   * @example
   * for await (const e of queue.events({ signal })) if (e.event === 'completed') console.log(e.jobId, e.result);
   */
  events(options: EventsOptions = {}): AsyncIterable<QueueEvent> {
    const entries = this.eventEntries(options);
    return (async function* () {
      for await (const entry of entries) yield* entry.events;
    })();
  }

  /**
   * The queue's events as `events` gives them, one stream entry at a time with its id, which is
   * where to go on from (`after`): what the HTTP API's SSE route sends.
   *
   * @example
   * for await (const entry of queue.eventEntries({ after, signal })) after = entry.id;
   */
  eventEntries(options: EventsOptions = {}): AsyncIterable<EventBatch> {
    return this.stream.entries(options);
  }

  /**
   * Waits for a job to finish: its result; JobFailedError when it ends dead, WaitTimeoutError
   * after `timeoutMs`, JobNotFoundError when there is none (or it goes). Nothing after the read of
   * its row is missed; with events off it polls the row (docs/design.md, "Events").
   *
   * @example
   * const result = await queue.waitFor(id, { timeoutMs: 10_000 });
   */
  async waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    const jobId = jobIdOf(id);
    const wait = waitOf(options);
    const start = await this.scripts.run(watchJobOp(jobId));
    if (!start.job) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    return this.stream.outcome(jobId, start, wait);
  }

  /**
   * Adds a job and waits for it (`add`, then `waitFor`, the stream's position read first in the
   * same round trip); a duplicate waits for the job that has its id or key.
   *
   * @example
   * const { id, result } = await queue.addAndWait({ url }, { timeoutMs: 15_000 });
   */
  addAndWait(payload: Payload, options: AddAndWaitOptions = {}): Promise<JobOutcome> {
    return this.producer.addAndWait(payload, options, (id) => this.waitFor(id, options));
  }
}
