/**
 * BullMQ's Job over an echomq job: its fields read from the echomq row (or the claim), its methods
 * each one echomq call (docs/design/bullmq-layer.md, "Jobs").
 */
import { JobFailedError, JobNotFoundError, JobStateError, WaitTimeoutError } from '../errors.js';
import type { JobRecord } from '../job.js';
import { bullQueueName } from './queue-names.js';
import { bullId, emqId, type Envelope, envelopeOf, failedReasonOf } from './envelope.js';
import { UnsupportedBullMQError } from './errors.js';
import { JobRefusals } from './job-refusals.js';
import { childrenOf, childrenValues, dependenciesOf, failedChildrenValues } from './job-dependencies.js';
import type { Dependencies, DependenciesCount, DependenciesOpts, JobJson, JobParent, JobProgress, JobQueue, ProgressWriter } from './job-types.js';
import type { JobsOptions } from './options.js';
import { bullState, type FinishedStatus, type JobState } from './states.js';

/** The longest wait echomq's waitFor takes: BullMQ's waitUntilFinished without a ttl waits as long as it takes. */
const FOREVER_MS = 2 ** 31 - 1;

/**
 * A BullMQ job. Its id is BullMQ's plain id (`'1'`, or the `jobId` given), echomq's `JOB:1`
 * underneath. Read from the queue (`getJob`, `getJobs`), returned by `add`, or handed to a
 * processor (then `updateProgress` writes through the job's lease).
 *
 * @example
 * const job = await queue.add('send', { to: 'a@example.com' }, { attempts: 3 });
 * const result = await job.waitUntilFinished(queueEvents, 10_000);
 */
export class Job<DataType = any, ReturnType = any, NameType extends string = string> extends JobRefusals {
  /** The job's id, BullMQ's form. */
  id: string | undefined;
  /** The job's name. */
  name: NameType;
  /** The job's data. */
  data: DataType;
  /** The options it was added with. */
  opts: JobsOptions;
  /** The last progress reported (0 before any). */
  progress: JobProgress = 0;
  /** What the processor returned, once completed. */
  returnvalue: ReturnType = null as ReturnType;
  /** The last error's message, once an attempt failed. */
  failedReason = '';
  /** The last error's stack, one entry (echomq keeps the last). */
  stacktrace: string[] = [];
  /** When it was added (epoch ms). */
  timestamp: number;
  /** When its last run started (epoch ms), when known. */
  processedOn?: number | undefined;
  /** When it completed or failed for good (epoch ms). */
  finishedOn?: number | undefined;
  /** Its delay in ms, as added. */
  delay: number;
  /** Its priority (0: none). */
  priority: number;
  /** Attempts finished (completed or failed), BullMQ's count. */
  attemptsMade = 0;
  /** Attempts started. */
  attemptsStarted = 0;
  /** Always 0: a lapsed lease here counts as an attempt (attemptsMade). */
  stalledCounter = 0;
  /** The deduplication id it was added with. */
  deduplicationId?: string | undefined;
  /** The name of the Worker that took it (its `name` option), while its processor holds it. */
  processedBy?: string | undefined;
  /** The lease token, while a processor runs it. */
  token?: string | undefined;
  /** A flow child's parent: its id and qualified queue. */
  parent?: JobParent | undefined;
  /** A flow child's parent key, `<prefix>:<queue>:<id>`. */
  parentKey?: string | undefined;

  /** Writes progress through the running job's lease (a processor's job only). */
  private progressWriter: ProgressWriter | undefined;
  /** Tells the Worker a progress was written (its `progress` event). */
  private progressListener: ((job: Job, progress: JobProgress) => void) | undefined;

  constructor(
    /** The queue it belongs to. */
    readonly queue: JobQueue,
    name: NameType,
    data: DataType,
    opts: JobsOptions = {},
    id?: string,
  ) {
    super();
    this.name = name;
    this.data = data;
    this.opts = opts;
    this.id = id;
    this.timestamp = opts.timestamp ?? Date.now();
    this.delay = opts.delay ?? 0;
    this.priority = opts.priority ?? 0;
    const dedupe = opts.deduplication ?? opts.debounce;
    this.deduplicationId = dedupe?.id;
  }

  /** The BullMQ name of its queue. */
  get queueName(): string {
    return this.queue.name;
  }

