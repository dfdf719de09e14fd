/**
 * `EchoMQAdapter`: bull-board's queue adapter over an echomq queue (docs/guides/bull-board.md).
 * It extends bull-board's own `BaseAdapter`, imported from the `@bull-board/api` the app has
 * installed (a peer dependency, never bundled: a copy of the base class is not the board's, which
 * is what broke groupmq's adapter on bull-board 9). Every call is one of echomq's Queue methods:
 * no Redis key is read here, and no state is kept but the queue's.
 */
import { BaseAdapter } from '@bull-board/api/dist/queueAdapters/base.js';
import type {
  JobCleanStatus,
  JobSchedulerRepeatOptions,
  JobSchedulerUpdateResult,
  JobStatus,
  MetricsType,
  ObliterateOptions,
  QueueAdapterOptions,
  QueueJob,
  QueueJobOptions,
  QueueMetrics,
  QueueRateLimit,
  Status,
} from '@bull-board/api/typings/app';
import { JobNotFoundError } from '../errors.js';
import type { JobRecord, JobState } from '../job.js';
import { openQueue } from '../queue/open-queue.js';
import type { QueueSurface } from '../queue/surface.js';
import { BoardJob } from './board-job.js';
import { UnsupportedBoardActionError } from './errors.js';
import { FlowReader } from './flows.js';
import { addOptionsOf, type LayerQueue, isLayerQueue } from './add-job.js';
import { boardId, jobIdOf } from './payload.js';
import { type BoardScheduler, boardSchedulerOf, runSchedulerNow, updateScheduler } from './schedulers.js';
import { BOARD_STATUSES, type BoardCounts, boardCountsOf, isBoardStatus, STATES_OF } from './statuses.js';

/** A page of echomq's listing. */
const PAGE = 1000;

/** The adapter's options: bull-board's own, and where the board's Redis panel reads from. */
export interface EchoMQAdapterOptions extends Partial<QueueAdapterOptions> {
  /**
   * The Redis `INFO` text for the board's Redis panel. Default: read through the queue's
   * transport when it is an ioredis one (`IoredisTransport`); any other transport (the REST one,
   * a Worker's) has none, and the board says it cannot show the panel.
   */
  readonly redisInfo?: () => Promise<string | null>;
}

/**
 * bull-board's adapter for an echomq queue: an echomq `Queue` (or `PartitionedQueue`), or an
 * `echomq/bullmq` Queue (then Add job writes BullMQ's name and options beside the data, as that
 * layer's `add` does). Counts, listings and states follow one mapping (`./statuses.ts`): echomq's
 * dead and cancelled are `failed`, scheduled and awaiting `delayed`, pending `waiting`, a flow
 * parent's waiting `waiting-children`.
 *
 * @example
 * import { createBullBoard } from '@bull-board/api';
 * import { HonoAdapter } from '@bull-board/hono';
 * import { serveStatic } from '@hono/node-server/serve-static';
 * import { EchoMQAdapter } from 'echomq/bull-board';
 *
 * const serverAdapter = new HonoAdapter(serveStatic).setBasePath('/board');
 * createBullBoard({ queues: [new EchoMQAdapter(queue)], serverAdapter });
 * app.route('/board', serverAdapter.registerPlugin());
 */
export class EchoMQAdapter extends BaseAdapter {
  /** The echomq queue shown. */
  readonly emq: QueueSurface<unknown>;
  private readonly layer: LayerQueue | undefined;
  private readonly redisInfo: (() => Promise<string | null>) | undefined;
  private readonly queues = new Map<string, Promise<QueueSurface<unknown>>>();
  private readonly flows = new FlowReader((name) => this.queueByName(name));

  constructor(queue: QueueSurface<unknown> | LayerQueue, options: EchoMQAdapterOptions = {}) {
    // `bullmq`: bull-board shows flows for that type only; a completed job here is final
    super('bullmq', { ...options, allowCompletedRetries: false });
    this.layer = isLayerQueue(queue) ? queue : undefined;
    this.emq = isLayerQueue(queue) ? queue.emq : queue;
    this.redisInfo = options.redisInfo;
    this.queues.set(this.emq.name, Promise.resolve(this.emq));
  }

