import { InvalidArgumentError, shown } from '../errors.js';
import type { Handler } from '../handler.js';
import { assertPartitions, parsePartitionName, partitionName } from '../partitions/partition-of.js';

/** A queue the Worker drains: a plain queue, or one partition (`mail~3`) of a partitioned queue. */
export interface ServedQueue {
  /** The queue's name as Redis knows it (`mail`, or `mail~3`). */
  readonly name: string;
  /** Its handler: a partition runs its partitioned queue's. */
  readonly handler: Handler<unknown>;
  /** The count of partitions of the queue it is a partition of; undefined for a plain queue. */
  readonly partitions: number | undefined;
}

/**
 * Which queues a Worker serves, from its handlers and its `partitions` counts: a handler of a
 * partitioned queue serves each of its partitions, each a queue of its own (docs/design.md,
 * "Partitioned queues"). Own properties only: a queue named `toString` or `constructor` has no
 * handler here, not the object prototype's method.
 *
 * @example
 * const served = new ServedQueues({ mail: send, thumbs: thumb }, { mail: 8 });
 * served.drained(); // ['mail~0', ..., 'mail~7', 'thumbs']
 */
export class ServedQueues {
  private readonly handlers: ReadonlyMap<string, Handler<unknown>>;
  private readonly counts: ReadonlyMap<string, number>;

  constructor(handlers: Readonly<Record<string, unknown>>, partitions: Readonly<Record<string, unknown>> = {}) {
    this.handlers = new Map(
      Object.keys(handlers).flatMap((name) => {
        const handler = handlers[name];
        return typeof handler === 'function' ? [[name, handler as Handler<unknown>]] : [];
      }),
    );
    if (typeof partitions !== 'object' || partitions === null) throw new InvalidArgumentError(`partitions must map queue names to counts, got ${shown(partitions)}`);
    const counts = new Map<string, number>();
    for (const name of Object.keys(partitions)) {
      const count = partitions[name];
      if (count === undefined) continue;
      if (!this.handlers.has(name)) throw new InvalidArgumentError(`partitions names ${name}, which has no handler`);
      assertPartitions(count);
      counts.set(name, count);
    }
    this.counts = counts;
  }

  /** Every queue a scheduled beat drains, in the handlers' order: a partitioned queue's partitions in theirs. */
  drained(): string[] {
    return [...this.handlers.keys()].flatMap((name) => this.partitionsOf(name) ?? [name]);
  }

  /** The partitions' names of partitioned queue `name` (`mail~0` ...), or undefined when it is none of the Worker's. */
  partitionsOf(name: string): string[] | undefined {
    const count = this.counts.get(name);
    return count === undefined ? undefined : Array.from({ length: count }, (_, i) => partitionName(name, i));
  }

  /**
   * The queue `name` a drain may run: a plain queue with a handler, or a partition of a
   * partitioned queue within its count; undefined for any other name (a partitioned queue's own
   * name included: its jobs are in its partitions).
   */
  resolve(name: string): ServedQueue | undefined {
    const partition = parsePartitionName(name);
    if (partition) {
      const count = this.counts.get(partition.queue);
      const handler = this.handlers.get(partition.queue);
      if (count === undefined || handler === undefined || partition.index >= count) return undefined;
      return { name, handler, partitions: count };
    }
    const handler = this.handlers.get(name);
    if (handler === undefined || this.counts.has(name)) return undefined;
    return { name, handler, partitions: undefined };
  }
}
