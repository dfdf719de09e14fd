// [Symbol.asyncDispose] below is typed by a lib newer than ES2022, which a Worker's project
// may lack (workers-types does not declare it): the .d.ts names that lib itself.
/// <reference lib="esnext.disposable" preserve="true" />
import { InvalidArgumentError, JobNotFoundError, shown } from '../errors.js';
import type { EventsSettings, QueueEvent } from '../events/events.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, FinishedState, JobRecord, JobState, PageOptions, QueueCounts } from '../job.js';
import type { GroupsOptions, GroupsPage } from '../queue/groups.js';
import { assertName } from '../keyspace.js';
import { JOB_STATES, pageOf } from '../queue/checks.js';
import type { QueueSurface } from '../queue/surface.js';
import { addLastHours } from '../queue/last-hour.js';
import { assertMovable, assertPartitions, partitionName, partitionOf } from './partition-of.js';
import { addCancels, addCounts, anyTrue, combineSent, mergeRateLimits } from './combine.js';
import { cleanAll, countedAll, obliterateAll } from './bulk-admin.js';
import { groupsWalk } from './groups-walk.js';
import { interleave } from './interleave.js';
import { addShares, sharesOf } from './shares.js';
import { mergedPage, orderOf } from './merged-page.js';
import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, type JobDefaults, jobIdOf, PARTITION_JOB_ID, toJobId } from '../encode.js';
import { type AddAndWaitOptions, type BulkJob, encodeBulk, type EventsOptions, type JobOutcome, Queue, type QueueOptions, type QueueStats, type RequestOptions, type WaitForOptions } from '../queue/queue.js';
import type { RateLimit, RateLimits } from '../queue/rate-limits.js';
import { assertSchedulerId, checkSpec, encodeSchedulerJob, type SchedulerJob, type SchedulerRecord, type SchedulerSpec, type UpsertSchedulerResult } from '../schedulers/schedulers.js';
import { unregisterQueue } from '../queue/registry.js';
import type { Replication, Transport } from '../transport.js';
import type { SendEventOptions, SentEvent } from '../steps/steps.js';
import { type CancelJobsOptions, type CancelJobsResult, type CancelOptions, type CancelResult } from '../queue/cancels.js';
import { type KeyInfo, refuseKeys } from '../queue/key-limits.js';

/** Options of a PartitionedQueue: a Queue's, and its count of partitions. */
export interface PartitionedQueueOptions extends Omit<QueueOptions, 'partitions'> {
  /**
   * How many partitions (each a queue of its own, `mail~0` to `mail~N-1`, in a cluster slot of
   * its own), 1 to 1024. Fixed for the queue's life: the registry records it, and opening the
   * queue with another count is a PartitionError.
   */
  readonly partitions: number;
}

/**
 * A queue spread over `partitions` queues (`mail~0` ... `mail~N-1`), each in a cluster slot of its
 * own, so one queue's work spreads over the masters of a Redis Cluster (docs/design.md,
 * "Partitioned queues"). It answers the QueueSurface across its partitions: a grouped job in its
 * group's partition (always the same one, so the group's order, limit, rate and pause hold), an
 * ungrouped one by its id's or in turn; a job by id in the partition holding it (a generated id,
 * `JOB:<seq>~<i>`, names it; a caller's id is looked for in every partition); listings merged in
 * the state's order, counts summed, settings on every partition. A job moved to a group of another
 * partition is a PartitionError; a queue-wide rate limit is per partition. The readers of one
 * stream are its partitions' (`parts[i].readEvents`). Consumers claim across its partitions.
 *
 * @example
 * const queue = new PartitionedQueue<{ to: string }>(transport, 'mail', { partitions: 8 });
 * await queue.add({ to: 'a@example.com' }, { group: 'tenant-1' });
 */
export class PartitionedQueue<Payload = unknown> implements QueueSurface<Payload> {
  readonly name: string;
  /** Its partitions' Queues, partition `i` at index `i` (named `<name>~<i>`). */
  readonly parts: ReadonlyArray<Queue<Payload>>;
  readonly replication: Replication | undefined;
  readonly keepCompletedMs: number;
  readonly maxResultBytes: number;
  /** Where the next ungrouped job without an id goes. */
  private turn = 0;
  private readonly ownsTransport: boolean;
  private readonly defaults: JobDefaults;
  private readonly maxPayloadBytes: number;

