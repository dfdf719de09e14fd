import type { Queue } from '../../queue.js';
import type { BlockingTransport } from '../../transport.js';
import { type BatchHandler, BatchSlots } from './batch-slots.js';
import type { ParkedLoopOptions } from './options.js';
import { ParkedConsumer } from './parked-consumer.js';

export type { BatchHandler } from './batch-slots.js';
export type { BatchOutcome } from './batch-outcome.js';

/** Options of a BatchConsumer. */
export interface BatchConsumerOptions<Payload> extends ParkedLoopOptions<Payload> {
  /** The most jobs per handler call (default 10). */
  readonly batchSize?: number;
  /** Batches run at once (default 1). */
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
    queue: Queue<Payload> | string,
    handler: BatchHandler<Payload>,
    options: BatchConsumerOptions<Payload> = {},
  ) {
    super(transport, queue, options, ({ timeoutMs }) => new BatchSlots(handler, options, timeoutMs));
    this.batchSize = this.slots.batchSize;
    this.concurrency = this.slots.concurrency;
  }
}
