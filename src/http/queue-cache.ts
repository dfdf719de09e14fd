import type { Context, Env } from 'hono';
import { openQueue } from '../queue/open-queue.js';
import type { QueueSurface } from '../queue/surface.js';
import type { QueueOptions } from '../queue/queue.js';
import type { Transport } from '../transport.js';

/**
 * How a family of routes finds the queue a request names (`E`: the app's hono environment): a
 * Queue or a PartitionedQueue, from the app's one cache.
 */
export type QueueOf<E extends Env> = (c: Context<E>, name: string) => Promise<QueueSurface>;

/** The most queue names kept per transport: names come from URLs, so anyone can make new ones. */
export const MAX_CACHED_QUEUES = 1_000;

/**
 * One queue per transport and queue name, resolved through the registry once (one read per name
 * per cache, not per request): a `PartitionedQueue` for a name the registry records as
 * partitioned, else a `Queue`. What a Queue learns sticks across requests: its name goes into the
 * registry with its first enqueue only, not with every enqueue request (an extra billed command
 * per request at the edge). Keyed weakly by the transport, whose lifetime the runtime owns; per
 * transport the least recently used names are dropped past `max`.
 *
 * @example
 * const queues = new QueueCache({ maxPayloadBytes: 65_536 });
 * await (await queues.get(transport, 'mail')).add({ to: 'a@example.com' });
 */
export class QueueCache {
  private readonly byTransport = new WeakMap<Transport, Map<string, Promise<QueueSurface>>>();

  constructor(
    private readonly options?: Omit<QueueOptions, 'partitions'>,
    private readonly max = MAX_CACHED_QUEUES,
  ) {}

  /**
   * The queue for `name` on `transport`, resolved on first use (concurrent first uses share the
   * one read). A bad name rejects with InvalidNameError and a failed read with its error, caching
   * nothing.
   */
  get(transport: Transport, name: string): Promise<QueueSurface> {
    let queues = this.byTransport.get(transport);
    if (!queues) {
      queues = new Map();
      this.byTransport.set(transport, queues);
    }
    let queue = queues.get(name);
    if (queue) {
      // a Map iterates in insertion order: moving a hit to the end keeps the oldest first
      queues.delete(name);
    } else {
      const opened = openQueue(transport, name, this.options);
      const map = queues;
      opened.catch(() => {
        if (map.get(name) === opened) map.delete(name);
      });
      queue = opened;
      if (queues.size >= this.max) queues.delete(queues.keys().next().value!);
    }
    queues.set(name, queue);
    return queue;
  }

  /**
   * Drops `name`'s entry: what the app does when its queue was refused with EMQPARTITION (the
   * name was partitioned, or unpartitioned, or obliterated and made again with another count since
   * it was resolved), so the next request resolves the name again.
   */
  forget(transport: Transport, name: string): void {
    this.byTransport.get(transport)?.delete(name);
  }
}