  /** The name the board lists it under: bull-board's `prefix` option, then the echomq queue's name. */
  getName(): string {
    return `${this.prefix}${this.emq.name}`;
  }
  /** The echomq queue's name. */
  getQueueName(): string {
    return this.emq.name;
  }
  /** The echomq queue's name: what a flow child's `opts.parent.queue` names. */
  getQueueQualifiedName(): string {
    return this.emq.name;
  }

  /** The statuses the board shows: `latest` and {@link BOARD_STATUSES}. */
  getStatuses(): Status[] {
    return ['latest', ...BOARD_STATUSES];
  }
  /** The job statuses the board lists: `active`, `waiting`, `waiting-children`, `completed`, `failed`, `delayed`. */
  getJobStatuses(): JobStatus[] {
    return [...BOARD_STATUSES];
  }

  /** The board's counts: `GET /v1/queues`'s cells, summed per status (`boardCountsOf`). */
  async getJobCounts(): Promise<BoardCounts> {
    return boardCountsOf((await this.emq.stats()).counts);
  }

  /** The job of board id `id` (echomq's `JOB:<id>`), or undefined. */
  async getJob(id: string): Promise<BoardJob | undefined> {
    const record = await this.emq.getJob(jobIdOf(id));
    return record ? new BoardJob({ emq: this.emq }, record) : undefined;
  }

  /**
   * The jobs of `statuses` from `start` to `end` inclusive (-1: to the end) of their
   * concatenation, each status's states in `STATES_OF` order and each state in echomq's order
   * (pending as claims take it, scheduled soonest first, completed and dead newest first).
   * `prioritized` and `paused` list nothing: echomq has no such state.
   */
  async getJobs(statuses: JobStatus[], start = 0, end = -1): Promise<QueueJob[]> {
    const states = statuses.filter(isBoardStatus).flatMap((s) => STATES_OF[s]);
    // several states and a page past the first: the counts say where each state's rows begin
    // (exact but for `completed`, echomq's counter, which only the completed tab lists, alone)
    const counts = states.length > 1 && start > 0 ? (await this.emq.stats()).counts : undefined;
    let skip = start;
    let want = end < 0 ? Number.POSITIVE_INFINITY : end - start + 1;
    const out: QueueJob[] = [];
    for (const state of states) {
      if (want <= 0) break;
      if (counts && skip >= counts[state]) {
        skip -= counts[state];
        continue;
      }
      const rows = await this.rows(state, skip, want);
      skip = 0;
      want -= rows.length;
      for (const r of rows) out.push(new BoardJob({ emq: this.emq }, r));
    }
    return out;
  }

  /** Up to `limit` rows of `state` from `offset`, page by page. */
  private async rows(state: JobState, offset: number, limit: number): Promise<Array<JobRecord<unknown>>> {
    const out: Array<JobRecord<unknown>> = [];
    for (let at = offset; out.length < limit; ) {
      const take = Math.min(PAGE, limit - out.length);
      const page = await this.emq.getJobs(state, { offset: at, limit: take });
      out.push(...page);
      if (page.length < take) break;
      at += take;
    }
    return out;
  }

  /**
   * Adds a job: on an `echomq/bullmq` Queue through its `add` (name, data, BullMQ's options); on an
   * echomq Queue the data is the payload, and a name or an option echomq has no place for throws
   * UnsupportedBoardActionError before any write.
   */
  async addJob(name: string, data: unknown, options: QueueJobOptions): Promise<QueueJob> {
    let id: string;
    if (this.layer) {
      const job = await this.layer.add(name, data, options);
      id = jobIdOf(job.id ?? '');
    } else {
      if (name !== '') throw new UnsupportedBoardActionError('a job name', 'an echomq job has no name: leave Name empty (the data is the payload), or show an echomq/bullmq Queue');
      id = (await this.emq.add(data, addOptionsOf(options))).id;
    }
    const record = await this.emq.getJob(id);
    if (!record) throw new JobNotFoundError(`job ${id} was added and is gone already`, { jobId: id });
    return new BoardJob({ emq: this.emq }, record);
  }

