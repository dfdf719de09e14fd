import { InvalidArgumentError, shown } from '../errors.js';
import { PartitionedQueue } from '../partitions/partitioned-queue.js';
import type { Transport } from '../transport.js';
import { Queue, type QueueOptions, registeredAlready } from './queue.js';
import { registrationOf } from './registry.js';
import type { QueueSurface } from './surface.js';

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
export async function openQueue<Payload = unknown>(transport: Transport, name: string, options: Omit<QueueOptions, 'partitions'> = {}): Promise<QueueSurface<Payload>> {
  // the name is checked before the read: a Queue's constructor throws for a bad one
  const plain = new Queue<Payload>(transport, name, options);
  const { registered, partitions } = await registrationOf(transport, name);
  if (partitions === 0) {
    if (registered) registeredAlready(plain as Queue<unknown>);
    return plain;
  }
  const queue = new PartitionedQueue<Payload>(transport, name, { ...options, partitions });
  for (const part of queue.parts) registeredAlready(part as Queue<unknown>);
  return queue;
}

/**
 * The queue a consumer was given: a Queue or a PartitionedQueue as it is, a name as a Queue on
 * `transport` (no registry read: `openQueue` reads it). Anything else is an InvalidArgumentError.
 *
 * @example
 * const queue = queueFrom(transport, 'mail'); // new Queue(transport, 'mail')
 */
export function queueFrom<Payload>(transport: Transport, queue: QueueSurface<Payload> | string): QueueSurface<Payload> {
  if (typeof queue === 'string') return new Queue<Payload>(transport, queue);
  if (queue instanceof Queue || queue instanceof PartitionedQueue) return queue;
  throw new InvalidArgumentError(`queue must be a Queue, a PartitionedQueue or a queue name, got ${shown(queue)}`);
}
