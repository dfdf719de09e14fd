/**
 * BullMQ's Worker on echomq's parked Consumer: the processor runs as the Consumer's handler, and
 * BullMQ's events (`active`, `completed`, `failed` per failed attempt, `progress`, `drained`,
 * `error`, `closed`) come from the handler and the Consumer's hooks (docs/design/bullmq-layer.md,
 * "Worker").
 */
import { EventEmitter } from 'node:events';
import { RateLimitedError } from '../handler-errors.js';
import type { Handler } from '../handler.js';
import type { Job as EmqJob } from '../job.js';
import { Consumer } from '../node/consumer/consumer.js';
import type { IoredisTransport } from '../node/ioredis-transport.js';
import { Queue as EmqQueue } from '../queue/queue.js';
import { openQueue } from './connection.js';
import { bullId, type Envelope, envelopeOf, failedReasonOf } from './envelope.js';
import { RateLimitError, UnsupportedBullMQError } from './errors.js';
import { Job } from './job.js';
import type { JobQueue } from './job-types.js';
import { applyRetention, type KeepRule } from './retention.js';
import { checkConcurrency, checkWorkerOptions, type WorkerOptions } from './worker-options.js';

export type { WorkerOptions } from './worker-options.js';

/** BullMQ's processor: resolves with the job's return value; throws to fail the attempt. */
export type Processor<DataType = any, ResultType = any, NameType extends string = string> = (
  job: Job<DataType, ResultType, NameType>,
  token?: string,
  signal?: AbortSignal,
) => Promise<ResultType>;

/** A job in a processor's hands: its Job and how its run ended. */
interface InHand {
  readonly job: Job;
  result?: unknown;
  error?: unknown;
}

/**
 * A BullMQ Worker: `new Worker(name, processor, { connection, concurrency })`. It claims the
 * queue's jobs and runs `processor(job, token, signal)` on each, at most `concurrency` at once.
 *
 * @example
 * import { Worker } from 'echomq/bullmq';
 *
 * const worker = new Worker('mail', async (job) => send(job.data.to), { connection, concurrency: 10 });
 * worker.on('completed', (job, result) => console.log(job.id, result));
 * worker.on('failed', (job, error) => console.error(job?.id, error.message));
 */
export class Worker<DataType = any, ResultType = any, NameType extends string = string> extends EventEmitter implements JobQueue {
  /** The BullMQ queue name. */
  readonly name: string;
  /** `<prefix>:<name>`. */
  readonly qualifiedName: string;
  /** The options it was made with. */
  readonly opts: WorkerOptions;
  /** The echomq queue underneath. */
  readonly emq: EmqQueue<Envelope>;
  /** A random id of this worker. */
  readonly id: string = Math.random().toString(36).slice(2, 12);
  private readonly transport: IoredisTransport;
  private readonly processor: Processor<DataType, ResultType, NameType>;
  private consumer: Consumer<Envelope> | undefined;
  private readonly inHand = new Map<string, InHand>();
  private paused = false;
  private closing: Promise<void> | undefined;
  private stopped: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private concurrencyNow: number;
  /** What `rateLimit(ms)` last asked: a processor's RateLimitError holds the queue that long. */
  private rateLimitMs = 1;

  constructor(name: string, processor?: string | URL | null | Processor<DataType, ResultType, NameType>, opts: WorkerOptions = {}) {
    super();
    if (typeof processor === 'string' || processor instanceof URL) {
      throw new UnsupportedBullMQError('a sandboxed processor (a file path or URL)', 'pass the processor function; run CPU-heavy work in your own worker_threads pool inside it');
    }
    if (typeof processor !== 'function') throw new UnsupportedBullMQError('a Worker without a processor (getNextJob)', 'pass the processor function');
    checkWorkerOptions(opts);
    if (opts.useWorkerThreads) throw new UnsupportedBullMQError('useWorkerThreads', 'pass the processor function');
    if (opts.skipLockRenewal) throw new UnsupportedBullMQError('skipLockRenewal', 'leases are renewed while a processor runs; set lockDuration to the lease you want');
    if (opts.settings?.backoffStrategy !== undefined) throw new UnsupportedBullMQError('settings.backoffStrategy', "use 'fixed' or 'exponential' backoff, or throw RetryAfterError(message, delayMs) (echomq) from the processor");
    this.name = name;
    this.opts = opts;
    this.processor = processor;
    this.concurrencyNow = opts.concurrency ?? 1;
    ({ qualifiedName: this.qualifiedName, transport: this.transport, emq: this.emq } = openQueue(name, opts, { keepCompletedMs: -1 }));
    try {
      this.consumer = this.makeConsumer();
    } catch (error) {
      void this.transport.close();
      throw error;
    }
    if (opts.autorun ?? true) this.run().catch((error: unknown) => this.report(error));
  }

