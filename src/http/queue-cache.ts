import { Queue, type QueueOptions } from '../queue.js';
import type { Transport } from '../transport.js';

/** The most queue names kept per transport: names come from URLs, so anyone can make new ones. */
export const MAX_CACHED_QUEUES = 1_000;

/**
 * One `Queue` per transport and queue name, so what a Queue learns sticks across requests: its
 * name goes into the registry with its first enqueue only, not with every enqueue request (an
 * extra billed command per request at the edge). Keyed weakly by the transport, whose lifetime
 * the runtime owns; per transport the least recently used names are dropped past `max`.
 *
 * @example
 * const queues = new QueueCache({ maxPayloadBytes: 65_536 });
 * await queues.get(transport, 'mail').add({ to: 'a@example.com' });
 */
export class QueueCache {
  private readonly byTransport = new WeakMap<Transport, Map<string, Queue>>();

  constructor(
    private readonly options?: QueueOptions,
    private readonly max = MAX_CACHED_QUEUES,
  ) {}

  /** The Queue for `name` on `transport`, made on first use (a bad name throws, caching nothing). */
  get(transport: Transport, name: string): Queue {
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
      queue = new Queue(transport, name, this.options);
      if (queues.size >= this.max) queues.delete(queues.keys().next().value!);
    }
    queues.set(name, queue);
    return queue;
  }
}
