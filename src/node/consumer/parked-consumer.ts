import { InvalidArgumentError, shown } from '../../errors.js';
import { Queue } from '../../queue.js';
import type { BlockingTransport } from '../../transport.js';
import { Loop } from './loop.js';
import { type LoopSettings, type ParkedLoopOptions, settingsOf } from './options.js';
import type { SlotStrategy } from './slots.js';

/**
 * What Consumer and BatchConsumer share: a Loop driven by their slot strategy, and the surface
 * they show of it (start, stop, running, inFlight). Options are checked first, then the strategy
 * is made from them.
 *
 * @example
 * class Consumer<P> extends ParkedConsumer<P, SingleSlots<P>> {
 *   constructor(t, q, handler, options) { super(t, q, options, ({ timeoutMs }) => new SingleSlots(handler, options.concurrency, timeoutMs)); }
 * }
 */
export class ParkedConsumer<Payload, Slots extends SlotStrategy<Payload>> implements AsyncDisposable {
  /** The queue it consumes: the one given, or one built on the transport from the name given. */
  readonly queue: Queue<Payload>;
  protected readonly slots: Slots;
  private readonly loop: Loop<Payload>;
  private readonly ownsTransport: boolean;

  protected constructor(
    protected readonly transport: BlockingTransport,
    queue: Queue<Payload> | string,
    options: ParkedLoopOptions<Payload> & TransportOwnership,
    slotsFor: (settings: LoopSettings<Payload>) => Slots,
  ) {
    if (typeof queue !== 'string' && !(queue instanceof Queue)) {
      throw new InvalidArgumentError(`queue must be a Queue or a queue name, got ${shown(queue)}`);
    }
    this.ownsTransport = (options as Partial<TransportOwnership> | null)?.ownsTransport ?? false;
    this.queue = typeof queue === 'string' ? new Queue<Payload>(transport, queue) : queue;
    const settings = settingsOf(options, this.queue.maxResultBytes, this.queue.replication);
    this.slots = slotsFor(settings);
    this.loop = new Loop(transport, this.queue, settings, this.slots);
  }

  /** Whether the loop runs (started and not stopped). */
  get running(): boolean {
    return this.loop.running;
  }

  /** How many jobs are in hand (running, settling, or prefetched and waiting for a slot). */
  get inFlight(): number {
    return this.loop.inFlight;
  }

  /** Starts the loop; returns at once. */
  start(): this {
    this.loop.start();
    return this;
  }

  /**
   * Stops claiming at the settle point, waits up to `timeoutMs` (default `stopTimeoutMs`) for jobs
   * in hand to finish, then aborts the rest and gives them back (see Loop.stop) and releases the
   * doorbell connection; with `ownsTransport` (as `connect` sets), closes the transport too. A
   * parked consumer stops at once.
   */
  async stop(timeoutMs?: number): Promise<void> {
    await this.loop.stop(timeoutMs);
    if (this.ownsTransport) await this.transport.close();
  }

  /** stop(), for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** Whose the transport a consumer runs on is. */
export interface TransportOwnership {
  /** stop() also closes the transport: it was opened for this consumer alone (`connect` sets it). Default false. */
  readonly ownsTransport?: boolean;
}