  /**
   * Deletes the jobs of `status` that are older than `graceTimeMs`: completed and failed (dead,
   * then cancelled) through echomq's `clean` by finish time; delayed and waiting one by one by
   * enqueue time. Active throws UnsupportedBoardActionError: a running job is its consumer's.
   */
  async clean(status: JobCleanStatus | 'waiting', graceTimeMs: number): Promise<void> {
    const olderThanMs = Math.max(0, graceTimeMs);
    if (status === 'completed') {
      await this.emq.clean('completed', { olderThanMs });
    } else if (status === 'failed') {
      await this.emq.clean('dead', { olderThanMs });
      await this.emq.clean('cancelled', { olderThanMs });
    } else if (status === 'delayed' || status === 'wait' || status === 'waiting') {
      const cutoff = Date.now() - olderThanMs;
      for (const job of await this.getJobs([status === 'delayed' ? 'delayed' : 'waiting'])) {
        const { timestamp, id } = job.toJSON();
        if (timestamp > cutoff) continue;
        try {
          await this.emq.remove(jobIdOf(String(id)));
        } catch (error) {
          if (!(error instanceof JobNotFoundError)) throw error;
        }
      }
    } else {
      throw new UnsupportedBoardActionError(`Clean all on ${status} jobs`, 'cancel running jobs (queue.cancel) instead: a running job is its consumer\'s');
    }
  }

  /** Throws UnsupportedBoardActionError: echomq keeps no job logs. */
  async getJobLogs(_id: string): Promise<string[]> {
    throw new UnsupportedBoardActionError('job logs', 'echomq keeps no job logs: report progress (context.progress) or log with your own logger');
  }

  /**
   * The last hour, minute by minute, newest first: jobs completed (`completed`) or sent to dead
   * (`failed`), from `stats().lastHour`. `count` and `meta.count` are the hour's total; echomq
   * keeps no longer series.
   */
  async getMetrics(type: MetricsType, _start?: number, _end?: number): Promise<QueueMetrics> {
    const { lastHour } = await this.emq.stats();
    const data = [...(type === 'completed' ? lastHour.completed : lastHour.dead)].reverse();
    const count = data.reduce((a, b) => a + b, 0);
    return { meta: { count, prevTS: lastHour.minute, prevCount: 0 }, data, count };
  }

  /** The Redis `INFO` text: the option's, or an ioredis transport's; null otherwise. */
  async getRedisInfo(): Promise<string | null> {
    if (this.redisInfo) return this.redisInfo();
    // IoredisTransport keeps its client as `redis`; read by shape, so this module imports no runtime
    const client = (this.emq.transport as { redis?: { info?: () => Promise<string> } }).redis;
    return typeof client?.info === 'function' ? client.info() : null;
  }

  /** Whether the queue is paused. */
  async isPaused(): Promise<boolean> {
    return (await this.emq.stats()).paused;
  }
  /** Pauses the queue: nothing is claimed until it resumes (running jobs finish). */
  async pause(): Promise<void> {
    await this.emq.pause();
  }
  /** Resumes the queue. */
  async resume(): Promise<void> {
    await this.emq.resume();
  }
  /** Deletes the jobs waiting to run: pending and scheduled (echomq's `drain`), never running ones. */
  async empty(): Promise<void> {
    await this.emq.drain();
  }
  /** Deletes the whole queue (echomq's `obliterate`), refused while jobs run unless `force`. */
  async obliterate(opts: ObliterateOptions = {}): Promise<void> {
    while (!(await this.emq.obliterate({ force: opts.force ?? false, limit: PAGE })));
  }
  /** Throws UnsupportedBoardActionError: echomq cannot move delayed jobs forward. */
  async promoteAll(): Promise<void> {
    throw new UnsupportedBoardActionError('Promote all', 'echomq cannot move delayed jobs forward yet: remove them and add them again without the delay');
  }

