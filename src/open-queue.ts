import { PartitionedQueue } from './partitioned-queue.js';
import { Queue, type QueueOptions } from './queue.js';
import { listQueuesOp, runOps } from './scripts.js';
import type { Transport } from './transport.js';

/** A queue addressed by its name: a Queue, or a PartitionedQueue when the registry says it is partitioned. */
export type AnyQueue<Payload = unknown> = Queue<Payload> | PartitionedQueue<Payload>;

/**
 * How many partitions the registry records for queue `name`: 0 for a queue that is not
 * partitioned (or not registered yet). One read of the registry.
 */
export async function partitionsOf(transport: Transport, name: string): Promise<number> {
  const [{ partitions }] = await runOps(transport, [listQueuesOp()] as const);
  return partitions.get(name) ?? 0;
}

/**
 * Queue `name` as the registry knows it: a PartitionedQueue of the recorded count when it is
 * partitioned, else a Queue (a name not yet registered opens as a Queue). What the HTTP API and
 * the CLI do to address a queue by its name; one read of the registry. A bad name throws
 * InvalidNameError before any read.
 *
 * @example
 * const queue = await openQueue(transport, 'mail');
 * console.log((await queue.stats()).counts); // summed over its partitions when it has them
 */
export async function openQueue<Payload = unknown>(transport: Transport, name: string, options: Omit<QueueOptions, 'partitions'> = {}): Promise<AnyQueue<Payload>> {
  // the name is checked before the read: a Queue's constructor throws for a bad one
  const plain = new Queue<Payload>(transport, name, options);
  const partitions = await partitionsOf(transport, name);
  return partitions === 0 ? plain : new PartitionedQueue<Payload>(transport, name, { ...options, partitions });
}
