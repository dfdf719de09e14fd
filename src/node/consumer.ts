import { performance } from 'node:perf_hooks';
import { type Handler, HandlerTimeoutError, runHandler } from '../handler.js';
import { InvalidArgumentError } from '../errors.js';
import { Queue, type QueueOptions } from '../queue.js';
import type { BlockingTransport } from '../transport.js';
import { IoredisTransport } from './ioredis-transport.js';
import type { ParkedLoopOptions } from './consumer-types.js';
import type { HeldJob } from './held-job.js';
import { ParkedLoop } from './parked-loop.js';

/** Options of a Consumer. */
export interface ConsumerOptions<Payload> extends ParkedLoopOptions<Payload> {
  /** Jobs run at once (default 1). */
  readonly concurrency?: number;
}

/**
 * The parked consumer: up to `concurrency` jobs at once, each its own async task; a freed slot
 * claims again at once; with free slots and nothing to claim it parks on the doorbell and wakes
 * within a millisecond of new work. A handler's throw, rejection or timeout retries the job with
 * its backoff (UnrecoverableError: dead); nothing a handler does stops the loop. With short jobs
 * it also holds up to `prefetch` claimed jobs waiting for a slot (see ParkedLoopOptions.prefetch),
 * so a slot that frees starts its next job while the settle is in flight; never more than
 * `concurrency` handlers run at once.
 *
 * @example
 * const consumer = Consumer.connect<{ to: string }>(process.env.REDIS_URL!, 'mail', async (job) => {
 *   await send(job.payload.to);
 * }, { concurrency: 10 }).start();
 * process.on('SIGTERM', () => void consumer.stop());
 */
export class Consumer<Payload = unknown> extends ParkedLoop<Payload> {
  readonly concurrency: number;
  private readonly owned: boolean;
  /** Handlers running now (a finished one settling does not count). */
  private runningHandlers = 0;

  constructor(
    transport: BlockingTransport,
    queue: Queue<Payload> | string,
    private readonly handler: Handler<Payload>,
    options: ConsumerOptions<Payload> & { ownsTransport?: boolean } = {},
  ) {
    super(transport, typeof queue === 'string' ? new Queue<Payload>(transport, queue) : queue, options);
    this.concurrency = options.concurrency ?? 1;
    if (!Number.isSafeInteger(this.concurrency) || this.concurrency < 1) {
      throw new InvalidArgumentError(`concurrency must be an integer >= 1, got ${String(options.concurrency)}`);
    }
    this.owned = options.ownsTransport ?? false;
  }

  /** A consumer on its own connection to `url`, closed when it stops. */
  static connect<P>(
    url: string,
    queue: string,
    handler: Handler<P>,
    options: ConsumerOptions<P> & { queue?: QueueOptions } = {},
  ): Consumer<P> {
    // Calls fail after two reconnect attempts instead of queueing for ever: the loop then backs
    // off on its own schedule, and stop() is never held up by a Redis that went away.
    const transport = IoredisTransport.connect(url, { maxRetriesPerRequest: 2 });
    return new Consumer<P>(transport, new Queue<P>(transport, queue, options.queue), handler, { ...options, ownsTransport: true });
  }

  protected capacity(): number {
    return this.concurrency - this.held.size;
  }

  protected startable(): number {
    return this.concurrency - this.runningHandlers;
  }

  protected prefetchSize(): number {
    return this.concurrency;
  }

  protected dispatch(jobs: Array<HeldJob<Payload>>): void {
    for (const waiting of jobs) {
      const held = this.track(waiting);
      this.runningHandlers++;
      this.keep(
        runHandler(this.handler, held.job, {
          controller: held.controller,
          timeoutMs: this.timeoutMs,
          ...(this.timeoutMs > 0 ? { onTimeout: () => held.controller.abort(new HandlerTimeoutError(this.timeoutMs)) } : {}),
        }).then((outcome) => {
          const settled = this.settle([{ held, outcome }]);
          this.runningHandlers--;
          this.handlerEnded(performance.now() - held.startedAt);
          return settled;
        }),
      );
    }
  }

  override async stop(timeoutMs?: number): Promise<void> {
    await super.stop(timeoutMs);
    if (this.owned) await this.transport.close();
  }
}
