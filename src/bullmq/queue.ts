/**
 * BullMQ's Queue on echomq's Queue: adds, reads, counts and admin, with BullMQ's signatures, names
 * and ids (docs/design/bullmq-layer.md, "Queue").
 */
import { JobNotFoundError, JobStateError } from '../errors.js';
import type { EnqueueOptions } from '../job.js';
import { keyspace } from '../keyspace.js';
import type { QueueBaseOptions } from './connection.js';
import { bullId, emqId, type Envelope } from './envelope.js';
import { UnsupportedBullMQError } from './errors.js';
import { Job } from './job.js';
import type { JobJson } from './job-types.js';
import { PAGE, QueueGetters } from './queue-getters.js';
import { checkSize, enqueueOptionsOf, type JobsOptions } from './options.js';
import { schedulerJsonOf, schedulerSpecOf, type JobSchedulerJson, type JobSchedulerTemplateOptions, type RepeatOptions } from './schedulers.js';

/** BullMQ's Queue options. */
export interface QueueOptions extends QueueBaseOptions {
  /** Options every add starts from (an add's own override them, field by field). */
  readonly defaultJobOptions?: JobsOptions;
  /** The events stream's length: echomq's `setEvents({ maxLen })`, applied on first use. */
  readonly streams?: {
    /** The events stream. */
    readonly events: {
      /** About how many entries it keeps. */
      readonly maxLen: number;
    };
  };
  /** Accepted for BullMQ's sake. */
  readonly skipMetasUpdate?: boolean;
  /** Accepted for BullMQ's sake (repeat strategies are not supported). */
  readonly settings?: Record<string, unknown>;
}

/** A queue's rate limit as BullMQ reads it (`getGlobalRateLimit`). */
export interface GlobalRateLimit {
  /** Starts allowed per window. */
  readonly max: number;
  /** The window, ms. */
  readonly duration: number;
}

/**
 * A BullMQ Queue: `new Queue(name, { connection, prefix, defaultJobOptions })`. Its jobs are
 * echomq jobs of the queue `emqQueueName(name, prefix)`; `job.id` is BullMQ's plain id.
 *
 * @example
 * import { Queue } from 'echomq/bullmq';
 *
 * const queue = new Queue('mail', { connection: { host: 'localhost', port: 6379 } });
 * await queue.add('welcome', { to: 'a@example.com' }, { attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
 */
export class Queue<DataType = any, ResultType = any, NameType extends string = string> extends QueueGetters<DataType, ResultType, NameType> {
  constructor(name: string, opts: QueueOptions = {}) {
    super(name, opts);
  }

  /** The options it was made with. */
  declare readonly opts: QueueOptions;

  /** The options every add starts from. */
  get defaultJobOptions(): JobsOptions {
    return { ...this.opts.defaultJobOptions };
  }

  /** Resolves once Redis answers. */
  async waitUntilReady(): Promise<void> {
    await this.transport.ping();
    const events = this.opts.streams?.events.maxLen;
    if (events !== undefined) await this.emq.setEvents({ maxLen: events });
  }

  /**
   * Adds a job: its name kept beside its data, its options translated (attempts default 1,
   * backoff none). Resolves with the job (with a `jobId` already used: a job of that id, as
   * BullMQ's duplicate add).
   *
   * @example
   * const job = await queue.add('send', { to }, { delay: 5_000, priority: 1, jobId: `send-${to}` });
   */
  async add(name: NameType, data: DataType, opts: JobsOptions = {}): Promise<Job<DataType, ResultType, NameType>> {
    const merged = { ...this.opts.defaultJobOptions, ...opts };
    checkSize(name, data, merged);
    const { id } = await this.emq.add({ name, data, opts: merged }, enqueueOptionsOf(merged));
    const job = new Job<DataType, ResultType, NameType>(this, name, data, merged, bullId(id));
    this.emit('waiting', job);
    return job;
  }

