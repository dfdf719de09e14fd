import { InvalidArgumentError, shown } from './errors.js';
import type { EnqueueOptions, EnqueueResult, JobRecord, QueueCounts } from './job.js';
import { assertName } from './keyspace.js';
import { assertPartitions, partitionName, partitionOf } from './partitions.js';
import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, type JobDefaults, jobIdOf, PARTITION_JOB_ID } from './encode.js';
import { type BulkJob, encodeBulk, Queue, type QueueOptions, type RequestOptions } from './queue.js';
import type { Replication, Transport } from './transport.js';

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

/** The per-state counts of several partitions, added up. */
function addCounts(counts: readonly QueueCounts[]): QueueCounts {
  const sum: Record<string, number> = {};
  for (const c of counts) for (const [state, n] of Object.entries(c)) sum[state] = (sum[state] ?? 0) + n;
  return sum as unknown as QueueCounts;
}

/**
 * A queue spread over `partitions` queues (`mail~0` ... `mail~N-1`), each in a cluster slot of its
 * own, so one queue's work spreads over the masters of a Redis Cluster (docs/design.md,
 * "Partitioned queues"). A grouped job goes to its group's partition (the same one always), so the
 * group's order, limit, rate and pause hold; an ungrouped job with an id of the caller's goes to
 * its id's, one without in turn. Consumers (`Consumer`, `BatchConsumer`) take a PartitionedQueue
 * and claim across its partitions; queue-wide pause and resume reach every partition.
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
  partitionFor(options: Routed = {}, key?: string): number {
    if (typeof options.group === 'string') return partitionOf(options.group, this.parts.length);
    if (typeof options.id === 'string') return partitionOf(options.id, this.parts.length);
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
    return (await Promise.all(this.parts.map((part) => part.pause()))).some(Boolean);
  }

  /** Resumes every partition. True when any was paused. */
  async resume(): Promise<boolean> {
    return (await Promise.all(this.parts.map((part) => part.resume()))).some(Boolean);
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

  /** Closes every partition's Queue, and the transport when it owns it. */
  async close(): Promise<void> {
    await Promise.all(this.parts.map((part) => part.close()));
    if (this.ownsTransport) await this.transport.close();
  }
}
