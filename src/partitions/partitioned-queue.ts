// [Symbol.asyncDispose] below is typed by a lib newer than ES2022, which a Worker's project
// may lack (workers-types does not declare it): the .d.ts names that lib itself.
/// <reference lib="esnext.disposable" preserve="true" />
import { InvalidArgumentError, JobNotFoundError, JobStateError, PartitionError, shown } from '../errors.js';
import type { EventsSettings, QueueEvent } from '../events/events.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, JobRecord, JobState, PageOptions, QueueCounts } from '../job.js';
import { checkGroupsOptions, type GroupInfo, type GroupsOptions, type GroupsPage, isScanCursor } from '../queue/groups.js';
import { assertName } from '../keyspace.js';
import { addLastHours } from '../queue/last-hour.js';
import { assertPartitions, partitionName, partitionOf } from './partition-of.js';
import { addCounts, anyTrue, mergeRateLimits, sortedByName, sum } from './combine.js';
import { interleave } from './interleave.js';
import { mergedPage, orderOf } from './merged-page.js';
import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, type JobDefaults, jobIdOf, PARTITION_JOB_ID, toJobId } from '../encode.js';
import {
  type AddAndWaitOptions,
  type BulkJob,
  encodeBulk,
  type EventsOptions,
  type JobOutcome,
  Queue,
  type QueueOptions,
  type QueueStats,
  type RequestOptions,
  type WaitForOptions,
} from '../queue/queue.js';
import type { RateLimit, RateLimits } from '../queue/rate-limits.js';
import { assertSchedulerId, checkSpec, encodeSchedulerJob, type SchedulerJob, type SchedulerRecord, type SchedulerSpec, type UpsertSchedulerResult } from '../schedulers/schedulers.js';
import { unregisterQueue } from '../queue/registry.js';
import type { Replication, Transport } from '../transport.js';

/** Options of a PartitionedQueue: a Queue's, and its count of partitions. */
export interface PartitionedQueueOptions extends Omit<QueueOptions, 'partitions'> {
  /**
   * How many partitions (each a queue of its own, `mail~0` to `mail~N-1`, in a cluster slot of
   * its own), 1 to 1024. Fixed for the queue's life: the registry records it, and opening the
   * queue with another count is a PartitionError.
   */
  readonly partitions: number;
}

/** A job's routing keys: its group, its id of the caller's. */
type Routed = Pick<EnqueueOptions, 'group' | 'id'>;

const STATES: readonly JobState[] = ['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting'];

/** A page's offset and limit, checked as Queue.getJobs checks them: limit 1 to 1000 (default 50), offset from 0. */
function pageOf(options: PageOptions): { offset: number; limit: number } {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 50;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
  return { offset, limit };
}

/**
 * A queue spread over `partitions` queues (`mail~0` ... `mail~N-1`), each in a cluster slot of its
 * own, so one queue's work spreads over the masters of a Redis Cluster (docs/design.md,
 * "Partitioned queues"). A grouped job goes to its group's partition (the same one always), so the
 * group's order, limit, rate and pause hold; an ungrouped job with an id of the caller's goes to
 * its id's, one without in turn. Consumers (`Consumer`, `BatchConsumer`) take a PartitionedQueue
 * and claim across its partitions; queue-wide pause and resume reach every partition.
 *
 * It answers what a Queue answers, across its partitions: a job by id in the partition holding it
 * (a generated id, `JOB:<seq>~<i>`, names it; a caller's id is looked for in every partition, and
 * may be held by two partitions when given with different groups), listings merged in the state's
 * order, counts summed, bulk admin and settings on every partition, a group's calls in its
 * partition. What cannot hold across partitions is a PartitionError saying what to do instead: a
 * job moved to a group of another partition, one cursor over the events (`readEvents`). A
 * queue-wide rate limit is per partition: N partitions admit N times the rate.
 *
 * @example
 * const queue = new PartitionedQueue<{ to: string }>(transport, 'mail', { partitions: 8 });
 * await queue.add({ to: 'a@example.com' }, { group: 'tenant-1' });
 */
