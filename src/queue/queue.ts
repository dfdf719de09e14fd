// [Symbol.asyncDispose] below is typed by a lib newer than ES2022, which a Worker's project
// may lack (workers-types does not declare it): the .d.ts names that lib itself.
/// <reference lib="esnext.disposable" preserve="true" />
import { encodePayload, MAX_PRIORITY, jobIdOf } from '../encode.js';
import { InvalidArgumentError, JobNotFoundError, shown } from '../errors.js';
import { type EventsPage, type EventsSettings, MAX_EVENT_RESULT_BYTES, MAX_EVENTS_MAX_LEN, type QueueEvent, type ReadEventsOptions } from '../events/events.js';
import { relayOrLeave } from '../flows/flow-relay.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, FinishedState, JobRecord, JobState, PageOptions } from '../job.js';
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
import { type WatchStart, watchJobOp } from '../ops/watch-job.js';
import { checkHoldMs, checkRateLimit, type RateLimit, type RateLimits, rateLimitsOf } from './rate-limits.js';
import { assertSchedulerId, decodeScheduler, type SchedulerJob, type SchedulerRecord, type SchedulerSpec, type UpsertSchedulerResult } from '../schedulers/schedulers.js';
import { Scripts } from '../ops/scripts.js';
import type { EventBatch } from '../events/subscribe.js';
import type { Replication, Transport } from '../transport.js';
import * as admin from './bulk-admin.js';
import * as keys from './key-limits.js';
import type { KeyInfo } from './key-limits.js';
import { type CancelJobsOptions, type CancelJobsResult, type CancelOptions, type CancelResult, cancelJob, cancelJobs } from './cancels.js';
import { assertObject, JOB_STATES, pageOf, settingsOf, waitOf } from './checks.js';
import type { AddAndWaitOptions, BulkJob, EventsOptions, JobOutcome, QueueOptions, QueueStats, RequestOptions, WaitForOptions } from './options.js';
import { Producer } from './producer.js';
import { markRegistered, Registrar, registrationFor } from './registration.js';
import { RequestKeys } from './request-keys.js';
import { QueueStream } from './stream.js';
import type { GroupSweep, QueuePartition } from './surface.js';
import { sendEventOp } from '../ops/send-event.js';
import { sendEventArgs } from '../steps/send-event-args.js';
import type { SendEventOptions, SentEvent } from '../steps/steps.js';

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
 * A queue in one cluster slot: produce jobs, inspect them and control them. The same class runs
 * on Node and in a Worker: it only needs a Transport. Consumers run on its lease protocol
 * (`Leases`). Its surface is declared once, with the doc of each method, in QueueSurface and
 * QueuePartition (src/queue/surface.ts), which PartitionedQueue answers too.
 *
 * @example
 * const queue = new Queue<{ to: string }>(transport, 'mail');
 * const { id } = await queue.add({ to: 'a@example.com' }, { group: 'tenant-1', delayMs: 5000 });
 */
export class Queue<Payload = unknown> implements QueuePartition<Payload> {
  /** A Queue spans one partition: itself. */
  readonly partitions = 1;
  readonly parts: ReadonlyArray<QueuePartition<Payload>> = [this];
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

