import { queueFrom } from '../../queue/open-queue.js';
import { streamOwner, type QueueSurface } from '../../queue/surface.js';
import type { BlockingTransport } from '../../transport.js';
import { ConnectionHealth } from './connection-health.js';
import { keyspace } from '../../keyspace.js';
import { IoredisTransport } from '../ioredis-transport.js';
import { DoorbellHub } from './doorbell-hub.js';
import { Loop } from './loop.js';
import { type LoopSettings, type ParkedLoopOptions, settingsOf } from './options.js';
import { PartitionBell } from './partition-bell.js';
import { Prefetch } from './prefetch.js';
import { SharedSlots } from './shared-slots.js';
import type { SlotStrategy } from './slots.js';

/**
 * What Consumer and BatchConsumer share: a Loop driven by their slot strategy, and the surface
 * they show of it (start, stop, running, inFlight). Options are checked first, then the strategy
 * is made from them. Over a PartitionedQueue it runs one Loop per partition, all sharing the one
 * strategy (SharedSlots: `concurrency` and prefetch are the consumer's, not each partition's),
 * each parked on its partition's bell, which one DoorbellHub rings for them all.
 *
 * @example
 * class Consumer<P> extends ParkedConsumer<P, SingleSlots<P>> {
 *   constructor(t, q, handler, options) { super(t, q, options, ({ timeoutMs }) => new SingleSlots(handler, options.concurrency, timeoutMs)); }
 * }
 */
export class ParkedConsumer<Payload, Slots extends SlotStrategy<Payload>> implements AsyncDisposable {
  /** The queue it consumes: the one given, or one built on the transport from the name given. */
  readonly queue: QueueSurface<Payload>;
  protected readonly slots: Slots;
  /** One loop, or one per partition (partition i's at index i). */
  private readonly loops: ReadonlyArray<Loop<Payload>>;
  /** What rings the partitions' bells (over a PartitionedQueue) and hears cancels, open while the consumer runs. */
  private readonly hub: DoorbellHub | undefined;
  private readonly ownsTransport: boolean;

  protected constructor(
    protected readonly transport: BlockingTransport,
    queue: QueueSurface<Payload> | string,
    options: ParkedLoopOptions<Payload> & TransportOwnership,
    slotsFor: (settings: LoopSettings<Payload>) => Slots,
  ) {
    this.queue = queueFrom(transport, queue);
    this.ownsTransport = (options as Partial<TransportOwnership> | null)?.ownsTransport ?? false;
    const settings = settingsOf(options, this.queue.maxResultBytes, this.queue.replication);
    this.slots = slotsFor(settings);
    const own = streamOwner(this.queue);
    const { parts, name } = this.queue;
    if (own) {
      this.loops = [new Loop(transport, own, settings, this.slots)];
      // a running job's cancel is heard at once over an ioredis connection, else at its next renewal
      if (transport instanceof IoredisTransport) this.hub = new DoorbellHub(transport, name, [], cancelChannels(parts, this.loops), () => this.listening());
      return;
    }
    const bells = parts.map((part) => new PartitionBell(transport, part.name));
    const slots = this.slots;
    const shared = new SharedSlots(
      slots,
      new Prefetch(settings.prefetch, () => slots.prefetchSize()),
      new ConnectionHealth(settings.log, this.queue.transport.endpoint, name),
    );
    this.loops = parts.map((part, i) => shared.join(new Loop(bells[i]!, part, settings, shared.view(), shared)));
    this.hub = new DoorbellHub(transport, name, bells, cancelChannels(parts, this.loops), () => this.listening());
  }

  /** Whether the loop runs (started and not stopped). */
  get running(): boolean {
    return this.loops[0]!.running;
  }

  /** How many jobs are in hand (running, settling, or prefetched and waiting for a slot), over every partition. */
  get inFlight(): number {
    let n = 0;
    for (const loop of this.loops) n += loop.inFlight;
    return n;
  }

  /** The slots were resized: each loop starts what now fits and claims for the room it has. */
  protected slotsResized(): void {
    for (const loop of this.loops) {
      loop.startWaiting();
      loop.slotFreed();
    }
  }

  /** The hub's subscription was (re)made: each loop renews its leases now (Loop.listening). */
  private listening(): void {
    for (const loop of this.loops) loop.listening();
  }

  /** Opens the doorbell hub and starts the loop (over a PartitionedQueue, every partition's loop); returns at once. */
  start(): this {
    this.hub?.open();
    for (const loop of this.loops) loop.start();
    return this;
  }

  /**
   * Stops claiming at the settle point, waits up to `timeoutMs` (default `stopTimeoutMs`) for jobs
   * in hand to finish, then aborts the rest and gives them back (see Loop.stop) and releases the
   * doorbell connection (over a PartitionedQueue: every partition's loop, then the hub's
   * connections); with `ownsTransport` (as `connect` sets), closes the transport too. A parked
   * consumer stops at once.
   */
  async stop(timeoutMs?: number): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop(timeoutMs)));
    await this.hub?.close();
    if (this.ownsTransport) await this.transport.close();
  }

  /** stop(), for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** Each partition's cancel channel (lua/cancel.lua), and the loop of that partition it tells. */
function cancelChannels<P>(parts: ReadonlyArray<{ readonly name: string }>, loops: ReadonlyArray<Loop<P>>): Map<string, (id: string, reason: string) => void> {
  return new Map(parts.map((part, i) => [`${keyspace(part.name).prefix}cancel`, (id: string, reason: string) => loops[i]!.cancelAsked(id, reason)]));
}

/** Whose the transport a consumer runs on is. */
export interface TransportOwnership {
  /** stop() also closes the transport: it was opened for this consumer alone (`connect` sets it). Default false. */
  readonly ownsTransport?: boolean;
}
