import type { ConnectionHealth } from './connection-health.js';
import type { HeldJob } from './jobs-in-hand.js';
import type { Prefetch } from './prefetch.js';
import type { SettleCall } from './settles.js';
import type { SlotHost, SlotStrategy } from './slots.js';

/**
 * What one of several loops sharing a consumer's slots reads and tells of the others: the Loop
 * takes it (see Loop's constructor), and SharedSlots is it.
 */
export interface LoopShare {
  /** One prefetch policy for them all, so what may wait in hand does not multiply by the loops. */
  readonly prefetch: Prefetch;
  /** One health for them all: one log line per change of the connection, not one per loop. */
  readonly health: ConnectionHealth;
  /** Some loop's slots freed (or its request came back): every loop waiting for a slot looks again. */
  slotFreed(): void;
}

/** What SharedSlots reads of each loop, and how it wakes it. */
export interface SharingLoop {
  /** Jobs running or settling. */
  readonly heldCount: number;
  /** Jobs claimed and waiting for a slot, and jobs its requests in flight asked for. */
  readonly pendingCount: number;
  /** Its wait for a free slot ends: it looks at its room again. */
  wake(): void;
  /** Its waiting jobs start while slots are free. */
  startWaiting(): void;
}

/**
 * One consumer's slots shared by several loops (a PartitionedQueue's: one per partition), so
 * `concurrency` is the consumer's total, not each loop's. Each loop gets a view (`view()`): the
 * same slot strategy, whose capacity is the consumer's less what every other loop holds or has
 * asked for; a slot freed in one loop wakes every loop waiting for one, and a handler that ends
 * in one starts jobs waiting in the others. Loops are woken in turn, a different one first each
 * time, so no partition is always served first.
 *
 * @example
 * const shared = new SharedSlots(new SingleSlots(handler, 10, 0), prefetch, health);
 * const loops = queue.parts.map((part, i) => shared.join(new Loop(bells[i], part, settings, shared.view(), shared)));
 */
export class SharedSlots<Payload> implements LoopShare {
  private readonly loops: SharingLoop[] = [];
  private readonly views: Array<SlotStrategy<Payload>> = [];
  /** Which loop is woken first next time. */
  private turn = 0;

  constructor(
    /** The consumer's own strategy (SingleSlots or BatchSlots): its counts are the consumer's. */
    readonly slots: SlotStrategy<Payload>,
    readonly prefetch: Prefetch,
    readonly health: ConnectionHealth,
  ) {}

  /** A strategy for the next loop to be made; `join` it with that loop, in the same order. */
  view(): SlotStrategy<Payload> {
    const view = new SlotsView(this, this.views.length);
    this.views.push(view);
    return view;
  }

  /** The loop the latest view went to. */
  join<L extends SharingLoop>(loop: L): L {
    this.loops.push(loop);
    return loop;
  }

  slotFreed(): void {
    const n = this.loops.length;
    const first = this.nextTurn();
    for (let k = 0; k < n; k++) this.loops[(first + k) % n]!.wake();
  }

  /** A handler of loop `from` ended: jobs waiting in the other loops may start now. */
  handlerEnded(from: number): void {
    const n = this.loops.length;
    const first = this.nextTurn();
    for (let k = 0; k < n; k++) {
      const i = (first + k) % n;
      if (i !== from) this.loops[i]!.startWaiting();
    }
  }

  /** Jobs the loops other than `index` hold (running, settling), and have waiting or asked for. */
  othersOf(index: number): { held: number; pending: number } {
    let held = 0;
    let pending = 0;
    this.loops.forEach((loop, i) => {
      if (i === index) return;
      held += loop.heldCount;
      pending += loop.pendingCount;
    });
    return { held, pending };
  }

  private nextTurn(): number {
    const first = this.turn;
    this.turn = (first + 1) % Math.max(1, this.loops.length);
    return first;
  }
}

/** One loop's view of the shared slots: what the loop may take is what every other loop leaves. */
class SlotsView<Payload> implements SlotStrategy<Payload> {
  private host: SlotHost<Payload> | undefined;
  private hostView: SlotHost<Payload> | undefined;

  constructor(
    private readonly shared: SharedSlots<Payload>,
    private readonly index: number,
  ) {}

  get claimUnit(): number {
    return this.shared.slots.claimUnit;
  }

  /**
   * The consumer's capacity given every loop's held jobs, less the others' waiting jobs and
   * requests in flight: the loop's room (capacity + prefetch - its own waiting) is then the
   * consumer's, less everything every other loop has in hand or on its way.
   */
  capacity(held: number): number {
    const others = this.shared.othersOf(this.index);
    return this.shared.slots.capacity(held + others.held) - others.pending;
  }

  startable(): number {
    return this.shared.slots.startable();
  }

  prefetchSize(): number {
    return this.shared.slots.prefetchSize();
  }

  freedBy(calls: ReadonlyArray<SettleCall<Payload>>): number {
    return this.shared.slots.freedBy(calls);
  }

  dispatch(jobs: ReadonlyArray<HeldJob<Payload>>, host: SlotHost<Payload>): void {
    this.shared.slots.dispatch(jobs, this.hostOf(host));
  }

  /** `host` (the loop's Runs), but a handler that ends also lets the other loops' waiting jobs start. */
  private hostOf(host: SlotHost<Payload>): SlotHost<Payload> {
    if (this.host === host && this.hostView) return this.hostView;
    const shared = this.shared;
    const index = this.index;
    this.host = host;
    return (this.hostView = {
      queue: host.queue,
      start: (waiting, controller) => host.start(waiting, controller),
      settle: (entries) => host.settle(entries),
      handlerEnded: (ms) => {
        host.handlerEnded(ms);
        shared.handlerEnded(index);
      },
      progress: (jobs, value) => host.progress(jobs, value),
      steps: host.steps,
      keep: (run) => host.keep(run),
      slotFreed: () => host.slotFreed(),
    });
  }
}
