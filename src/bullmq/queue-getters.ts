/**
 * BullMQ's QueueGetters, as BullMQ splits them out of its Queue: the reads of a queue's jobs and
 * their counts by BullMQ's types, on echomq's Queue (docs/design/bullmq-layer.md, "Queue").
 */
import { EventEmitter } from 'node:events';
import type { JobRecord, JobState as EmqJobState } from '../job.js';
import { keyspace } from '../keyspace.js';
import type { IoredisTransport } from '../node/ioredis-transport.js';
import { Queue as EmqQueue } from '../queue/queue.js';
import { openQueue, type QueueBaseOptions } from './connection.js';
import { bullQueueName } from './queue-names.js';
import { emqId, type Envelope } from './envelope.js';
import { Job } from './job.js';
import { childrenOf } from './job-dependencies.js';
import type { JobJson, JobQueue } from './job-types.js';
import { ALL_TYPES, bullState, emqStatesOf, type JobState, type JobType, pendingFits } from './states.js';

/** One child in a page of getDependencies. */
export interface DependencyItem {
  /** Its key, `<prefix>:<queue>:<id>`. */
  readonly id: string;
  /** A processed child's return value. */
  readonly v?: unknown;
  /** A failed child's error (BullMQ's field; the pages here hold pending and processed children). */
  readonly err?: string;
}

/** A page of a flow parent's children (getDependencies): BullMQ's shape. */
export interface DependenciesPage {
  /** Each child of the page. */
  readonly items: DependencyItem[];
  /** The children's jobs, BullMQ's JSON form. */
  readonly jobs: JobJson[];
  /** How many children of that kind there are in all. */
  readonly total: number;
}

/** A page of echomq's listing. */
export const PAGE = 1000;

/**
 * What a BullMQ Queue reads: its jobs by id, state and type, and their counts. `Queue` extends it
 * with the adds and the admin.
 */
export abstract class QueueGetters<DataType = any, ResultType = any, NameType extends string = string> extends EventEmitter implements JobQueue {
  /** The BullMQ queue name. */
  readonly name: string;
  /** The options it was made with. */
  readonly opts: QueueBaseOptions;
  /** `<prefix>:<name>`. */
  readonly qualifiedName: string;
  /** The echomq queue underneath. */
  readonly emq: EmqQueue<Envelope>;
  protected readonly transport: IoredisTransport;
  protected closing: Promise<void> | undefined;

  constructor(name: string, opts: QueueBaseOptions) {
    super();
    this.name = name;
    this.opts = opts;
    // BullMQ keeps completed jobs unless told otherwise (removeOnComplete)
    ({ qualifiedName: this.qualifiedName, transport: this.transport, emq: this.emq } = openQueue(name, opts, { keepCompletedMs: -1 }));
  }