  /**
   * Adds jobs in one round trip: every job is checked first, so one bad job adds none.
   *
   * @example
   * await queue.addBulk([{ name: 'a', data: 1 }, { name: 'b', data: 2, opts: { delay: 1000 } }]);
   */
  async addBulk(jobs: ReadonlyArray<{ name: NameType; data: DataType; opts?: JobsOptions }>): Promise<Array<Job<DataType, ResultType, NameType>>> {
    const merged = jobs.map((j) => ({ ...j, opts: { ...this.opts.defaultJobOptions, ...j.opts } }));
    const bulk = merged.map((j) => {
      checkSize(j.name, j.data, j.opts);
      const options: EnqueueOptions = enqueueOptionsOf(j.opts);
      return { payload: { name: j.name, data: j.data, opts: j.opts } as Envelope, ...options };
    });
    const results = await this.emq.addBulk(bulk);
    return results.map((r, i) => new Job<DataType, ResultType, NameType>(this, merged[i]!.name, merged[i]!.data, merged[i]!.opts, bullId(r.id)));
  }

  /** Stops workers taking jobs (theirs running finish). */
  async pause(): Promise<void> {
    await this.emq.pause();
    this.emit('paused');
  }
  /** Lets workers take jobs again. */
  async resume(): Promise<void> {
    await this.emq.resume();
    this.emit('resumed');
  }
  /** Whether the queue is paused. */
  async isPaused(): Promise<boolean> {
    return (await this.emq.stats()).paused;
  }

  /**
   * Removes a job: 1 when removed, 0 when there is none or it is active (BullMQ leaves a locked
   * job alone; echomq would remove it). Its unfinished flow children go with it.
   *
   * @example
   * await queue.remove('1'); // 1
   */
  async remove(jobId: string, _opts?: { removeChildren?: boolean }): Promise<number> {
    const record = await this.emq.getJob(emqId(jobId));
    if (!record || record.state === 'active') return 0;
    try {
      await this.emq.remove(record.id);
    } catch (error) {
      if (error instanceof JobNotFoundError) return 0;
      throw error;
    }
    this.emit('removed', jobId);
    return 1;
  }

  /**
   * Deletes up to `limit` (0: all) jobs of `type` (default completed) older than `grace` ms and
   * resolves with their ids. Completed and failed go through echomq's `clean`; the other types
   * are listed and removed one by one.
   *
   * @example
   * await queue.clean(60_000, 1000, 'failed');
   */
  async clean(grace: number, limit: number, type: 'completed' | 'wait' | 'waiting' | 'active' | 'paused' | 'prioritized' | 'delayed' | 'failed' = 'completed'): Promise<string[]> {
    const max = limit > 0 ? limit : undefined;
    let ids: string[];
    if (type === 'completed' || type === 'failed') {
      ids = await this.emq.clean(type === 'completed' ? 'completed' : 'dead', { olderThanMs: grace, ...(max !== undefined ? { limit: max } : {}) });
      if (type === 'failed' && (max === undefined || ids.length < max)) {
        const left = max === undefined ? {} : { limit: max - ids.length };
        ids = [...ids, ...(await this.emq.clean('cancelled', { olderThanMs: grace, ...left }))];
      }
    } else {
      const cutoff = Date.now() - grace;
      ids = [];
      for (const job of await this.getJobs([type])) {
        if (max !== undefined && ids.length >= max) break;
        if (job.timestamp > cutoff) continue;
        try {
          await this.emq.remove(emqId(job.id!));
          ids.push(job.id!);
        } catch (error) {
          if (!(error instanceof JobNotFoundError)) throw error;
        }
      }
      ids = ids.map(emqId);
    }
    const out = ids.map(bullId);
    // BullMQ names both `waiting` and `wait` cleans `wait`
    this.emit('cleaned', out, type === 'waiting' ? 'wait' : type);
    return out;
  }

  /**
   * Deletes the jobs waiting to run: waiting and prioritized, and delayed ones only with `delayed`
   * (BullMQ's drain keeps delayed jobs by default; echomq's drain takes both).
   *
   * @example
   * await queue.drain(true);
   */
  async drain(delayed = false): Promise<void> {
    if (delayed) {
      await this.emq.drain();
      return;
    }
    for (;;) {
      const page = await this.emq.getJobs('pending', { limit: PAGE });
      if (page.length === 0) return;
      for (const r of page) {
        try {
          await this.emq.remove(r.id);
        } catch (error) {
          if (!(error instanceof JobNotFoundError)) throw error;
        }
      }
    }
  }

