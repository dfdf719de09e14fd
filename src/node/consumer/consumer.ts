import type { Handler } from '../../handler.js';
import type { QueueSurface } from '../../queue/surface.js';
import type { BlockingTransport } from '../../transport.js';
import { type ConnectOptions, connectConsumer } from './connect.js';
import type { ParkedLoopOptions } from './options.js';
import { ParkedConsumer, type TransportOwnership } from './parked-consumer.js';
import { SingleSlots } from './single-slots.js';

/** Options of a Consumer. */
export interface ConsumerOptions<Payload> extends ParkedLoopOptions<Payload> {
  /** Jobs run at once (default 1, at most 1,000,000). */
  readonly concurrency?: number;
}

/**
 * The parked consumer: up to `concurrency` jobs at once, each its own async task; a freed slot
 * claims again at once; with free slots and nothing to claim it parks on the doorbell and wakes
 * within a millisecond of new work. A handler's throw, rejection or timeout retries the job with
 * its backoff (UnrecoverableError: dead); nothing a handler does stops the loop. With short jobs
 * it also holds up to `prefetch` claimed jobs waiting for a slot (see ParkedLoopOptions.prefetch),
 * so a slot that frees starts its next job while the settle is in flight; never more than
 * `concurrency` handlers run at once. Given a PartitionedQueue it claims across its partitions,
 * `concurrency` and `prefetch` counting over them all, each partition woken by its own doorbell
 * over one subscriber connection per master (see ParkedConsumer).
 *
 * @example
 * const consumer = Consumer.connect<{ to: string }>(process.env.REDIS_URL!, 'mail', async (job) => {
 *   await send(job.payload.to);
 * }, { concurrency: 10 }).start();
 * process.on('SIGTERM', () => void consumer.stop());
 *
 * @example
 * const mail = new PartitionedQueue<{ to: string }>(transport, 'mail', { partitions: 8 });
 * new Consumer(transport, mail, async (job) => send(job.payload.to), { concurrency: 32 }).start();
 */
export class Consumer<Payload = unknown> extends ParkedConsumer<Payload, SingleSlots<Payload>> {

  constructor(
    transport: BlockingTransport,
    queue: QueueSurface<Payload> | string,
    handler: Handler<Payload>,
    options: ConsumerOptions<Payload> & TransportOwnership = {},
  ) {
    super(transport, queue, options, ({ timeoutMs, maxResultBytes }) => new SingleSlots(handler, options.concurrency, timeoutMs, maxResultBytes));
  }

  /** Jobs run at once (the option, default 1; setConcurrency changes it). */
  get concurrency(): number {
    return this.slots.concurrency;
  }

  /**
   * Runs up to `concurrency` jobs at once from now on, while it runs: a higher one claims and starts
   * more at once; a lower one lets the jobs running finish and starts none until fewer than it
   * run. Throws InvalidArgumentError unless an integer from 1 to 1,000,000.
   *
   * @example
   * consumer.setConcurrency(32); // a burst: more at once
   */
  setConcurrency(concurrency: number): void {
    this.slots.resize(concurrency);
    this.slotsResized();
  }

  /**
   * A consumer on its own connection to `url`, closed when it stops. A request waits for a
   * connection at most `connectTimeoutMs` (default 5,000), then fails with ConnectionError,
   * which the consumer logs (see ParkedLoopOptions.log) and backs off from. With `partitions`,
   * the queue is a PartitionedQueue of that many partitions.
   */
  static connect<P>(url: string, queue: string, handler: Handler<P>, options: ConsumerOptions<P> & ConnectOptions = {}): Consumer<P> {
    return connectConsumer<P, Consumer<P>>(url, queue, options, (transport, q) => new Consumer<P>(transport, q, handler, { ...options, ownsTransport: true }));
  }
}
