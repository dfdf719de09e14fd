import type { QueueSurface } from '../../queue/surface.js';
import type { BlockingTransport } from '../../transport.js';
import { type BatchHandler, BatchSlots } from './batch-slots.js';
import { type ConnectOptions, connectConsumer } from './connect.js';
import type { ParkedLoopOptions } from './options.js';
import { ParkedConsumer, type TransportOwnership } from './parked-consumer.js';

export type { BatchHandler } from './batch-slots.js';
export type { BatchOutcome } from './batch-outcome.js';

/** Options of a BatchConsumer. */
export interface BatchConsumerOptions<Payload> extends ParkedLoopOptions<Payload> {
  /** The most jobs per handler call (default 10, at most 1,000,000). */
  readonly batchSize?: number;
  /** Batches run at once (default 1, at most 1,000,000). */
  readonly concurrency?: number;
}

/**
 * A parked consumer that hands up to `batchSize` jobs to one handler call and settles each job
 * on its own, as the handler's BatchOutcome for it says (or all completed when it returns
 * nothing). The batch's signal aborts on stop, on timeout, or when any of its leases is lost.
 *
 * @example
 * new BatchConsumer<Row>(transport, 'rows', async (jobs) => {
 *   await db.insertMany(jobs.map((j) => j.payload));
 * }, { batchSize: 100 }).start();
 */
export class BatchConsumer<Payload = unknown> extends ParkedConsumer<Payload, BatchSlots<Payload>> {
  /** The most jobs per handler call (the option, default 10). */
  readonly batchSize: number;
  /** Batches run at once (the option, default 1). */
  readonly concurrency: number;

  constructor(
    transport: BlockingTransport,
    queue: QueueSurface<Payload> | string,
    handler: BatchHandler<Payload>,
    options: BatchConsumerOptions<Payload> & TransportOwnership = {},
  ) {
    super(transport, queue, options, ({ timeoutMs, maxResultBytes }) => new BatchSlots(handler, options, timeoutMs, maxResultBytes));
    this.batchSize = this.slots.batchSize;
    this.concurrency = this.slots.concurrency;
  }

  /**
   * A batch consumer on its own connection to `url`, closed when it stops (see Consumer.connect).
   *
   * @example
   * await using rows = BatchConsumer.connect<Row>(process.env.REDIS_URL!, 'rows', async (jobs) => {
   *   await db.insertMany(jobs.map((j) => j.payload));
   * }, { batchSize: 100 }).start();
   */
  static connect<P>(url: string, queue: string, handler: BatchHandler<P>, options: BatchConsumerOptions<P> & ConnectOptions = {}): BatchConsumer<P> {
    return connectConsumer<P, BatchConsumer<P>>(url, queue, options, (transport, q) => new BatchConsumer<P>(transport, q, handler, { ...options, ownsTransport: true }));
  }
}