  /**
   * Deletes the whole queue. Refused, with BullMQ's message, while jobs are active unless `force`.
   *
   * @example
   * await queue.obliterate({ force: true });
   */
  async obliterate(opts: { force?: boolean; count?: number } = {}): Promise<void> {
    try {
      while (!(await this.emq.obliterate({ force: opts.force ?? false, ...(opts.count ? { limit: opts.count } : {}) })));
    } catch (error) {
      if (error instanceof JobStateError) throw new Error('Cannot obliterate queue with active jobs');
      throw error;
    }
  }

  /**
   * Puts failed jobs back to run, each with a fresh allowance of attempts (echomq's
   * `reprocessDead`). Retrying completed jobs throws UnsupportedBullMQError.
   */
  async retryJobs(opts: { count?: number; state?: 'completed' | 'failed'; timestamp?: number } = {}): Promise<void> {
    if (opts.state === 'completed') throw new UnsupportedBullMQError("retryJobs({ state: 'completed' })", 'add the jobs again');
    await this.emq.reprocessDead();
  }

  /** No job starts for `expireTimeMs` (echomq's `holdGroup(null, ms)`: the queue's ungrouped jobs). */
  async rateLimit(expireTimeMs: number): Promise<void> {
    await this.emq.holdGroup(null, expireTimeMs);
  }
  /** At most `max` starts in any `duration` ms (echomq's `setRateLimit`). */
  async setGlobalRateLimit(max: number, duration: number): Promise<number> {
    await this.emq.setRateLimit({ limit: max, periodMs: duration });
    return 1;
  }
  /** Lifts the rate limit. */
  async removeGlobalRateLimit(): Promise<number> {
    await this.emq.setRateLimit(null);
    return 1;
  }
  /** The queue's rate limit, or null. */
  async getGlobalRateLimit(): Promise<GlobalRateLimit | null> {
    const rate = (await this.emq.rateLimits()).queue;
    return rate ? { max: rate.limit, duration: rate.periodMs } : null;
  }
  /**
   * How long, in ms, until the queue's jobs may start again: its rate limit's or a hold's
   * (`rateLimit`), measured against this process's clock; -2 when neither throttles it (BullMQ's
   * answer for no rate-limit key).
   *
   * @example
   * await queue.rateLimit(1_000);
   * await queue.getRateLimitTtl(); // about 1000
   */
  async getRateLimitTtl(_maxJobs?: number): Promise<number> {
    const until = (await this.emq.rateLimits()).throttled
      .filter((t) => t.group === null)
      .map((t) => Math.max(t.until, t.heldUntil ?? 0));
    return until.length === 0 ? -2 : Math.max(0, Math.max(...until) - Date.now());
  }
  /** Throws UnsupportedBullMQError. */
  async setGlobalConcurrency(_concurrency: number): Promise<number> {
    throw new UnsupportedBullMQError('setGlobalConcurrency', "limit a group's active jobs (echomq's setGroupLimit) or a concurrency key's (setKeyLimit)");
  }
  /** Keeps about `maxLength` events (echomq's `setEvents({ maxLen })`). */
  async trimEvents(maxLength: number): Promise<number> {
    await this.emq.setEvents({ maxLen: maxLength });
    return 0;
  }
  /** Throws UnsupportedBullMQError: echomq keeps no job logs. */
  async addJobLog(_jobId: string, _row: string, _keep?: number): Promise<number> {
    throw new UnsupportedBullMQError('addJobLog', 'log with your own logger');
  }
  /** Throws UnsupportedBullMQError: echomq keeps no job logs. */
  async getJobLogs(_jobId: string): Promise<never> {
    throw new UnsupportedBullMQError('getJobLogs', 'echomq keeps no job logs');
  }
  /** Throws UnsupportedBullMQError: progress is written by the job's holder. */
  async updateJobProgress(_jobId: string, _progress: unknown): Promise<void> {
    throw new UnsupportedBullMQError('updateJobProgress', 'call job.updateProgress from the processor running it');
  }
  /**
   * The id of the job holding deduplication id `id`, or null: a read of echomq's dedupe key
   * (`emq:{q}:dd:<id>`, docs/design.md, "Deduplication"), which names its holder.
   *
   * @example
   * await queue.getDeduplicationJobId('reindex:7'); // '12'
   */
  async getDeduplicationJobId(id: string): Promise<string | null> {
    const holder = await this.transport.redis.get(`${keyspace(this.emq.name).prefix}dd:${id}`);
    return holder === null ? null : bullId(holder);
  }
  /** getDeduplicationJobId, by BullMQ's older name. */
  async getDebounceJobId(id: string): Promise<string | null> {
    return this.getDeduplicationJobId(id);
  }