export class PartitionedQueue<Payload = unknown> {
  /** The queue's name: letters, digits and `._-`, at most 128. */
  readonly name: string;
  /** Its partitions' Queues, partition `i` at index `i` (named `<name>~<i>`). */
  readonly parts: ReadonlyArray<Queue<Payload>>;
  /** What its enqueues wait for after Redis ran them (see QueueOptions.durability). */
  readonly replication: Replication | undefined;
  /** How long a completed job stays readable, in ms (see QueueOptions). */
  readonly keepCompletedMs: number;
  /** The largest handler result stored, in UTF-8 bytes of JSON (see QueueOptions). */
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
  partitionFor(options: Pick<EnqueueOptions, 'group' | 'id'> = {}, key?: string): number {
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

  /**
   * Adds one job to its partition (see the class). However the request is repeated, it is one job:
   * with an idempotency key and neither a group nor an id, the key picks the partition.
   */
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
    const shares = new Map<number, Array<{ index: number; job: BulkJob<Payload> }>>();
    jobs.forEach((job: unknown, index) => {
      const routed = typeof job === 'object' && job !== null ? (job as Routed) : {};
      const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:${index}`;
      const i = this.partitionFor(routed, key);
      let share = shares.get(i);
      if (!share) shares.set(i, (share = []));
      share.push({ index, job: job as BulkJob<Payload> });
    });
    // every job is checked before anything is written (each share is checked again as it is sent)
    encodeBulk(jobs, this.defaults, this.maxPayloadBytes);
    const out = new Array<EnqueueResult>(jobs.length);
    await Promise.all(
      [...shares].map(async ([i, share]) => {
        const results = await this.parts[i]!.addBulk(
          share.map((s) => s.job),
          options,
        );
        share.forEach((s, j) => (out[s.index] = results[j]!));
      }),
    );
    return out;
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

  /** One job (looked for in every partition at once, unless its id names its partition), or null when there is none. */
  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    const rows = await Promise.all(this.partitionsOfId(id).map((part) => part.getJob(id)));
    return rows.find((row) => row !== null) ?? null;
  }

  /** Its jobs per state, every partition's added up. */
  async counts(): Promise<QueueCounts> {
    return addCounts(await Promise.all(this.parts.map(async (part) => (await part.stats()).counts)));
  }

  /** Pauses every partition: nothing is claimed until resume(). True when any was running. */
  async pause(): Promise<boolean> {
    return anyTrue(await Promise.all(this.parts.map((part) => part.pause())));
  }

  /** Resumes every partition. True when any was paused. */
  async resume(): Promise<boolean> {
    return anyTrue(await Promise.all(this.parts.map((part) => part.resume())));
  }

  /** Pauses group `group` (in its partition). */
  async pauseGroup(group: string): Promise<boolean> {
    return this.partitionOfGroup(group).pauseGroup(group);
  }

  /** Resumes group `group` (in its partition). */
  async resumeGroup(group: string): Promise<boolean> {
    return this.partitionOfGroup(group).resumeGroup(group);
  }

  /** Sets group `group`'s limit of jobs active at once (in its partition); null removes it. */
  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    return this.partitionOfGroup(group).setGroupLimit(group, limit);
  }

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

  /**
   * Adds a job to its partition (as `add`) and waits for it (as `waitFor`), in that partition:
   * see Queue.addAndWait.
   */
  async addAndWait(payload: Payload, options: AddAndWaitOptions = {}): Promise<JobOutcome> {
    const i = this.partitionFor(options ?? {}, options?.idempotencyKey);
    return this.parts[i]!.addAndWait(payload, options);
  }

  /** Waits for a job to finish, in the partition that holds it: see Queue.waitFor. */
  async waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    return (await this.holderOf(id)).waitFor(id, options);
  }

  /**
   * A page of the jobs in `state`, merged across partitions in the state's order (Queue.getJobs):
   * pending ungrouped work first, by priority then creation, then the groups by name (each group
   * in one partition, in its lane's order); scheduled by due time, active by lease deadline,
   * waiting longest first, completed and dead most recent first. The offset and limit apply to the
   * merged order, so a page reads up to `offset + limit` rows of each partition.
   *
   * @example
   * const next = await queue.getJobs('scheduled', { limit: 10 }); // the ten due soonest, of every partition
   */
  async getJobs(state: JobState, options: PageOptions = {}): Promise<Array<JobRecord<Payload>>> {
    if (!STATES.includes(state)) throw new InvalidArgumentError(`state must be one of ${STATES.join(', ')}, got ${JSON.stringify(state)}`);
    const page = pageOf(options);
    return mergedPage(this.parts.length, (i, offset, limit) => this.parts[i]!.getJobs(state, { offset, limit }), orderOf(state), page);
  }

  /** Dead jobs of every partition, most recent first, the page cut from the merged order. */
  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    const page = pageOf(options);
    return mergedPage(this.parts.length, (i, offset, limit) => this.parts[i]!.listDead({ offset, limit }), orderOf('dead'), page);
  }

  /**
   * Every partition's counts added up, its rate limits merged (the queue's limit is per
   * partition, see setRateLimit), paused only when every partition is, and the partitions' last
   * hours added up minute by minute.
   */
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

  /** The rate limits of every partition merged: every group's, every throttle soonest first (at most 1000). */
  async rateLimits(): Promise<RateLimits> {
    return mergeRateLimits(await Promise.all(this.parts.map((part) => part.rateLimits())));
  }

  /**
   * One page of the groups of every partition (see Queue.groups), partition after partition: the
   * cursor is `<partition>:<cursor of its walk>`, null once the last partition's walk is done. A
   * page short of `limit` goes on into the next partitions (a round trip each) until it is full
   * or the last is done, so it may hold groups of several partitions, sorted by name. A group
   * lives in one partition, so it comes from one walk only. A cursor that is not one a page
   * answered is an InvalidArgumentError, before any Redis call.
   *
   * @example
   * const first = await queue.groups({ limit: 50 });
   * const next = first.cursor === null ? null : await queue.groups({ limit: 50, cursor: first.cursor }); // e.g. cursor "1:0"
   */
  async groups(options: GroupsOptions = {}): Promise<GroupsPage> {
    const { cursor, limit, prefix } = checkGroupsOptions(options, false);
    let [part, at] = this.groupsCursor(options.cursor === undefined ? undefined : cursor);
    const groups: GroupInfo[] = [];
    for (;;) {
      const page = await this.parts[part]!.groups({ cursor: at, limit: limit - groups.length, prefix });
      groups.push(...page.groups);
      if (page.cursor !== null) at = page.cursor;
      else if (part + 1 < this.parts.length) [part, at] = [part + 1, '0'];
      else return { groups: sortedByName(groups), cursor: null };
      if (groups.length >= limit) return { groups: sortedByName(groups), cursor: `${part}:${at}` };
    }
  }

  /** A composite cursor of `groups` as its partition and that partition's SSCAN cursor; absent: the start. */
  private groupsCursor(cursor: string | undefined): [number, string] {
    if (cursor === undefined) return [0, '0'];
    const match = /^(\d{1,4}):(\d{1,20})$/.exec(cursor);
    const part = match ? Number(match[1]) : -1;
    if (!match || part >= this.parts.length || !isScanCursor(match[2]!)) {
      throw new InvalidArgumentError(`cursor must be the cursor a page of groups answered (<partition>:<cursor>, partition below ${this.parts.length}), got ${shown(cursor)}`);
    }
    return [part, match[2]!];
  }

  /** Removes a job, in the partition that holds it (see Queue.remove). */
  async remove(id: string): Promise<void> {
    return (await this.holderOf(id)).remove(id);
  }

  /** Puts a dead job back to be claimed, in its partition (see Queue.reprocess). */
  async reprocess(id: string): Promise<void> {
    return (await this.holderOf(id)).reprocess(id);
  }

  /** Gives a waiting job another priority, in its partition (see Queue.changePriority). */
  async changePriority(id: string, priority: number): Promise<void> {
    return (await this.holderOf(id)).changePriority(id, priority);
  }

  /** Replaces a waiting job's payload, in its partition (see Queue.updateData). */
  async updateData(id: string, payload: Payload): Promise<void> {
    return (await this.holderOf(id)).updateData(id, payload);
  }

  /**
   * Moves a pending job into `group`'s lane (or out of any group with null), within its partition.
   * A group lives in one partition: a move to a group of another partition is a PartitionError
   * (nothing moved): remove the job and add it again with the group.
   */
  async moveToGroup(id: string, group: string | null): Promise<void> {
    if (group !== null) assertName('group', group);
    const holder = await this.holderOf(id);
    if (group !== null) {
      const target = partitionOf(group, this.parts.length);
      const from = this.indexOf(holder);
      if (target !== from) {
        throw new PartitionError(
          `job ${jobIdOf(id)} is in partition ${from} of ${this.name} and group ${group} lives in partition ${target}: a job cannot move across partitions; remove it and add it again with group ${group}`,
          { jobId: jobIdOf(id) },
        );
      }
    }
    return holder.moveToGroup(id, group);
  }

  /**
   * Sets the queue-wide rate limit on every partition (null lifts it). A partition admits it on
   * its own: N partitions admit N times the rate (docs/design.md, "Partitioned queues"); divide
   * by `partitions` for a whole-queue budget.
   */
  async setRateLimit(rate: RateLimit | null): Promise<void> {
    await Promise.all(this.parts.map((part) => part.setRateLimit(rate)));
  }

  /** Sets group `group`'s rate limit, in its partition (it holds exactly, as on a Queue). */
  async setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void> {
    return this.partitionOfGroup(group).setGroupRateLimit(group, rate);
  }

  /**
   * Holds group `group` for `ms` (in its partition), or with null the ungrouped jobs of every
   * partition. Resolves when it is held until (the latest, for null).
   */
  async holdGroup(group: string | null, ms: number): Promise<number> {
    if (group !== null) return this.partitionOfGroup(group).holdGroup(group, ms);
    return Math.max(...(await Promise.all(this.parts.map((part) => part.holdGroup(null, ms)))));
  }

  /** The counted sweep of group `group`, in its partition (see Queue.sweepGroup). */
  async sweepGroup(group: string): ReturnType<Queue<Payload>['sweepGroup']> {
    return this.partitionOfGroup(group).sweepGroup(group);
  }

  /**
   * Runs a bulk admin call on every partition: at once without a limit; with one, partition after
   * partition, each with what is left of it.
   */
  private async everyPartition<T>(limit: number | undefined, run: (part: Queue<Payload>, limit: number | undefined) => Promise<T>, size: (result: T) => number): Promise<T[]> {
    if (limit === undefined) return Promise.all(this.parts.map((part) => run(part, undefined)));
    if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(limit)}`);
    const out: T[] = [];
    let left = limit;
    for (const part of this.parts) {
      if (left <= 0) break;
      const result = await run(part, left);
      out.push(result);
      left -= size(result);
    }
    return out;
  }

  /**
   * Deletes finished jobs of every partition (see Queue.clean), at most `limit` in all, and
   * resolves with their ids: oldest first within a partition, partition after partition.
   */
  async clean(state: 'completed' | 'dead', options: { olderThanMs?: number; limit?: number } = {}): Promise<string[]> {
    if (state !== 'completed' && state !== 'dead') throw new InvalidArgumentError(`clean takes completed or dead, got ${JSON.stringify(state)}`);
    const { olderThanMs, limit } = options;
    const results = await this.everyPartition(
      limit,
      (part, left) => part.clean(state, { ...(olderThanMs === undefined ? {} : { olderThanMs }), ...(left === undefined ? {} : { limit: left }) }),
      (ids) => ids.length,
    );
    return results.flat();
  }

  /** Deletes the jobs waiting to run in every partition (see Queue.drain), at most `limit` in all; resolves with how many. */
  async drain(options: { limit?: number } = {}): Promise<number> {
    return sum(await this.everyPartition(options.limit, (part, left) => part.drain(left === undefined ? {} : { limit: left }), (n) => n));
  }

  /** Puts the dead jobs of every partition back (see Queue.reprocessDead), at most `limit` in all; resolves with how many. */
  async reprocessDead(options: { limit?: number } = {}): Promise<number> {
    return sum(await this.everyPartition(options.limit, (part, left) => part.reprocessDead(left === undefined ? {} : { limit: left }), (n) => n));
  }

  /**
   * Deletes every partition (see Queue.obliterate), then takes the name and its count out of the
   * registry. Without `force`, refused with JobStateError, nothing deleted, while any partition
   * has active jobs. With `limit`, it works partition after partition, each up to about that many
   * rows, and resolves false at the first not yet gone: call again to go on.
   */
  async obliterate(options: { force?: boolean; limit?: number } = {}): Promise<boolean> {
    const force = options.force ?? false;
    if (typeof force !== 'boolean') throw new InvalidArgumentError('force must be a boolean');
    if (options.limit !== undefined && (!Number.isSafeInteger(options.limit) || options.limit < 1)) {
      throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(options.limit)}`);
    }
    if (!force) {
      const active = (await this.counts()).active;
      if (active > 0) throw new JobStateError(`queue ${this.name} has ${active} active job(s): obliterate with force to delete them too`);
    }
    if (options.limit === undefined) await Promise.all(this.parts.map((part) => part.obliterate({ force })));
    else {
      for (const part of this.parts) if (!(await part.obliterate({ force, limit: options.limit }))) return false;
    }
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

  /** Scheduler `id` from whichever partition holds it, or null. */
  async getScheduler(id: string): Promise<SchedulerRecord<Payload> | null> {
    assertSchedulerId(id);
    const found = await Promise.all(this.parts.map((part) => part.getScheduler(id)));
    return found.find((s) => s !== null) ?? null;
  }

  /** Every partition's schedulers, soonest next slot first (those that fire no more last). */
  async listSchedulers(): Promise<Array<SchedulerRecord<Payload>>> {
    const all = (await Promise.all(this.parts.map((part) => part.listSchedulers()))).flat();
    return all.sort((a, b) => (a.nextRunAt ?? Number.POSITIVE_INFINITY) - (b.nextRunAt ?? Number.POSITIVE_INFINITY) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Deletes scheduler `id` from whichever partition holds it. Resolves false when none did. */
  async removeScheduler(id: string): Promise<boolean> {
    assertSchedulerId(id);
    return anyTrue(await Promise.all(this.parts.map((part) => part.removeScheduler(id))));
  }

  /** Sets the dead retention of every partition (see Queue.setDeadRetention); each applies it to its own dead jobs. */
  async setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention> {
    const all = await Promise.all(this.parts.map((part) => part.setDeadRetention(retention)));
    return all[0]!;
  }

  /** The dead retention, as partition 0 holds it (setDeadRetention sets every partition alike). */
  async deadRetention(): Promise<DeadRetention> {
    return this.parts[0]!.deadRetention();
  }

  /** Sets the events settings of every partition (see Queue.setEvents): each has its own stream, capped alike. */
  async setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings> {
    const all = await Promise.all(this.parts.map((part) => part.setEvents(settings)));
    return all[0]!;
  }

  /** The events settings, as partition 0 holds them (setEvents sets every partition alike). */
  async eventsSettings(): Promise<EventsSettings> {
    return this.parts[0]!.eventsSettings();
  }

  /**
   * Refused with PartitionError: each partition has its own stream, and an entry id is a position
   * in one of them, so no single cursor pages the queue's events. Read `parts[i].readEvents`, one
   * cursor a partition, or follow them all with `events()`.
   */
  async readEvents(): Promise<never> {
    throw new PartitionError(`queue ${this.name} has ${this.parts.length} partitions, each with its own events stream: read parts[i].readEvents (partition ${this.name}~i) with a cursor each, or follow them all with events()`);
  }

  /**
   * Every partition's events as they happen, interleaved: each partition's in its order, none
   * across partitions. `after` is applied to every partition's stream (an entry id is a time:
   * each partition's events after it; default from now). On Node each partition parks a read of
   * its own. Ends on `signal` or `break`.
   *
   * @example
   * for await (const e of queue.events({ signal })) if (e.event === 'dead') console.log(e.jobId, e.error);
   */
  events(options: EventsOptions = {}): AsyncIterable<QueueEvent> {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const sources = this.parts.map((part) => part.events({ ...options, signal }));
    return interleave(sources, stop);
  }

  /**
   * Refused with PartitionError: an entry's id is a position in one partition's stream, so
   * resuming from it (`after`) cannot hold across partitions. Use `parts[i].eventEntries`, or
   * `events()` for every partition's events interleaved.
   */
  eventEntries(): never {
    throw new PartitionError(`queue ${this.name} has ${this.parts.length} partitions, each with its own events stream: follow parts[i].eventEntries (partition ${this.name}~i), or events() for all of them interleaved`);
  }

  /** Closes every partition's Queue, and the transport when it owns it. */
  async close(): Promise<void> {
    await Promise.all(this.parts.map((part) => part.close()));
    if (this.ownsTransport) await this.transport.close();
  }

  /** close(), for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