  constructor(
    /** The transport its partitions (and the consumers built on it) talk to Redis through. */
    readonly transport: Transport,
    name: string,
    options: PartitionedQueueOptions,
  ) {
    assertName('queue', name);
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object with partitions, got ${shown(options)}`);
    assertPartitions(options.partitions);
    this.name = name;
    const { ownsTransport, ...own } = options;
    this.ownsTransport = ownsTransport ?? false;
    this.parts = Array.from({ length: options.partitions }, (_, i) => new Queue<Payload>(transport, partitionName(name, i), { ...own, partitions: options.partitions }));
    this.defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    const first = this.parts[0]!;
    this.replication = first.replication;
    this.keepCompletedMs = first.keepCompletedMs;
    this.maxResultBytes = first.maxResultBytes;
  }

  /** How many partitions it has. */
  get partitions(): number {
    return this.parts.length;
  }

  /**
   * The partition a job goes to: its group's (always the same), else its id's, else the next in
   * turn. `key` stands in for a missing id (an idempotency key), so a repeated request routes alike.
   */
  partitionFor(options: Pick<EnqueueOptions, 'group' | 'id' | 'keys'> = {}, key?: string): number {
    if (options.keys !== undefined) refuseKeys(this.name);
    if (typeof options.group === 'string') return partitionOf(options.group, this.parts.length);
    // by the id as a job is named (`42` and `JOB:42` are one job, so one partition)
    if (typeof options.id === 'string') return partitionOf(toJobId(options.id), this.parts.length);
    if (key !== undefined) return partitionOf(key, this.parts.length);
    const i = this.turn;
    this.turn = (i + 1) % this.parts.length;
    return i;
  }

  /** The Queue of group `group`'s partition. */
  partitionOfGroup(group: string): Queue<Payload> {
    assertName('group', group);
    return this.parts[partitionOf(group, this.parts.length)]!;
  }

  async add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    const i = this.partitionFor(options ?? {}, options?.idempotencyKey);
    return this.parts[i]!.add(payload, options);
  }

  /**
   * Adds many jobs, each to its partition, the partitions' shares at once (one round trip each,
   * pipelined): one result per job, in order. Every job is validated first: one bad job throws
   * and nothing is written. A partition's share is all or nothing; if one share fails, the others
   * may be written: send the same call again with the same idempotency key, and each share is
   * written once.
   */
  async addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions = {}): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('addBulk takes an array of {payload, ...options}');
    const shares = sharesOf(jobs, (job, index) => this.partitionFor(job, options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:${index}`));
    // every job is checked before anything is written (each share is checked again as it is sent)
    encodeBulk(jobs, this.defaults, this.maxPayloadBytes);
    return addShares(shares, jobs.length, (i, share) => this.parts[i]!.addBulk(share, options));
  }

  /**
   * The partition a job just added (`id` its answer, `group` its group) went to: its group's, the
   * one its generated id names, or its caller's id's (an ungrouped job with an id of its own).
   *
   * @example
   * const { id } = await queue.add(payload, { group });
   * queue.partitionOfAdded(id, group).name // 'mail~3'
   */
  partitionOfAdded(id: string, group?: string | null): Queue<Payload> {
    if (typeof group === 'string') return this.partitionOfGroup(group);
    const generated = PARTITION_JOB_ID.exec(id);
    return this.parts[generated ? Number(generated[2]) : partitionOf(jobIdOf(id), this.parts.length)]!;
  }

  /**
   * The partitions job `id` may be in: the one a generated id names (`JOB:<seq>~<i>`), else every
   * one (a caller's id went with its group, or by its own hash when ungrouped).
   */
  partitionsOfId(id: string): Array<Queue<Payload>> {
    const generated = PARTITION_JOB_ID.exec(jobIdOf(id));
    if (generated) {
      const part = this.parts[Number(generated[2])];
      return part ? [part] : [];
    }
    return [...this.parts];
  }

  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    const rows = await Promise.all(this.partitionsOfId(id).map((part) => part.getJob(id)));
    return rows.find((row) => row !== null) ?? null;
  }

  /** Its jobs per state, every partition's added up. */
  async counts(): Promise<QueueCounts> {
    return addCounts(await Promise.all(this.parts.map(async (part) => (await part.stats()).counts)));
  }

  /** Sent to every partition (a waiting job may be in any): the resumed jobs added up. */
  async sendEvent(name: string, data?: unknown, options?: SendEventOptions): Promise<SentEvent> {
    return combineSent(await Promise.all(this.parts.map((part) => part.sendEvent(name, data, options))), options?.id);
  }

  async pause(): Promise<boolean> {
    return anyTrue(await Promise.all(this.parts.map((part) => part.pause())));
  }

  async resume(): Promise<boolean> {
    return anyTrue(await Promise.all(this.parts.map((part) => part.resume())));
  }

  async pauseGroup(group: string): Promise<boolean> {
    return this.partitionOfGroup(group).pauseGroup(group);
  }

  async resumeGroup(group: string): Promise<boolean> {
    return this.partitionOfGroup(group).resumeGroup(group);
  }

  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    return this.partitionOfGroup(group).setGroupLimit(group, limit);
  }

  setKeyLimit = async (_key: string, _limit: number | null): Promise<number> => refuseKeys(this.name);
  setKeyRateLimit = async (_key: string, _rate: RateLimit | null): Promise<number> => refuseKeys(this.name);
  keyLimits = async (): Promise<KeyInfo[]> => refuseKeys(this.name);

  /**
   * The partition holding job `id`: the one a generated id names, else the one where it is found
   * (read in every partition at once). Throws JobNotFoundError when no partition has it.
   */
  private async holderOf(id: string): Promise<Queue<Payload>> {
    const jobId = jobIdOf(id);
    const candidates = this.partitionsOfId(jobId);
    if (candidates.length === 1) return candidates[0]!;
    const rows = await Promise.all(candidates.map((part) => part.getJob(jobId)));
    const found = rows.findIndex((row) => row !== null);
    if (found < 0) throw new JobNotFoundError(`no job ${jobId} in any partition of ${this.name}`, { jobId });
    return candidates[found]!;
  }

  /** The partition's index of a partition's Queue. */
  private indexOf(part: Queue<Payload>): number {
    return this.parts.indexOf(part);
  }

  async addAndWait(payload: Payload, options: AddAndWaitOptions = {}): Promise<JobOutcome> {
    const i = this.partitionFor(options ?? {}, options?.idempotencyKey);
    return this.parts[i]!.addAndWait(payload, options);
  }

  async waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    return (await this.holderOf(id)).waitFor(id, options);
  }

  async getJobs(state: JobState, options: PageOptions = {}): Promise<Array<JobRecord<Payload>>> {
    if (!JOB_STATES.includes(state)) throw new InvalidArgumentError(`state must be one of ${JOB_STATES.join(', ')}, got ${JSON.stringify(state)}`);
    const page = pageOf(options);
    return mergedPage(this.parts.length, (i, offset, limit) => this.parts[i]!.getJobs(state, { offset, limit }), orderOf(state), page);
  }

  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    const page = pageOf(options);
    return mergedPage(this.parts.length, (i, offset, limit) => this.parts[i]!.listDead({ offset, limit }), orderOf('dead'), page);
  }

  async stats(): Promise<QueueStats> {
    const all = await Promise.all(this.parts.map((part) => part.stats()));
    return {
      queue: this.name,
      paused: all.every((s) => s.paused),
      counts: addCounts(all.map((s) => s.counts)),
      rateLimits: mergeRateLimits(all.map((s) => s.rateLimits)),
      lastHour: addLastHours(all.map((s) => s.lastHour))!,
    };
  }

  async rateLimits(): Promise<RateLimits> {
    return mergeRateLimits(await Promise.all(this.parts.map((part) => part.rateLimits())));
  }

  async groups(options: GroupsOptions = {}): Promise<GroupsPage> {
    return groupsWalk(this.parts, options);
  }

  async remove(id: string): Promise<void> {
    return (await this.holderOf(id)).remove(id);
  }

  async cancel(id: string, options?: CancelOptions): Promise<CancelResult> {
    return (await this.holderOf(id)).cancel(id, options);
  }

  async cancelJobs(options: CancelJobsOptions): Promise<CancelJobsResult> {
    return addCancels(await Promise.all(this.parts.map((part) => part.cancelJobs(options))));
  }

  async reprocess(id: string): Promise<void> {
    return (await this.holderOf(id)).reprocess(id);
  }

  async changePriority(id: string, priority: number): Promise<void> {
    return (await this.holderOf(id)).changePriority(id, priority);
  }

  async updateData(id: string, payload: Payload): Promise<void> {
    return (await this.holderOf(id)).updateData(id, payload);
  }

  async moveToGroup(id: string, group: string | null): Promise<void> {
    if (group !== null) assertName('group', group);
    const holder = await this.holderOf(id);
    if (group !== null) assertMovable(this.name, jobIdOf(id), this.indexOf(holder), group, this.parts.length);
    return holder.moveToGroup(id, group);
  }

  async setRateLimit(rate: RateLimit | null): Promise<void> {
    await Promise.all(this.parts.map((part) => part.setRateLimit(rate)));
  }

  async setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void> {
    return this.partitionOfGroup(group).setGroupRateLimit(group, rate);
  }

  async holdGroup(group: string | null, ms: number): Promise<number> {
    if (group !== null) return this.partitionOfGroup(group).holdGroup(group, ms);
    return Math.max(...(await Promise.all(this.parts.map((part) => part.holdGroup(null, ms)))));
  }

  async sweepGroup(group: string): ReturnType<Queue<Payload>['sweepGroup']> {
    return this.partitionOfGroup(group).sweepGroup(group);
  }

  async clean(state: FinishedState, options: { olderThanMs?: number; limit?: number } = {}): Promise<string[]> {
    return cleanAll(this.parts, state, options);
  }

  async drain(options: { limit?: number } = {}): Promise<number> {
    return countedAll(this.parts, 'drain', options);
  }

  async reprocessDead(options: { limit?: number } = {}): Promise<number> {
    return countedAll(this.parts, 'reprocessDead', options);
  }

  /** Every partition deleted (see bulk-admin.ts, obliterateAll), then the name and its count out of the registry. */
  async obliterate(options: { force?: boolean; limit?: number } = {}): Promise<boolean> {
    if (!(await obliterateAll(this.name, this.parts, () => this.counts(), options))) return false;
    await unregisterQueue(this.transport, this.name);
    return true;
  }

  /** The partition a scheduler lives in: its job's group's, else its id's. */
  private schedulerPartition(id: string, job: unknown): number {
    const group = typeof job === 'object' && job !== null ? (job as { group?: unknown }).group : undefined;
    return partitionOf(typeof group === 'string' ? group : id, this.parts.length);
  }

  /**
   * Makes or changes scheduler `id` (see Queue.upsertScheduler) in ONE partition: its job's
   * group's, else its id's, so its fired jobs join their group's partition. Everything is checked
   * before any write. An upsert that changes its partition (its group changed) removes it from the
   * other first, and it starts at its first slot from now in the new one (the fired-slot history
   * stays behind, so no slot fires twice but the slot due during the move may be skipped).
   */
  async upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult> {
    assertSchedulerId(id);
    checkSpec(spec);
    encodeSchedulerJob(job, this.defaults, this.maxPayloadBytes);
    const home = this.schedulerPartition(id, job);
    await Promise.all(this.parts.map((part, i) => (i === home ? false : part.removeScheduler(id))));
    return this.parts[home]!.upsertScheduler(id, spec, job);
  }

  async getScheduler(id: string): Promise<SchedulerRecord<Payload> | null> {
    assertSchedulerId(id);
    const found = await Promise.all(this.parts.map((part) => part.getScheduler(id)));
    return found.find((s) => s !== null) ?? null;
  }

  async listSchedulers(): Promise<Array<SchedulerRecord<Payload>>> {
    const all = (await Promise.all(this.parts.map((part) => part.listSchedulers()))).flat();
    return all.sort((a, b) => (a.nextRunAt ?? Number.POSITIVE_INFINITY) - (b.nextRunAt ?? Number.POSITIVE_INFINITY) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async removeScheduler(id: string): Promise<boolean> {
    assertSchedulerId(id);
    return anyTrue(await Promise.all(this.parts.map((part) => part.removeScheduler(id))));
  }

  async setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention> {
    const all = await Promise.all(this.parts.map((part) => part.setDeadRetention(retention)));
    return all[0]!;
  }

  async deadRetention(): Promise<DeadRetention> {
    return this.parts[0]!.deadRetention();
  }

  async setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings> {
    const all = await Promise.all(this.parts.map((part) => part.setEvents(settings)));
    return all[0]!;
  }

  async eventsSettings(): Promise<EventsSettings> {
    return this.parts[0]!.eventsSettings();
  }


  events(options: EventsOptions = {}): AsyncIterable<QueueEvent> {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const sources = this.parts.map((part) => part.events({ ...options, signal }));
    return interleave(sources, stop);
  }


  async close(): Promise<void> {
    await Promise.all(this.parts.map((part) => part.close()));
    if (this.ownsTransport) await this.transport.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