  /** The queue's schedulers, as bull-board shows them. */
  async getJobSchedulers(): Promise<BoardScheduler[]> {
    return (await this.emq.listSchedulers()).map(boardSchedulerOf);
  }
  /** How many schedulers the queue has. */
  async getJobSchedulersCount(): Promise<number> {
    return (await this.emq.listSchedulers()).length;
  }
  /** Deletes a scheduler (jobs it fired stay): true when there was one. */
  async removeJobScheduler(id: string): Promise<boolean> {
    return this.emq.removeScheduler(id);
  }
  /** Changes a scheduler's schedule, its job as it was. */
  async updateJobScheduler(id: string, repeat: JobSchedulerRepeatOptions): Promise<JobSchedulerUpdateResult> {
    return updateScheduler(this.emq, id, repeat);
  }
  /** Adds one job of a scheduler's template now. */
  async runJobSchedulerNow(id: string): Promise<QueueJob | 'not-found'> {
    const added = await runSchedulerNow(this.emq, id);
    if (added === 'not-found') return added;
    const job = await this.getJob(boardId(added));
    if (!job) throw new JobNotFoundError(`job ${added} was added and is gone already`, { jobId: added });
    return job;
  }
  /** True: Edit on the Schedulers page changes a scheduler's schedule ({@link updateJobScheduler}). */
  override get supportsJobSchedulerUpdate(): boolean {
    return true;
  }
  /** True: Run on the Schedulers page adds a job of the template now ({@link runJobSchedulerNow}). */
  override get supportsJobSchedulerRun(): boolean {
    return true;
  }

  /** null: echomq has no queue-wide concurrency (it limits groups and concurrency keys). */
  async getGlobalConcurrency(): Promise<number | null> {
    return null;
  }
  /** Throws UnsupportedBoardActionError. */
  async setGlobalConcurrency(_concurrency: number): Promise<void> {
    throw new UnsupportedBoardActionError('a global concurrency', "limit a group's running jobs (queue.setGroupLimit) or a concurrency key's (queue.setKeyLimit)");
  }

  /** True: the board sets and lifts the queue-wide rate limit (echomq's `setRateLimit`). */
  override get supportsGlobalRateLimit(): boolean {
    return true;
  }
  /** The queue-wide rate limit (echomq's `setRateLimit`), or null. */
  override async getConfiguredRateLimit(): Promise<QueueRateLimit | null> {
    const rate = (await this.emq.rateLimits()).queue;
    return rate ? { max: rate.limit, duration: rate.periodMs } : null;
  }
  /** Sets the queue-wide rate limit: at most `max` starts in any `duration` ms. */
  override async setConfiguredRateLimit(limit: QueueRateLimit): Promise<void> {
    await this.emq.setRateLimit({ limit: limit.max, periodMs: limit.duration });
  }
  /** Lifts the queue-wide rate limit. */
  override async removeConfiguredRateLimit(): Promise<void> {
    await this.emq.setRateLimit(null);
  }
  /** How long (ms, by this process's clock) until the queue may start jobs again, 0 when it may now. */
  override async getActiveRateLimitTtl(): Promise<number> {
    const until = (await this.emq.rateLimits()).throttled.filter((t) => t.group === null).map((t) => Math.max(t.until, t.heldUntil ?? 0));
    return until.length === 0 ? 0 : Math.max(0, Math.max(...until) - Date.now());
  }
  /** Throws UnsupportedBoardActionError: a window or a hold runs out on its own in echomq. */
  override async releaseActiveRateLimit(): Promise<void> {
    throw new UnsupportedBoardActionError('releasing a rate limit early', 'a rate window or a hold ends on its own; lift the limit (Remove rate limit) to let jobs start');
  }

  /** The flow tree reader bull-board's flow view calls (`getFlow`). */
  async getFlowProducer(): Promise<FlowReader> {
    return this.flows;
  }

  /** The queue of `name` on the same transport: this one, or another a flow's child lives in. */
  private queueByName(name: string): Promise<QueueSurface<unknown>> {
    let found = this.queues.get(name);
    if (!found) this.queues.set(name, (found = openQueue(this.emq.transport, name)));
    return found;
  }
}
