import { describe, expect, it } from 'vitest';
import { HandlerTimeoutError, type Outcome } from '../../handler.js';
import type { Job } from '../../job.js';
import { BatchSlots } from './batch-slots.js';
import { type HeldJob, JobsInHand } from './jobs-in-hand.js';
import type { SettleCall, SettleEntry } from './settles.js';
import { SingleSlots } from './single-slots.js';
import type { SlotHost } from './slots.js';

/** A claimed job waiting for a slot; nothing here reads more of the job than its id. */
const waiting = (n: number): HeldJob<number> => ({
  job: { id: `JOB:${n}`, payload: n, token: 1 } as unknown as Job<number>,
  controller: new AbortController(),
  startedAt: 0,
  fenced: false,
  recorded: false,
  abandoned: false,
  settling: false,
  leaseEnd: Number.POSITIVE_INFINITY,
});

/** settle() calls as the loop counts them: `sizes[i]` entries in call i. */
const calls = (...sizes: number[]): Array<SettleCall<number>> =>
  sizes.map((n) => ({ entries: Array.from({ length: n }, (_, i) => ({ held: waiting(i), outcome: { kind: 'complete' } })), resolve: () => {} }));

/** A host that records what a strategy does; its settles resolve when `recordSettles()` is called. */
function host(): SlotHost<number> & {
  settled: Array<ReadonlyArray<SettleEntry<number>>>;
  ended: number;
  freed: number;
  runs: Array<Promise<void>>;
  recordSettles(): void;
} {
  const jobs = new JobsInHand<number>({});
  const recorded: Array<() => void> = [];
  return {
    queue: 'slots-test',
    settled: [],
    ended: 0,
    freed: 0,
    runs: [],
    start: (w, controller) => jobs.start(w, controller),
    settle(entries) {
      this.settled.push(entries);
      return new Promise<void>((resolve) => recorded.push(resolve));
    },
    handlerEnded() {
      this.ended++;
    },
    keep(run) {
      this.runs.push(run);
    },
    slotFreed() {
      this.freed++;
    },
    progress: async () => true,
    recordSettles: () => recorded.splice(0).forEach((resolve) => resolve()),
  };
}

const outcomes = (settled: ReadonlyArray<SettleEntry<number>>): Array<Outcome['kind']> => settled.map((e) => e.outcome.kind);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SingleSlots (Consumer)', () => {
  it('counts one job per slot: capacity less the jobs held, a claim unit of one, one slot per settled job', () => {
    const slots = new SingleSlots<number>(() => {}, 4, 0);
    expect(slots.capacity(0)).toBe(4);
    expect(slots.capacity(6)).toBe(-2); // prefetched jobs started while others settle
    expect(slots.startable()).toBe(4);
    expect(slots.prefetchSize()).toBe(4);
    expect(slots.claimUnit).toBe(1);
    expect(slots.freedBy(calls(1, 1, 3))).toBe(5);
    expect(new SingleSlots<number>(() => {}, undefined, 0).concurrency).toBe(1);
    expect(() => new SingleSlots<number>(() => {}, 0, 0)).toThrow(/concurrency must be an integer from 1 to 1000000, got 0/);
    expect(() => new SingleSlots<number>(() => {}, 1.5, 0)).toThrow(/concurrency/);
    // 2^53 - 1 was taken: its claims (slots plus prefetch) were past 2^53, and the script refused every one
    expect(() => new SingleSlots<number>(() => {}, 2 ** 53 - 1, 0)).toThrow(/concurrency must be an integer from 1 to 1000000, got 9007199254740991/);
    expect(new SingleSlots<number>(() => {}, 1_000_000, 0).concurrency).toBe(1_000_000);
  });

  it('frees a slot to start when the handler ends, before its settle is recorded', async () => {
    let finish!: () => void;
    const slots = new SingleSlots<number>(() => new Promise<void>((resolve) => (finish = resolve)), 2, 0);
    const h = host();
    slots.dispatch([waiting(1)], h);
    expect(slots.startable()).toBe(1);
    finish();
    await tick();
    expect(outcomes(h.settled[0]!)).toEqual(['complete']);
    expect(h.ended).toBe(1);
    expect(slots.startable()).toBe(2); // settling, not running
    h.recordSettles();
    await Promise.all(h.runs);
  });

  it('settles a throw as a retry, and aborts a handler past its timeout', async () => {
    const slots = new SingleSlots<number>(async (job, { signal }) => {
      if (job.payload === 1) throw new Error('boom');
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    }, 2, 5);
    const h = host();
    const [one, two] = [waiting(1), waiting(2)];
    slots.dispatch([one, two], h);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await tick();
    expect(h.settled.map(outcomes)).toEqual([['retry'], ['retry']]);
    expect(h.settled[1]![0]!.outcome).toMatchObject({ error: expect.stringContaining('past its timeout') as unknown });
    expect(two.controller.signal.reason).toBeInstanceOf(HandlerTimeoutError);
    h.recordSettles();
  });
});