  /** `<prefix>:<queue>`. */
  get queueQualifiedName(): string {
    return this.queue.qualifiedName;
  }

  /**
   * A Job from an echomq row: its fields as BullMQ shows them.
   *
   * @example
   * const record = await emq.getJob('JOB:1');
   * if (record) Job.fromRecord(queue, record).getState();
   */
  static fromRecord(queue: JobQueue, record: JobRecord<Envelope>): Job {
    const { name, data, opts } = envelopeOf(record.payload);
    const job = new Job(queue, name, data, opts, bullId(record.id));
    job.timestamp = opts.timestamp ?? record.createdAt;
    job.priority = record.priority;
    job.progress = (record.progress ?? 0) as JobProgress;
    job.returnvalue = record.state === 'completed' ? (record.result ?? null) : null;
    job.failedReason = failedReasonOf(record.error, queue.qualifiedName.slice(0, -queue.name.length - 1)) ?? '';
    job.stacktrace = record.error === undefined ? [] : [record.error];
    job.finishedOn = record.finishedAt;
    // echomq keeps no start time: a finished job's last run is dated by its end
    job.processedOn = record.finishedAt;
    job.attemptsStarted = record.attemptsStarted;
    job.attemptsMade = record.state === 'active' ? Math.max(0, record.attempt - 1) : record.attempt;
    if (record.parent) {
      job.setParent(record.parent.queue, record.parent.id);
    }
    return job;
  }

  /**
   * Adds a job as `queue.add` does.
   *
   * @example
   * const job = await Job.create(queue, 'send', { to: 'a@example.com' });
   */
  static async create<T = any, R = any, N extends string = string>(queue: JobQueue, name: N, data: T, opts?: JobsOptions): Promise<Job<T, R, N>> {
    if (!queue.add) throw new UnsupportedBullMQError('Job.create on this object', 'create jobs on a Queue');
    return (await queue.add(name, data, opts)) as Job<T, R, N>;
  }

  /**
   * Adds jobs as `queue.addBulk` does, one at a time.
   *
   * @example
   * await Job.createBulk(queue, [{ name: 'a', data: 1 }]);
   */
  static async createBulk(queue: JobQueue, jobs: ReadonlyArray<{ name: string; data: unknown; opts?: JobsOptions }>): Promise<Job[]> {
    const out: Job[] = [];
    for (const j of jobs) out.push(await Job.create(queue, j.name, j.data, j.opts));
    return out;
  }

  /**
   * The job of `jobId`, or undefined.
   *
   * @example
   * const job = await Job.fromId(queue, '1');
   */
  static async fromId<T = any, R = any, N extends string = string>(queue: JobQueue, jobId: string): Promise<Job<T, R, N> | undefined> {
    const record = await queue.emq.getJob(emqId(jobId));
    return record ? (Job.fromRecord(queue, record) as Job<T, R, N>) : undefined;
  }

  /** Sets `parent` and `parentKey` from an echomq parent (its queue and `JOB:` id). */
  setParent(emqQueue: string, emqParentId: string): void {
    const prefix = this.queue.qualifiedName.split(':')[0]!;
    this.parent = { id: bullId(emqParentId), queueKey: `${prefix}:${bullQueueName(emqQueue, prefix)}` };
    this.parentKey = `${this.parent.queueKey}:${this.parent.id}`;
  }

  /** Lets a Worker's processor write progress through the job's lease, and hear it. */
  attachRun(writer: ProgressWriter, onProgress: (job: Job, progress: JobProgress) => void): void {
    this.progressWriter = writer;
    this.progressListener = onProgress;
  }

  private get emqId(): string {
    if (this.id === undefined) throw new Error('this job has no id: it was never added');
    return emqId(this.id);
  }

  /** BullMQ's state, or `unknown` when there is no such job. */
  async getState(): Promise<JobState | 'unknown'> {
    const record = await this.queue.emq.getJob(this.emqId);
    return record ? bullState(record.state, record.priority) : 'unknown';
  }

