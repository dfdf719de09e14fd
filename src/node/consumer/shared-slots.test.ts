import { describe, expect, it } from 'vitest';
import { BatchSlots } from './batch-slots.js';
import { ConnectionHealth } from './connection-health.js';
import { Prefetch } from './prefetch.js';
import { SharedSlots, type SharingLoop } from './shared-slots.js';
import { SingleSlots } from './single-slots.js';

/** A loop's counts as SharedSlots reads them, and what it was told. */
class Counts implements SharingLoop {
  heldCount = 0;
  pendingCount = 0;
  constructor(
    private readonly name: string,
    private readonly log: string[],
  ) {}
  wake(): void {
    this.log.push(`wake ${this.name}`);
  }
  startWaiting(): void {
    this.log.push(`start ${this.name}`);
  }
}

function share<P>(slots: SingleSlots<P> | BatchSlots<P>, loops: number) {
  const log: string[] = [];
  const shared = new SharedSlots(slots, new Prefetch(0, () => slots.prefetchSize()), new ConnectionHealth(() => {}, undefined, 'q'));
  const views = Array.from({ length: loops }, () => shared.view());
  const counts = views.map((_, i) => shared.join(new Counts(String(i), log)));
  return { shared, views, log, loops: counts };
}

describe('SharedSlots', () => {
  it("a loop's capacity is the consumer's, less what every other loop holds, has waiting or has asked for", () => {
    const { views, loops } = share(new SingleSlots(() => {}, 10, 0), 3);
    expect(views.map((v) => v.capacity(0))).toEqual([10, 10, 10]);
    loops[1]!.heldCount = 4;
    loops[2]!.pendingCount = 3; // waiting for a slot, or claimed by a request in flight
    expect(views[0]!.capacity(2)).toBe(10 - 2 - 4 - 3);
    expect(views[1]!.capacity(4)).toBe(10 - 4 - 3);
    expect(views[2]!.capacity(0)).toBe(10 - 4);
  });

  it('a BatchConsumer: the batches in hand count once, whichever loop took them', () => {
    const { views, loops } = share(new BatchSlots(() => {}, { batchSize: 5, concurrency: 2 }, 0), 2);
    expect(views[0]!.capacity(0)).toBe(10);
    loops[1]!.pendingCount = 5;
    expect(views[0]!.capacity(0)).toBe(5);
    expect(views[1]!.capacity(0)).toBe(10);
  });

  it('a freed slot wakes every loop, a different one first each time; a handler ended starts the others', () => {
    const { shared, log } = share(new SingleSlots(() => {}, 2, 0), 3);
    shared.slotFreed();
    shared.slotFreed();
    expect(log.splice(0)).toEqual(['wake 0', 'wake 1', 'wake 2', 'wake 1', 'wake 2', 'wake 0']);
    shared.handlerEnded(1);
    expect(log.splice(0)).toEqual(['start 2', 'start 0']);
  });
});
