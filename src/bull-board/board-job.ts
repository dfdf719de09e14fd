/**
 * An echomq job as bull-board reads and acts on it (its `QueueJob`): the fields of the echomq row
 * under BullMQ's names, and each button one echomq call (docs/guides/bull-board.md).
 */
import type { QueueJob, QueueJobJson } from '@bull-board/api/typings/app';
import { JobStateError } from '../errors.js';
import type { JobRecord } from '../job.js';
import type { QueueSurface } from '../queue/surface.js';
import { boardId, failedReasonOf, jobIdOf, shownPayload } from './payload.js';
import { UnsupportedBoardActionError } from './errors.js';
import { boardStatusOf, type BoardStatus } from './statuses.js';

/** A job's progress as bull-board shows it: a number or a small JSON value. */
export type JobProgress = QueueJobJson['progress'];

/** What a job needs of the adapter it was read through. */
export interface JobHost {
  /** The echomq queue it lives in. */
  readonly emq: QueueSurface<unknown>;
}

/** A job's options as the board shows them: an `echomq/bullmq` job's own, with what echomq knows over them. */
export interface BoardJobOptions extends Readonly<Record<string, unknown>> {
  /** How long after its enqueue it is due, while delayed (ms). */
  readonly delay?: number;
  /** Attempts allowed per run. */
  readonly attempts: number;
  /** Its priority, when it has one. */
  readonly priority?: number;
  /** Its group, as bull-board shows a group (`opts.group.id`). */
  readonly group?: {
    /** The group's name. */
    readonly id: string;
  };
  /** A flow child's parent, as bull-board follows it to the flow's root. */
  readonly parent?: {
    /** The parent's id, as the board shows it. */
    readonly id: string;
    /** The parent's queue (its echomq name: the board's qualified name of that queue). */
    readonly queue: string;
  };
}

/** A flow parent's children by bull-board's kinds (`getDependenciesCount`). */
export interface DependencyCounts {
  /** Completed. */
  readonly processed: number;
  /** Not finished. */
  readonly unprocessed: number;
  /** Failed and failed the parent. */
  readonly failed: number;
  /** Failed while the parent ran on (`onFailure: 'ignore'`). */
  readonly ignored: number;
}

/**
 * One echomq job on the board. Its id is the one given at enqueue (`JOB:` taken off, as
 * `echomq/bullmq` shows it); a payload written by `echomq/bullmq` shows its name and data, any
 * other payload shows as the data with an empty name (set a `name` formatter on the adapter to
 * name it). `opts` carries what echomq knows: attempts, priority, group (bull-board shows
 * `opts.group.id`), and a flow child's parent.
 *
 * @example
 * const job = await adapter.getJob('1');
 * if (job && (await job.getState()) === 'failed') await job.retry('failed');
 */
export class BoardJob implements QueueJob {
  /** The id given at enqueue. */
  readonly id: string;
  /** The `echomq/bullmq` name, or `''`. */
  readonly name: string;
  /** The data (`echomq/bullmq`'s), or the whole payload. */
  readonly data: unknown;
  /** The options: `echomq/bullmq`'s, with echomq's attempts, priority, group and parent over them. */
  readonly opts: BoardJobOptions;
  /** The last progress reported (0 before any). */
  readonly progress: JobProgress;
  /** Attempts finished in this run (since the enqueue or the last reprocess). */
  readonly attemptsMade: number;
  /** Every claim that ran, across runs. */
  readonly attemptsStarted: number;
  /** When it was enqueued (server ms). */
  readonly timestamp: number;
  /** When it completed, died or was cancelled. */
  readonly finishedOn: number | undefined;
  /**
   * Its finish time, as `echomq/bullmq` reads it: echomq keeps no start time, so a finished job's
   * last run is dated by its end (the board's run time reads 0, not the time since 1970).
   */
  readonly processedOn: number | undefined;
  /** How long after its enqueue it is due, while delayed. */
  readonly delay: number;
  /** The last error's message; a cancelled job's is `cancelled` and its reason. */
  readonly failedReason: string;
  /** The last error with its stack, one entry (echomq keeps the last). */
  readonly stacktrace: string[];
  /** What its handler returned, once completed. */
  readonly returnvalue: unknown;
  /** Its priority (0: none). */
  readonly priority: number;
  /** The scheduler that fired it (absent for a job no scheduler fired). */
  readonly repeatJobKey?: string;
  /** A flow child's parent, `<queue>:<id>`. */
  readonly parentKey: string | undefined;
  /** The echomq queue's name. */
  readonly queueName: string;
  /** The same: echomq's keys are its own, so the board's qualified name is the queue's. */
  readonly queueQualifiedName: string;

  private readonly host: JobHost;
  private readonly record: JobRecord<unknown>;

