import { PartitionedQueue } from '../partitions/partitioned-queue.js';
import { Queue, type QueueOptions, registeredAlready } from './queue.js';
import { registrationOf } from './registry.js';
import type { Transport } from '../transport.js';

/**
 * The methods a PartitionedQueue answers as a Queue does (same signatures, checked by the
 * compiler), so the HTTP API and the CLI serve either by name.
 */
type QueueSurface<Payload> = Pick<
  Queue<Payload>,
  | 'add'
  | 'addBulk'
  | 'addAndWait'
  | 'waitFor'
  | 'getJob'
  | 'getJobs'
  | 'listDead'
  | 'stats'
  | 'rateLimits'
  | 'groups'
  | 'remove'
  | 'reprocess'
  | 'changePriority'
  | 'updateData'
  | 'moveToGroup'
  | 'pause'
  | 'resume'
  | 'pauseGroup'
  | 'resumeGroup'
  | 'setGroupLimit'
  | 'setRateLimit'
  | 'setGroupRateLimit'
  | 'holdGroup'
  | 'sweepGroup'
  | 'clean'
  | 'drain'
  | 'reprocessDead'
  | 'obliterate'
  | 'upsertScheduler'
  | 'getScheduler'
  | 'listSchedulers'
  | 'removeScheduler'
  | 'setDeadRetention'
  | 'deadRetention'
  | 'setEvents'
  | 'eventsSettings'
  | 'readEvents'
  | 'events'
  | 'eventEntries'
  | 'close'
>;

/** A queue addressed by its name: a Queue, or a PartitionedQueue when the registry says it is partitioned. */
export type AnyQueue<Payload = unknown> = Queue<Payload> | PartitionedQueue<Payload>;

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
  const { registered, partitions } = await registrationOf(transport, name);
  if (partitions === 0) {
    if (registered) registeredAlready(plain as Queue<unknown>);
    return plain;
  }
  const queue = new PartitionedQueue<Payload>(transport, name, { ...options, partitions }) satisfies QueueSurface<Payload>;
  for (const part of queue.parts) registeredAlready(part as Queue<unknown>);
  return queue;
}