  /** BullMQ's name of this queue's key of `type` (`<prefix>:<name>:<type>`; a job's, with its id): a name only, echomq's keys are its own. */
  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }

  /** Jobs processed at once. */
  get concurrency(): number {
    return this.concurrencyNow;
  }

  /** A new concurrency (BullMQ's setter), at once: the Consumer's setConcurrency. */
  set concurrency(concurrency: number) {
    checkConcurrency(concurrency);
    this.concurrencyNow = concurrency;
    this.consumer?.setConcurrency(concurrency);
  }

  /** BullMQ's signal that the processor rate-limited the worker: throw it after `rateLimit(ms)`. */
  static RateLimitError(): Error {
    return new RateLimitError();
  }

  /** Resolves once Redis answers. */
  async waitUntilReady(): Promise<void> {
    await this.transport.ping();
  }

  /**
   * Starts processing (a Worker made with `autorun: false`); resolves once the worker is closed.
   * Rejects when it runs already.
   */
  async run(): Promise<void> {
    if (this.running || this.closing) throw new Error('Worker is already running.');
    const { limiter } = this.opts;
    this.running = new Promise<void>((resolve) => (this.stopped = resolve));
    await this.waitUntilReady();
    if (this.closing) return this.running;
    if (limiter) await this.emq.setRateLimit({ limit: limiter.max, periodMs: limiter.duration });
    this.consumer ??= this.makeConsumer();
    this.consumer.start();
    this.emit('ready');
    return this.running;
  }

  /** Whether it runs (started, not closed). */
  isRunning(): boolean {
    return this.running !== undefined && this.closing === undefined;
  }

  /** Whether it is paused (`pause()`). */
  isPaused(): boolean {
    return this.paused;
  }

  /**
   * Stops taking jobs; resolves once its running jobs finished (with `doNotWaitActive`, at once:
   * they still finish).
   */
  async pause(doNotWaitActive?: boolean): Promise<void> {
    if (this.paused) return;
    this.paused = true;
    const consumer = this.consumer;
    this.consumer = undefined;
    const stopping = consumer?.stop();
    if (!doNotWaitActive) await stopping;
    this.emit('paused');
  }

  /** Takes jobs again after `pause()`. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.running && !this.closing) {
      this.consumer = this.makeConsumer();
      this.consumer.start();
    }
    this.emit('resumed');
  }

  /**
   * No job of the queue starts for `expireTimeMs` (echomq's `holdGroup(null, ms)`); a processor
   * then throws `Worker.RateLimitError()` to give its job back without spending an attempt.
   */
  async rateLimit(expireTimeMs: number): Promise<void> {
    this.rateLimitMs = Math.max(1, Math.floor(expireTimeMs));
    await this.emq.holdGroup(null, this.rateLimitMs);
  }

  /**
   * Stops taking jobs and waits for those running, however long they take (with `force`, aborts
   * them: their jobs go back to be claimed again), then closes its connection.
   */
  async close(force = false): Promise<void> {
    this.closing ??= (async () => {
      this.emit('closing', 'closing queue');
      await this.consumer?.stop(force ? 0 : undefined);
      await this.transport.close();
      this.stopped?.();
      this.emit('closed');
    })();
    await this.closing;
  }

  /** close(). */
  async disconnect(): Promise<void> {
    await this.close();
  }

  /** Throws UnsupportedBullMQError: the worker claims its jobs itself. */
  async getNextJob(_token: string, _opts?: { block?: boolean }): Promise<never> {
    throw new UnsupportedBullMQError('worker.getNextJob', 'give the Worker a processor (or use an echomq Consumer)');
  }

  private makeConsumer(): Consumer<Envelope> {
    const { lockDuration, lockRenewTime } = this.opts;
    const handler: Handler<Envelope> = async (claimed, { signal, progress }) => {
      const job = this.jobOf(claimed);
      const held: InHand = { job };
      this.inHand.set(claimed.id, held);
      job.attachRun(progress, (j, p) => this.emit('progress', j, p));
      this.emit('active', job, 'waiting');
      try {
        const result = await this.processor(job as Job<DataType, ResultType, NameType>, job.token, signal);
        held.result = result;
        return result;
      } catch (error) {
        held.error = error;
        if (error instanceof RateLimitError) throw new RateLimitedError(this.rateLimitMs, error.message);
        throw error;
      }
    };
    return new Consumer<Envelope>(this.transport, this.emq, handler, {
      concurrency: this.concurrency,
      // a claimed job is active in BullMQ's counts: claim only what the processors take at once
      prefetch: 0,
      // BullMQ's close waits for the running jobs however long they take; `close(true)` aborts them
      stopTimeoutMs: 2 ** 31 - 1,
      log: false,
      ...(lockDuration !== undefined ? { leaseMs: lockDuration } : {}),
      ...(lockRenewTime !== undefined ? { renewMs: lockRenewTime } : {}),
      hooks: {
        onCompleted: (claimed) => void this.settled(claimed, 'completed'),
        onRetried: (claimed, { error }) => void this.settled(claimed, 'retried', error),
        onDead: (claimed, { error }) => void this.settled(claimed, 'dead', error),
        onCancelled: (claimed) => void this.settled(claimed, 'dead', 'cancelled'),
        onFenced: (claimed) => void this.inHand.delete(claimed.id),
        onError: (error) => this.report(error),
      },
    });
  }

  /** Emits `error` to its listeners; with none, drops it (an `error` event nobody hears would throw out of a hook). */
  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error instanceof Error ? error : new Error(String(error)));
  }

  /** The Job a processor gets for a claimed echomq job. */
  private jobOf(claimed: EmqJob<Envelope>): Job {
    const { name, data, opts } = envelopeOf(claimed.payload);
    const job = new Job(this, name, data, opts, bullId(claimed.id));
    job.timestamp = opts.timestamp ?? claimed.createdAt;
    job.processedOn = Date.now();
    job.processedBy = this.opts.name;
    job.attemptsStarted = claimed.attempt;
    job.attemptsMade = claimed.attempt - 1;
    job.token = String(claimed.token);
    if (claimed.parent) job.setParent(claimed.parent.queue, claimed.parent.id);
    return job;
  }

  /** A job's run ended: apply its retention, then emit BullMQ's event. */
  private async settled(claimed: EmqJob<Envelope>, how: 'completed' | 'retried' | 'dead', errorText?: string): Promise<void> {
    const held = this.inHand.get(claimed.id) ?? { job: this.jobOf(claimed) };
    this.inHand.delete(claimed.id);
    const { job } = held;
    job.attemptsMade = claimed.attempt;
    try {
      if (how === 'completed') {
        job.returnvalue = held.result;
        job.finishedOn = Date.now();
        await applyRetention(this.emq, 'completed', claimed.id, (job.opts.removeOnComplete ?? this.opts.removeOnComplete) as KeepRule);
        this.emit('completed', job, held.result, 'active');
      } else {
        const error = held.error instanceof Error ? held.error : new Error(failedReasonOf(errorText, this.opts.prefix) ?? String(held.error));
        job.failedReason = error.message;
        job.stacktrace = error.stack === undefined ? [] : [error.stack];
        if (how === 'dead') {
          job.finishedOn = Date.now();
          await applyRetention(this.emq, 'dead', claimed.id, (job.opts.removeOnFail ?? this.opts.removeOnFail) as KeepRule);
        }
        this.emit('failed', job, error, 'active');
      }
    } catch (error) {
      this.report(error);
    }
    if (this.inHand.size === 0 && this.listenerCount('drained') > 0) {
      const { counts } = await this.emq.stats().catch(() => ({ counts: { pending: 1 } }));
      if (counts.pending === 0 && this.inHand.size === 0) this.emit('drained');
    }
  }
}
