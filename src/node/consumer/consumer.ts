import type { Handler } from '../../handler.js';
import { Queue, type QueueOptions } from '../../queue.js';
import type { BlockingTransport } from '../../transport.js';
import { IoredisTransport } from '../ioredis-transport.js';
import type { ParkedLoopOptions } from './options.js';
import { ParkedConsumer } from './parked-consumer.js';
import { SingleSlots } from './single-slots.js';

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
export class Consumer<Payload = unknown> extends ParkedConsumer<Payload, SingleSlots<Payload>> {
  /** Jobs run at once (the option, default 1). */
  readonly concurrency: number;
  private readonly owned: boolean;

  constructor(
    transport: BlockingTransport,
    queue: Queue<Payload> | string,
    handler: Handler<Payload>,
    options: ConsumerOptions<Payload> & { ownsTransport?: boolean } = {},
  ) {
    super(transport, queue, options, ({ timeoutMs }) => new SingleSlots(handler, options.concurrency, timeoutMs));
    this.concurrency = this.slots.concurrency;
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

  override async stop(timeoutMs?: number): Promise<void> {
    await super.stop(timeoutMs);
    if (this.owned) await this.transport.close();
  }
}