  /** Whether it completed. */
  async isCompleted(): Promise<boolean> {
    return (await this.getState()) === 'completed';
  }
  /** Whether it failed for good. */
  async isFailed(): Promise<boolean> {
    return (await this.getState()) === 'failed';
  }
  /** Whether it is delayed. */
  async isDelayed(): Promise<boolean> {
    return (await this.getState()) === 'delayed';
  }
  /** Whether a worker runs it now. */
  async isActive(): Promise<boolean> {
    return (await this.getState()) === 'active';
  }
  /** Whether it waits (with a priority or not). */
  async isWaiting(): Promise<boolean> {
    const state = await this.getState();
    return state === 'waiting' || state === 'prioritized';
  }
  /** Whether it waits for its children. */
  async isWaitingChildren(): Promise<boolean> {
    return (await this.getState()) === 'waiting-children';
  }

  /**
   * Reports progress. From a processor it is written through the job's lease (echomq's
   * `context.progress`: a number 0..100 or a small JSON value) and the Worker emits `progress`;
   * from anywhere else it throws UnsupportedBullMQError (echomq writes progress only as the job's
   * holder).
   *
   * @example
   * new Worker('render', async (job) => { await job.updateProgress(50); });
   */
  async updateProgress(progress: JobProgress): Promise<void> {
    if (!this.progressWriter) throw new UnsupportedBullMQError('updateProgress outside its processor', "report progress from the processor running the job (echomq's context.progress)");
    await this.progressWriter(progress);
    this.progress = progress;
    this.progressListener?.(this, progress);
  }

  /**
   * Replaces the job's data. echomq changes the payload of a job waiting to run (waiting, delayed,
   * prioritized) only: an active or finished job's is a JobStateError.
   *
   * @example
   * await job.updateData({ to: 'b@example.com' });
   */
  async updateData(data: DataType): Promise<void> {
    await this.missingAs('updateData', this.queue.emq.updateData(this.emqId, { name: this.name, data, opts: this.opts }));
    this.data = data;
  }

  /**
   * Changes the priority of a job waiting to run. `lifo` throws UnsupportedBullMQError.
   *
   * @example
   * await job.changePriority({ priority: 1 });
   */
  async changePriority(opts: { priority?: number; lifo?: boolean }): Promise<void> {
    if (opts.lifo) throw new UnsupportedBullMQError('changePriority({ lifo })', 'lanes run first in, first out; give the job a lower priority to run it sooner');
    await this.missingAs('changePriority', this.queue.emq.changePriority(this.emqId, opts.priority ?? 0));
    this.priority = opts.priority ?? 0;
  }

  /**
   * Removes the job (its unfinished flow children too, as echomq does). An active job is left
   * alone with BullMQ's error: a worker holds it.
   */
  async remove(_opts?: { removeChildren?: boolean }): Promise<void> {
    const record = await this.queue.emq.getJob(this.emqId);
    if (record?.state === 'active') throw new Error(`Job ${this.id} could not be removed because it is locked by another worker`);
    await this.queue.emq.remove(this.emqId);
  }

  /**
   * Runs a failed job again with a fresh allowance of attempts (echomq's `reprocess`). Retrying a
   * completed job throws UnsupportedBullMQError.
   *
   * @example
   * if (await job.isFailed()) await job.retry();
   */
  async retry(state: FinishedStatus = 'failed', _opts?: { resetAttemptsMade?: boolean; resetAttemptsStarted?: boolean }): Promise<void> {
    if (state === 'completed') throw new UnsupportedBullMQError("retry('completed')", 'add the job again (a completed job here is final)');
    try {
      await this.missingAs('reprocessJob', this.queue.emq.reprocess(this.emqId));
    } catch (error) {
      if (error instanceof JobStateError) throw new Error(`Job ${this.id} is not in the failed state. reprocessJob`);
      throw error;
    }
    this.failedReason = '';
    this.finishedOn = undefined;
  }

  /**
   * Resolves with the job's return value once it completes; rejects with an Error of its
   * `failedReason` when it fails for good, or after `ttl` ms. Follows the queue's events (echomq's
   * `waitFor`), so a job already finished answers at once; `queueEvents` is taken for BullMQ's
   * signature.
   *
   * @example
   * const result = await job.waitUntilFinished(queueEvents, 30_000);
   */
  async waitUntilFinished(_queueEvents: unknown, ttl?: number): Promise<ReturnType> {
    try {
      return (await this.queue.emq.waitFor(this.emqId, { timeoutMs: ttl ?? FOREVER_MS })) as ReturnType;
    } catch (error) {
      if (error instanceof JobFailedError) throw new Error(failedReasonOf(error.jobError) ?? error.message);
      if (error instanceof WaitTimeoutError) {
        throw new Error(`Job wait ${this.name} timed out before finishing, no finish notification arrived after ${ttl}ms (id=${this.id})`);
      }
      if (error instanceof JobNotFoundError) throw new Error(`Missing key for job ${this.queue.qualifiedName}:${this.id}. isFinished`);
      throw error;
    }
  }