  add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    return this.producer.add(payload, options);
  }

  addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions = {}): Promise<EnqueueResult[]> {
    return this.producer.addBulk(jobs, options);
  }

  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    return this.scripts.run(getJobOp<Payload>(jobIdOf(id)));
  }

  async stats(): Promise<QueueStats> {
    const [counts, rates] = await this.scripts.runOps([countsOp(), rateLimitsOp(THROTTLED_SHOWN)] as const);
    const { paused, pending, scheduled, active, dead, completed, waiting, awaiting, sleeping, cancelled, lastHour } = counts;
    return { queue: this.name, paused, counts: { pending, scheduled, active, dead, completed, waiting, awaiting, sleeping, cancelled }, rateLimits: rateLimitsOf(rates), lastHour };
  }

  async rateLimits(): Promise<RateLimits> {
    return rateLimitsOf(await this.scripts.run(rateLimitsOp(THROTTLED_SHOWN)));
  }

  async groups(options: GroupsOptions = {}): Promise<GroupsPage> {
    const { cursor, limit, prefix } = checkGroupsOptions(options, true);
    return this.scripts.run(listGroupsOp(cursor, limit, prefix));
  }

  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    assertObject('options', options);
    const { offset, limit } = pageOf(options);
    return this.scripts.run(listDeadOp<Payload>(offset, limit));
  }

  async remove(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(removeOp(jobId));
    await relayOrLeave(this.transport, this.name, outbox);
    if (!value) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
  }

  cancel(id: string, options?: CancelOptions): Promise<CancelResult> {
    return cancelJob(this.scripts, id, options);
  }

  cancelJobs(options: CancelJobsOptions): Promise<CancelJobsResult> {
    return cancelJobs(this.scripts, options);
  }

  async reprocess(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(reprocessOp(jobId));
    await relayOrLeave(this.transport, this.name, outbox);
    checkReprocess(value, jobId);
  }

  async moveToGroup(id: string, group: string | null): Promise<void> {
    const jobId = jobIdOf(id);
    if (group !== null) assertName('group', group);
    checkMoveGroup(await this.scripts.run(moveGroupOp(jobId, group ?? '')), jobId);
  }

  async pause(): Promise<boolean> {
    return this.scripts.run(pauseOp());
  }

  async resume(): Promise<boolean> {
    return this.scripts.run(resumeOp());
  }

  async pauseGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(pauseGroupOp(group));
  }

  async resumeGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(resumeGroupOp(group));
  }

  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    assertName('group', group);
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) throw new InvalidArgumentError(`a group limit must be an integer >= 0 or null, got ${shown(limit)}`);
    await this.scripts.run(groupLimitOp(group, limit));
  }

  setKeyLimit(key: string, limit: number | null): Promise<number> {
    return keys.setKeyLimit(this.scripts, key, limit);
  }

  setKeyRateLimit(key: string, rate: RateLimit | null): Promise<number> {
    return keys.setKeyRateLimit(this.scripts, key, rate);
  }

  keyLimits(): Promise<KeyInfo[]> {
    return keys.keyLimits(this.scripts);
  }

  async setRateLimit(rate: RateLimit | null): Promise<void> {
    await this.scripts.run(setRateOp(null, checkRateLimit(rate)));
  }

  async setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void> {
    assertName('group', group);
    await this.scripts.run(setRateOp(group, checkRateLimit(rate)));
  }

  async holdGroup(group: string | null, ms: number): Promise<number> {
    if (group !== null) assertName('group', group);
    return this.scripts.run(holdGroupOp(group, checkHoldMs(ms)));
  }

  async sweepGroup(group: string): Promise<GroupSweep> {
    assertName('group', group);
    return this.scripts.run(sweepGroupOp(group));
  }

  upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult> {
    return this.producer.upsertScheduler(id, spec, job);
  }

  async getScheduler(id: string): Promise<SchedulerRecord<Payload> | null> {
    assertSchedulerId(id);
    const { row } = await this.scripts.run(getSchedulerOp(id));
    return row.v === undefined ? null : decodeScheduler<Payload>(id, row);
  }

  async listSchedulers(): Promise<Array<SchedulerRecord<Payload>>> {
    const out: Array<SchedulerRecord<Payload>> = [];
    for (let offset = 0; ; offset += SCHEDULERS_PAGE) {
      const page = await this.scripts.run(listSchedulersOp(offset, SCHEDULERS_PAGE));
      for (const { id, row } of page) if (row.v !== undefined) out.push(decodeScheduler<Payload>(id, row));
      if (page.length < SCHEDULERS_PAGE) return out;
    }
  }

  async removeScheduler(id: string): Promise<boolean> {
    assertSchedulerId(id);
    return this.scripts.run(removeSchedulerOp(id));
  }

  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async getJobs(state: JobState, options: PageOptions = {}): Promise<Array<JobRecord<Payload>>> {
    if (!JOB_STATES.includes(state)) throw new InvalidArgumentError(`state must be one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(state)}`);
    const { offset, limit } = pageOf(options);
    return this.scripts.run(listJobsOp<Payload>(state, offset, limit));
  }

  clean(state: FinishedState, options: { olderThanMs?: number; limit?: number } = {}): Promise<string[]> {
    return admin.clean(this.scripts, this.keys, state, options);
  }

  drain(options: { limit?: number } = {}): Promise<number> {
    return admin.drain(this.scripts, this.keys, options);
  }

  obliterate(options: { force?: boolean; limit?: number } = {}): Promise<boolean> {
    return admin.obliterate(this.scripts, this.registrar, options);
  }

  async sendEvent(name: string, data?: unknown, options?: SendEventOptions): Promise<SentEvent> {
    return this.scripts.run(sendEventOp(...sendEventArgs(name, data, options, this.maxPayloadBytes)));
  }

  reprocessDead(options: { limit?: number } = {}): Promise<number> {
    return admin.reprocessDead(this.scripts, this.keys, options);
  }

  async changePriority(id: string, priority: number): Promise<void> {
    const jobId = jobIdOf(id);
    if (!Number.isSafeInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
      throw new InvalidArgumentError(`priority must be an integer from 0 to ${MAX_PRIORITY}, got ${String(priority)}`);
    }
    checkChangePriority(await this.scripts.run(changePriorityOp(jobId, priority)), jobId);
  }

  async updateData(id: string, payload: Payload): Promise<void> {
    const jobId = jobIdOf(id);
    const text = encodePayload(payload, this.maxPayloadBytes);
    checkUpdateData(await this.scripts.run(updateDataOp(jobId, text)), jobId);
  }

  async setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention> {
    if (typeof retention !== 'object' || retention === null) throw new InvalidArgumentError('setDeadRetention takes {maxAgeMs?, maxCount?}');
    const { maxAgeMs = null, maxCount = null } = retention;
    for (const [name, value] of [['maxAgeMs', maxAgeMs], ['maxCount', maxCount]] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0)) throw new InvalidArgumentError(`${name} must be an integer >= 0 or null, got ${String(value)}`);
    }
    return this.scripts.run(setDeadRetentionOp(maxAgeMs, maxCount));
  }

  async deadRetention(): Promise<DeadRetention> {
    return this.scripts.run(deadRetentionOp());
  }

  async setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings> {
    assertObject('setEvents takes {maxLen?, resultBytes?}: settings', settings);
    const { maxLen = null, resultBytes = null } = settings;
    for (const [name, value, max] of [['maxLen', maxLen, MAX_EVENTS_MAX_LEN], ['resultBytes', resultBytes, MAX_EVENT_RESULT_BYTES]] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > max)) throw new InvalidArgumentError(`${name} must be an integer from 0 to ${max}, got ${shown(value)}`);
    }
    return this.scripts.run(setEventsOp(maxLen, resultBytes));
  }

  async eventsSettings(): Promise<EventsSettings> {
    return this.scripts.run(eventsSettingsOp());
  }

  readEvents(options: ReadEventsOptions = {}): Promise<EventsPage> {
    return this.stream.page(options);
  }

  events(options: EventsOptions = {}): AsyncIterable<QueueEvent> {
    const entries = this.eventEntries(options);
    return (async function* () {
      for await (const entry of entries) yield* entry.events;
    })();
  }

  eventEntries(options: EventsOptions = {}): AsyncIterable<EventBatch> {
    return this.stream.entries(options);
  }

  async waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    const jobId = jobIdOf(id);
    const wait = waitOf(options);
    const joined = this.stream.join();
    let start: WatchStart;
    try {
      start = await this.scripts.run(watchJobOp(jobId));
      if (!start.job) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    } catch (error) {
      joined?.leave();
      throw error;
    }
    return this.stream.outcome(jobId, start, wait, joined);
  }

  /** A Queue's jobs are all in it. */
  partitionOfAdded(): QueuePartition<Payload> {
    return this;
  }

  addAndWait(payload: Payload, options: AddAndWaitOptions = {}): Promise<JobOutcome> {
    return this.producer.addAndWait(payload, options, (id) => this.waitFor(id, options));
  }
}
