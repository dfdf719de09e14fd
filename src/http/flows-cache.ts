import { Flows, type FlowsOptions } from '../flows/flows.js';
import type { Transport } from '../transport.js';
import { MAX_CACHED_QUEUES } from './queue-cache.js';

/** A transport's Flows, and the queue names it has written to. */
interface Cached {
  readonly flows: Flows;
  readonly queues: Set<string>;
}

/**
 * One `Flows` per transport, so the queues it has registered stay registered across requests (a
 * queue name goes into the registry with the first flow that writes to it, not with every one:
 * an extra billed command per queue per request at the edge), as QueueCache does for Queues.
 * Names come from request bodies, so anyone can make new ones: past `max` names a transport's
 * Flows is replaced by a fresh one, which registers again what it writes to.
 *
 * @example
 * const flows = new FlowsCache({ maxPayloadBytes: 65_536 });
 * await flows.get(transport, ['pdf', 'render']).add(tree);
 */
export class FlowsCache {
  private readonly byTransport = new WeakMap<Transport, Cached>();

  constructor(
    private readonly options: FlowsOptions = {},
    private readonly max = MAX_CACHED_QUEUES,
  ) {}

  /** The Flows of `transport`, for a tree over `queues`. */
  get(transport: Transport, queues: ReadonlySet<string>): Flows {
    let cached = this.byTransport.get(transport);
    const added = cached ? [...queues].filter((q) => !cached!.queues.has(q)).length : queues.size;
    if (!cached || cached.queues.size + added > this.max) {
      cached = { flows: new Flows(transport, this.options), queues: new Set() };
      this.byTransport.set(transport, cached);
    }
    for (const queue of queues) cached.queues.add(queue);
    return cached.flows;
  }
}