  constructor(host: JobHost, record: JobRecord<unknown>) {
    this.host = host;
    this.record = record;
    const { name, data, opts } = shownPayload(record.payload);
    this.id = boardId(record.id);
    this.name = name;
    this.data = data;
    this.delay = record.runAt === undefined ? 0 : Math.max(0, record.runAt - record.createdAt);
    this.opts = {
      ...opts,
      ...(this.delay > 0 ? { delay: this.delay } : {}),
      attempts: record.maxAttempts,
      ...(record.priority > 0 ? { priority: record.priority } : {}),
      ...(record.group === undefined ? {} : { group: { id: record.group } }),
      ...(record.parent ? { parent: { id: boardId(record.parent.id), queue: record.parent.queue } } : {}),
    };
    this.progress = (record.progress ?? 0) as JobProgress;
    this.attemptsMade = record.state === 'active' ? Math.max(0, record.attempt - 1) : record.attempt;
    this.attemptsStarted = record.attemptsStarted;
    this.timestamp = record.createdAt;
    this.finishedOn = record.finishedAt;
    this.processedOn = record.finishedAt;
    this.failedReason = record.state === 'cancelled' ? `cancelled${record.cancelReason ? `: ${record.cancelReason}` : ''}` : (failedReasonOf(record.error) ?? '');
    this.stacktrace = record.error === undefined ? [] : [record.error];
    this.returnvalue = record.state === 'completed' ? (record.result ?? null) : null;
    this.priority = record.priority;
    if (record.scheduler) this.repeatJobKey = record.scheduler.id;
    this.parentKey = record.parent ? `${record.parent.queue}:${boardId(record.parent.id)}` : undefined;
    this.queueName = host.emq.name;
    this.queueQualifiedName = host.emq.name;
  }

  /** The echomq row it was read from. */
  get emqRecord(): JobRecord<unknown> {
    return this.record;
  }

  private get emqId(): string {
    return jobIdOf(this.id);
  }

  /** Its status now, read again (`unknown` once it is gone). */
  async getState(): Promise<BoardStatus | 'unknown'> {
    const record = await this.host.emq.getJob(this.emqId);
    return record ? boardStatusOf(record.state) : 'unknown';
  }

  /**
   * Runs a dead job again with a fresh allowance of attempts (echomq's `reprocess`). A completed
   * job is final, and a cancel too: both throw UnsupportedBoardActionError before any write.
   */
  async retry(state: 'completed' | 'failed' = 'failed'): Promise<void> {
    if (state === 'completed') throw new UnsupportedBoardActionError('Retry on a completed job', 'a completed job is final: add the job again');
    const record = await this.host.emq.getJob(this.emqId);
    if (record?.state === 'cancelled') throw new UnsupportedBoardActionError('Retry on a cancelled job', 'a cancel is final: add the job again');
    await this.host.emq.reprocess(this.emqId);
  }

  /**
   * Removes the job (a flow parent's unfinished children go with it). A running job is left to
   * its consumer: echomq would remove it, BullMQ and the board's Clean refuse, so this throws
   * JobStateError and the board answers 409.
   */
  async remove(): Promise<void> {
    const record = await this.host.emq.getJob(this.emqId);
    if (record?.state === 'active') throw new JobStateError(`job ${this.emqId} is active: cancel it (queue.cancel) to stop its run`, { jobId: this.emqId });
    await this.host.emq.remove(this.emqId);
  }

  /** Throws UnsupportedBoardActionError: echomq cannot move a delayed job forward. */
  async promote(): Promise<void> {
    throw new UnsupportedBoardActionError('Promote', 'echomq cannot move a delayed job forward yet: remove it and add it again without the delay');
  }

  /**
   * Replaces the data of a job waiting to run (echomq's `updateData`: pending or scheduled; any
   * other state throws JobStateError). An `echomq/bullmq` job keeps its name and options.
   */
  async updateData(data: Record<string, unknown>): Promise<void> {
    const shown = shownPayload(this.record.payload);
    const payload = shown.envelope ? { name: shown.name, data, opts: shown.opts } : data;
    await this.host.emq.updateData(this.emqId, payload);
  }

  /** Gives a job waiting to run another priority (echomq's `changePriority`); `lifo` throws UnsupportedBoardActionError. */
  async changePriority(opts: { priority?: number; lifo?: boolean }): Promise<void> {
    if (opts.lifo) throw new UnsupportedBoardActionError('LIFO', 'lanes run first in, first out: give the job a lower priority to run it sooner');
    await this.host.emq.changePriority(this.emqId, opts.priority ?? 0);
  }

  /** A flow parent's children by kind, from its row (all zero for a job that is not a parent). */
  async getDependenciesCount(): Promise<DependencyCounts> {
    const record = await this.host.emq.getJob(this.emqId);
    const counts = { processed: 0, unprocessed: 0, failed: 0, ignored: 0 };
    for (const child of record?.children ?? []) {
      if (child.state === 'completed') counts.processed += 1;
      else if (child.state === 'unfinished') counts.unprocessed += 1;
      else if (record?.state === 'dead') counts.failed += 1;
      else counts.ignored += 1;
    }
    return counts;
  }

  /** The errors of the children that failed while the parent ran on, keyed `<queue>:<id>`. */
  async getIgnoredChildrenFailures(): Promise<Record<string, string>> {
    const record = await this.host.emq.getJob(this.emqId);
    const out: Record<string, string> = {};
    if (record?.state === 'dead') return out;
    for (const child of record?.children ?? []) if (child.state === 'failed') out[`${child.queue}:${boardId(child.id)}`] = failedReasonOf(child.error) ?? '';
    return out;
  }

  /** The job as bull-board's `formatJob` reads it. */
  toJSON(): QueueJobJson {
    return {
      id: this.id,
      name: this.name,
      data: this.data,
      opts: this.opts,
      progress: this.progress,
      attemptsMade: this.attemptsMade,
      attemptsStarted: this.attemptsStarted,
      timestamp: this.timestamp,
      finishedOn: this.finishedOn ?? null,
      processedOn: this.processedOn ?? null,
      delay: this.delay,
      failedReason: this.failedReason,
      stacktrace: this.stacktrace,
      returnvalue: this.returnvalue,
      priority: this.priority,
      ...(this.repeatJobKey === undefined ? {} : { repeatJobKey: this.repeatJobKey }),
      ...(this.parentKey === undefined ? {} : { parentKey: this.parentKey }),
    };
  }
}