  /** BullMQ's name of this queue's key of `type` (`<prefix>:<name>:<type>`; a job's, with its id): a name only, echomq's keys are its own. */
  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }

  /** The job of `jobId`, or undefined. */
  async getJob(jobId: string): Promise<Job<DataType, ResultType, NameType> | undefined> {
    const record = await this.emq.getJob(emqId(jobId));
    return record ? (Job.fromRecord(this, record) as Job<DataType, ResultType, NameType>) : undefined;
  }

  /**
   * A flow parent's children of one kind, paged as BullMQ pages them: `processed` (completed, each
   * item with its value `v`) or `pending` (unfinished), from `start` to `end` inclusive (-1: to the
   * end), each item keyed `<prefix>:<queue>:<id>`, with the children's jobs in BullMQ's JSON form
   * and how many there are in all.
   *
   * @example
   * const { items, total } = await queue.getDependencies(parent.id, 'pending', 0, -1);
   */
  async getDependencies(parentId: string, type: 'processed' | 'pending', start: number, end: number): Promise<DependenciesPage> {
    const view = await childrenOf(this, emqId(parentId));
    const kids = (view.record?.children ?? []).filter((c) => c.state === (type === 'processed' ? 'completed' : 'unfinished'));
    const page = kids.slice(start, end < 0 ? kids.length + end + 1 : end + 1);
    const prefix = this.qualifiedName.slice(0, -this.name.length - 1);
    const jobs = await Promise.all(
      page.map(async (c) => {
        const emq = c.queue === this.emq.name ? this.emq : new EmqQueue<Envelope>(this.transport, c.queue);
        const record = await emq.getJob(c.id);
        const name = bullQueueName(c.queue, prefix);
        return record && Job.fromRecord({ name, qualifiedName: `${prefix}:${name}`, emq }, record).asJSON();
      }),
    );
    return {
      items: page.map((c) => (type === 'processed' ? { id: view.key(c.queue, c.id), v: c.result ?? null } : { id: view.key(c.queue, c.id) })),
      jobs: jobs.filter((j): j is JobJson => j !== null),
      total: kids.length,
    };
  }

  /** BullMQ's state of `jobId`, or `unknown`. */
  async getJobState(jobId: string): Promise<JobState | 'unknown'> {
    const record = await this.emq.getJob(emqId(jobId));
    return record ? bullState(record.state, record.priority) : 'unknown';
  }

  /**
   * The jobs of the types given (default every type), from `start` to `end` inclusive (-1: to the
   * end) of their concatenation, each type in BullMQ's order: with `asc`, oldest (or soonest due)
   * first; without, newest first.
   *
   * @example
   * const failed = await queue.getJobs(['failed'], 0, 9);
   */
  async getJobs(types: JobType | JobType[] = [...ALL_TYPES], start = 0, end = -1, asc = false): Promise<Array<Job<DataType, ResultType, NameType>>> {
    const list = Array.isArray(types) ? types : [types];
    const records: Array<JobRecord<Envelope>> = [];
    const seen = new Set<string>();
    for (const type of list) {
      const ofType: Array<JobRecord<Envelope>> = [];
      for (const state of emqStatesOf(type)) {
        for (const r of await this.allIn(state)) if (state !== 'pending' || pendingFits(type, r.priority)) ofType.push(r);
      }
      // echomq lists completed and failed newest first, every other state oldest (soonest) first
      const listedAsc = type !== 'completed' && type !== 'failed';
      if (asc !== listedAsc) ofType.reverse();
      for (const r of ofType) if (!seen.has(r.id)) (seen.add(r.id), records.push(r));
    }
    const last = end < 0 ? records.length + end : end;
    return records.slice(start, last + 1).map((r) => Job.fromRecord(this, r) as Job<DataType, ResultType, NameType>);
  }

  /** Jobs waiting (priority 0), oldest first. */
  async getWaiting(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['waiting'], start, end, true);
  }
  /** Jobs waiting with a priority. */
  async getPrioritized(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['prioritized'], start, end, true);
  }
  /** Flow parents waiting for their children. */
  async getWaitingChildren(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['waiting-children'], start, end, true);
  }
  /** Jobs a worker runs now. */
  async getActive(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['active'], start, end, true);
  }
  /** Jobs delayed (a delay, or a retry's backoff), soonest first. */
  async getDelayed(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['delayed'], start, end, true);
  }
  /** Completed jobs, newest first. */
  async getCompleted(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['completed'], start, end, false);
  }
  /** Failed jobs, newest first. */
  async getFailed(start = 0, end = -1): Promise<Array<Job<DataType, ResultType, NameType>>> {
    return this.getJobs(['failed'], start, end, false);
  }

  /**
   * How many jobs of each type asked (default every type), keyed by BullMQ's names (`wait` as
   * asked). `waiting` and `prioritized` split echomq's pending by priority, a page of 1000 per
   * round trip; `completed` counts the completed jobs kept.
   *
   * @example
   * const { waiting, active, completed, failed, delayed } = await queue.getJobCounts();
   */
  async getJobCounts(...types: JobType[]): Promise<Record<string, number>> {
    const asked = types.length === 0 ? ALL_TYPES : [...new Set(types.flat() as JobType[])];
    const { counts } = await this.emq.stats();
    const needSplit = asked.some((t) => t === 'waiting' || t === 'wait' || t === 'prioritized');
    let prioritized = 0;
    if (needSplit && counts.pending > 0) for (const r of await this.allIn('pending')) if (r.priority > 0) prioritized += 1;
    const completed = asked.includes('completed') ? await this.completedKept() : 0;
    const out: Record<string, number> = {};
    for (const type of asked) {
      switch (type) {
        case 'waiting':
        case 'wait':
          out[type] = counts.pending - prioritized;
          break;
        case 'prioritized':
          out[type] = prioritized;
          break;
        case 'delayed':
          out[type] = counts.scheduled + counts.awaiting;
          break;
        case 'active':
          out[type] = counts.active;
          break;
        case 'completed':
          out[type] = completed;
          break;
        case 'failed':
          out[type] = counts.dead + counts.cancelled;
          break;
        case 'waiting-children':
          out[type] = counts.waiting;
          break;
        default:
          out[type] = 0;
      }
    }
    return out;
  }

  /** The sum of getJobCounts over `types`. */
  async getJobCountByTypes(...types: JobType[]): Promise<number> {
    const counts = await this.getJobCounts(...types);
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /** Jobs waiting to run: waiting, prioritized, delayed and waiting-children, as BullMQ counts them. */
  async count(): Promise<number> {
    return this.getJobCountByTypes('waiting', 'delayed', 'prioritized', 'waiting-children');
  }
  /** How many jobs wait (priority 0). */
  async getWaitingCount(): Promise<number> {
    return this.getJobCountByTypes('waiting');
  }
  /** How many jobs wait with a priority. */
  async getPrioritizedCount(): Promise<number> {
    return this.getJobCountByTypes('prioritized');
  }
  /** How many flow parents wait for children. */
  async getWaitingChildrenCount(): Promise<number> {
    return this.getJobCountByTypes('waiting-children');
  }
  /** How many jobs are active. */
  async getActiveCount(): Promise<number> {
    return this.getJobCountByTypes('active');
  }
  /** How many jobs are delayed. */
  async getDelayedCount(): Promise<number> {
    return this.getJobCountByTypes('delayed');
  }
  /** How many completed jobs are kept. */
  async getCompletedCount(): Promise<number> {
    return this.getJobCountByTypes('completed');
  }
  /** How many jobs failed for good. */
  async getFailedCount(): Promise<number> {
    return this.getJobCountByTypes('failed');
  }

  /** Every record of echomq state `state`, page by page. */
  protected async allIn(state: EmqJobState): Promise<Array<JobRecord<Envelope>>> {
    const out: Array<JobRecord<Envelope>> = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.emq.getJobs(state, { offset, limit: PAGE });
      out.push(...page);
      if (page.length < PAGE) return out;
    }
  }

  /** The completed jobs kept (echomq's completed count is a counter since the queue began). */
  protected async completedKept(): Promise<number> {
    return this.transport.redis.zcard(keyspace(this.emq.name).key('completed'));
  }
}