  /** Resolves 0: echomq's transitions leave no orphaned job keys to remove. */
  async removeOrphanedJobs(_count?: number, _limit?: number): Promise<number> {
    return 0;
  }
  /** Throws UnsupportedBullMQError. */
  async promoteJobs(_opts?: { count?: number }): Promise<void> {
    throw new UnsupportedBullMQError('promoteJobs', 'echomq cannot move delayed jobs forward yet');
  }

  /**
   * Makes or changes scheduler `jobSchedulerId` on echomq's schedulers: `pattern` is its cron
   * (`tz` its zone), `every` its interval; each slot adds `template` as a job. Resolves with a job
   * standing for its next slot (echomq writes a slot's job when it fires, `<id>@<slot>`).
   *
   * @example
   * await queue.upsertJobScheduler('nightly', { pattern: '0 3 * * *' }, { name: 'report', data: {} });
   */
  async upsertJobScheduler(jobSchedulerId: string, repeatOpts: RepeatOptions, template: { name?: NameType; data?: DataType; opts?: JobSchedulerTemplateOptions } = {}): Promise<Job<DataType, ResultType, NameType>> {
    const name = (template.name ?? jobSchedulerId) as NameType;
    const opts = template.opts ?? {};
    const enqueue = enqueueOptionsOf(opts);
    const { nextRunAt } = await this.emq.upsertScheduler(jobSchedulerId, schedulerSpecOf(repeatOpts), {
      payload: { name, data: template.data ?? {}, opts },
      ...(enqueue.priority !== undefined ? { priority: enqueue.priority } : {}),
      ...(enqueue.maxAttempts !== undefined ? { maxAttempts: enqueue.maxAttempts } : {}),
      ...(enqueue.backoff !== undefined ? { backoff: enqueue.backoff } : {}),
    });
    const job = new Job<DataType, ResultType, NameType>(this, name, (template.data ?? {}) as DataType, opts, `${jobSchedulerId}@${nextRunAt ?? 0}`);
    job.delay = Math.max(0, (nextRunAt ?? Date.now()) - Date.now());
    return job;
  }
  /** Deletes a scheduler: true when there was one. */
  async removeJobScheduler(jobSchedulerId: string): Promise<boolean> {
    return this.emq.removeScheduler(jobSchedulerId);
  }
  /** A scheduler as BullMQ shows it, or undefined. */
  async getJobScheduler(id: string): Promise<JobSchedulerJson<DataType> | undefined> {
    const record = await this.emq.getScheduler(id);
    return record ? schedulerJsonOf<DataType>(record) : undefined;
  }
  /** The schedulers, soonest first (`asc` false: latest first, BullMQ's default). */
  async getJobSchedulers(start = 0, end = -1, asc = false): Promise<Array<JobSchedulerJson<DataType>>> {
    const all = (await this.emq.listSchedulers()).map((r) => schedulerJsonOf<DataType>(r));
    if (!asc) all.reverse();
    return all.slice(start, end < 0 ? all.length + end + 1 : end + 1);
  }
  /** How many schedulers. */
  async getJobSchedulersCount(): Promise<number> {
    return (await this.emq.listSchedulers()).length;
  }

  /** Closes its connection (a connection you passed stays open). Harmless twice. */
  async close(): Promise<void> {
    this.closing ??= this.transport.close();
    await this.closing;
  }
  /** close(). */
  async disconnect(): Promise<void> {
    await this.close();
  }

  /** A job's JSON as BullMQ's `Job.fromJSON` takes it: here, read it with getJob. */
  static fromJSON(_json: JobJson): never {
    throw new UnsupportedBullMQError('Queue.fromJSON', 'read the job with queue.getJob');
  }
}