  /**
   * A flow parent's children's return values, keyed `<prefix>:<queue>:<id>` as BullMQ keys them.
   *
   * @example
   * const values = await parent.getChildrenValues(); // { 'bull:pages:3': { words: 120 } }
   */
  async getChildrenValues<CT = any>(): Promise<Record<string, CT>> {
    return childrenValues<CT>(await childrenOf(this.queue, this.emqId));
  }

  /**
   * A flow parent's children as BullMQ reads them, each keyed `<prefix>:<queue>:<id>`: results of
   * those completed (`processed`), keys of those unfinished, and the errors of those failed (in
   * `failed` when they failed the parent, `ignored` when it ran on). One page holds them all.
   *
   * @example
   * const { processed, unprocessed } = await parent.getDependencies();
   */
  async getDependencies(opts: DependenciesOpts = {}): Promise<Dependencies> {
    const all = dependenciesOf(await childrenOf(this.queue, this.emqId));
    const kinds = (['processed', 'unprocessed', 'failed', 'ignored'] as const).filter((k) => opts[k] !== undefined);
    if (kinds.length === 0) return all;
    // the kinds asked for only, each with its cursor, as BullMQ answers
    const cursor = { processed: 'nextProcessedCursor', unprocessed: 'nextUnprocessedCursor', failed: 'nextFailedCursor', ignored: 'nextIgnoredCursor' } as const;
    return Object.fromEntries(kinds.flatMap((k) => [[k, all[k]], [cursor[k], 0]])) as Dependencies;
  }

  /**
   * How many of a flow parent's children are processed, unprocessed, failed and ignored.
   *
   * @example
   * const { unprocessed } = await parent.getDependenciesCount();
   */
  async getDependenciesCount(_opts?: unknown): Promise<DependenciesCount> {
    const d = await this.getDependencies();
    return { processed: Object.keys(d.processed ?? {}).length, unprocessed: d.unprocessed?.length ?? 0, failed: d.failed?.length ?? 0, ignored: Object.keys(d.ignored ?? {}).length };
  }

  /** The errors of the children that failed the parent, keyed `<prefix>:<queue>:<id>`. */
  async getFailedChildrenValues(): Promise<Record<string, string>> {
    return failedChildrenValues(await childrenOf(this.queue, this.emqId));
  }

  /** The errors of the children that failed while the parent ran on (`ignoreDependencyOnFailure`). */
  async getIgnoredChildrenFailures(): Promise<Record<string, string>> {
    return (await this.getDependencies()).ignored ?? {};
  }

  /** `call`, a JobNotFoundError of it as BullMQ's `Missing key for job <id>. <command>`. */
  private async missingAs(command: string, call: Promise<void>): Promise<void> {
    try {
      await call;
    } catch (error) {
      if (error instanceof JobNotFoundError) throw new Error(`Missing key for job ${this.id}. ${command}`);
      throw error;
    }
  }

  /** BullMQ's JSON form. */
  asJSON(): JobJson {
    return {
      id: this.id ?? '',
      name: this.name,
      data: JSON.stringify(this.data ?? {}),
      opts: this.opts,
      progress: JSON.stringify(this.progress),
      attemptsMade: this.attemptsMade,
      attemptsStarted: this.attemptsStarted,
      finishedOn: this.finishedOn,
      processedOn: this.processedOn,
      timestamp: this.timestamp,
      failedReason: JSON.stringify(this.failedReason),
      stacktrace: JSON.stringify(this.stacktrace),
      returnvalue: JSON.stringify(this.returnvalue),
      delay: this.delay,
      priority: this.priority,
      parent: this.parent,
      parentKey: this.parentKey,
    };
  }

  /** The job's fields as they are (data, progress and returnvalue not turned to text), for JSON.stringify. */
  toJSON(): Record<string, unknown> {
    const { queue: _queue, progressWriter: _writer, progressListener: _listener, ...fields } = this as unknown as Record<string, unknown>;
    return fields;
  }
}