describe('BatchSlots (BatchConsumer)', () => {
  it('counts in whole batches: capacity and start room per batch, claims in batches, a batch per settle call', () => {
    const slots = new BatchSlots<number>(() => {}, { batchSize: 5, concurrency: 2 }, 0);
    expect(slots.capacity()).toBe(10);
    expect(slots.startable()).toBe(10);
    expect(slots.prefetchSize()).toBe(10);
    expect(slots.claimUnit).toBe(5);
    expect(slots.freedBy(calls(1, 5))).toBe(10);
    expect(new BatchSlots<number>(() => {}, {}, 0)).toMatchObject({ batchSize: 10, concurrency: 1 });
    expect(() => new BatchSlots<number>(() => {}, { batchSize: 0 }, 0)).toThrow(/batchSize must be an integer from 1 to 1000000, got 0/);
    expect(() => new BatchSlots<number>(() => {}, { concurrency: -1 }, 0)).toThrow(/concurrency/);
    expect(() => new BatchSlots<number>(() => {}, { batchSize: 1_000_001 }, 0)).toThrow(/batchSize must be an integer from 1 to 1000000/);
    expect(() => new BatchSlots<number>(() => {}, { concurrency: 2 ** 53 - 1 }, 0)).toThrow(/concurrency must be an integer from 1 to 1000000/);
  });

  it('hands each batch to one call sharing one signal, and holds its slot until every settle is recorded', async () => {
    const seen: number[][] = [];
    const slots = new BatchSlots<number>((jobs) => {
      seen.push(jobs.map((j) => j.payload));
      return jobs.map((j) => (j.payload % 3 === 2 ? { retry: new Error('no') } : 'completed'));
    }, { batchSize: 3, concurrency: 3 }, 0);
    const h = host();
    slots.dispatch([1, 2, 3, 4, 5, 6, 7].map(waiting), h);
    expect(seen).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(slots.capacity()).toBe(0);
    expect(slots.startable()).toBe(0);
    await tick();
    expect(h.settled.map(outcomes)).toEqual([['complete', 'retry', 'complete'], ['complete', 'retry', 'complete'], ['complete']]);
    const [first, second] = h.settled.map((entries) => entries.map((e) => e.held.controller));
    expect(new Set(first).size).toBe(1);
    expect(first![0]).not.toBe(second![0]);
    expect(h.ended).toBe(3);
    expect(slots.startable()).toBe(9); // the handlers ended
    expect(slots.capacity()).toBe(0); // their settles are not recorded yet
    h.recordSettles();
    await Promise.all(h.runs);
    expect(slots.capacity()).toBe(9);
    expect(h.freed).toBe(3);
  });

  it('retries the whole batch on a throw, and aborts it past its timeout', async () => {
    const thrown = new BatchSlots<number>(() => {
      throw new Error('thrown before any await');
    }, { batchSize: 2 }, 0);
    // a handler that never returns (one whose promise resolves in the abort itself beats the timeout's
    // rejection and completes, here as in runHandler)
    const slow = new BatchSlots<number>(() => new Promise<void>(() => {}), { batchSize: 2 }, 5);
    const h = host();
    const timedOut = [waiting(3), waiting(4)];
    thrown.dispatch([waiting(1), waiting(2)], h);
    slow.dispatch(timedOut, h);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.settled.map(outcomes)).toEqual([['retry', 'retry'], ['retry', 'retry']]);
    expect(h.settled[1]![0]!.held.controller.signal.reason).toBeInstanceOf(HandlerTimeoutError);
    h.recordSettles();
  });
});
