import { InvalidArgumentError, shown } from '../errors.js';
import { assertName } from '../keyspace.js';
import type { ScriptOp } from '../ops/op.js';
import { type Registration, registerQueueOp } from '../ops/register-queue.js';
import { assertPartitions, parsePartitionName } from '../partitions/partition-of.js';
import type { Scripts } from '../ops/scripts.js';

/**
 * What a Queue named `name` records in the registry: its own name, or, for a partition's name
 * (`mail~3`, with `partitions` given), its partitioned queue's name and count. A bad name throws
 * InvalidNameError; `partitions` with any other name, or a partition's name without it, throws
 * InvalidArgumentError.
 */
export function registrationFor(name: string, partitions: number | undefined): Registration {
  const partition = typeof name === 'string' ? parsePartitionName(name) : undefined;
  if (!partition) {
    assertName('queue', name);
    if (partitions !== undefined) throw new InvalidArgumentError(`partitions is for a partition's Queue (mail~3): open a partitioned queue with PartitionedQueue, got ${shown(partitions)} for ${name}`);
    return { queue: name, partitions: 0 };
  }
  assertPartitions(partitions);
  if (partition.index >= partitions) throw new InvalidArgumentError(`${name} is no partition of a queue of ${partitions} partitions`);
  return { queue: partition.queue, partitions };
}

/** Queues whose registration a read of the registry found made already (openQueue): their first enqueue skips it. */
const knownRegistered = new WeakSet<object>();

/** Tells the Registrar of `owner` (a Queue) that the registry holds its registration already. */
export function markRegistered(owner: object): void {
  knownRegistered.add(owner);
}

/**
 * A queue's registration in the registry of queues (`emq:queues`), made once, before its first
 * write: a round trip of its own, not beside the write, because the registry is in another slot,
 * so Redis would run a write sent beside a refused registration (EMQPARTITION) anyway. Not waited
 * for by replicas on its own: the write's WAIT that follows covers it on one Redis, and an entry
 * lost in a failover is written again by the next process.
 */
export class Registrar {
  private registered = false;
  /** The registration under way, shared by the enqueues that wait for it. */
  private registering: Promise<void> | undefined;

  constructor(
    private readonly scripts: Scripts,
    /** What it records: the queue's name, or for a partition its partitioned queue's name and count. */
    readonly registration: Registration,
    private readonly owner: object,
  ) {}

  /** Resolves once the registration is made (at once after the first time). */
  async ensure(): Promise<void> {
    if (this.registered) return;
    if (knownRegistered.has(this.owner)) {
      this.registered = true;
      return;
    }
    // concurrent first enqueues (a burst through the HTTP API) share the one registration
    this.registering ??= this.scripts.runOps([registerQueueOp(this.registration)] as const).then(
      () => {
        this.registered = true;
      },
      (error: unknown) => {
        this.registering = undefined;
        throw error;
      },
    );
    await this.registering;
  }

  /** Runs `read`, with the registration first in the same round trip when it is not made yet (a read writes nothing to refuse). */
  async withRead<T>(read: ScriptOp<T>): Promise<T> {
    if (this.registered) return (await this.scripts.runOps([read] as const))[0];
    const [, seen] = await this.scripts.runOps([registerQueueOp(this.registration), read] as const);
    this.registered = true;
    return seen;
  }

  /** Forgets the registration (the queue was obliterated): the next write makes it again. */
  forget(): void {
    this.registered = false;
    this.registering = undefined;
    knownRegistered.delete(this.owner);
  }
}
