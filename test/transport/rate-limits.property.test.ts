import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Job, Queue, RateLimit } from '../../src/index.js';
import { keysOf, leases, queueName, sleep, useRedis } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { windowsOverLimit } from '../rate-windows.js';

/**
 * Rate limits under random arrivals, limits, claimers and real waits (docs/design.md, "Rate limits
 * and holds"). Every claim's server time (`claimed.now`) is recorded per job; the promise checked
 * after every step: in any window of a limit's period (any start time t: the starts in
 * (t - period, t]) no group with a limit, nor the queue with its own, started more jobs than its
 * limit, and no entry started a job while held. A beat (which readmits what is due first) is also
 * checked the other way: it hands out exactly what the limits leave room for, no fewer.
 */

const GROUPS = ['a', 'b', 'c', 'd'] as const;
type Group = (typeof GROUPS)[number];
/** A ring entry: a group, or `*` for the ungrouped jobs. */
type Entry = Group | '*';
const UNGROUPED = '*';
const LEASE = 60_000;

/** One run's setup: which groups take part, their limits and the queue's, and how many claimers. */
interface Setup {
  readonly groups: number;
  readonly groupRates: ReadonlyArray<RateLimit | null>;
  readonly queueRate: RateLimit | null;
  readonly claimers: number;
}

/** One step of a run: a plain descriptor, so a failing run shrinks to a readable list. */
type Op =
  | { op: 'enqueue'; jobs: number[] } // each a group index, or -1 for ungrouped (taken modulo the run's groups)
  | { op: 'claim'; claimer: number; n: number }
  | { op: 'race'; n: number } // every claimer at once
  | { op: 'beat'; claimer: number; n: number }
  | { op: 'promote' }
  | { op: 'wait'; ms: number }
  | { op: 'complete'; pick: number }
  | { op: 'hold'; pick: number; ms: number } // a held job given back with a hold (RateLimitedError)
  | { op: 'holdGroup'; group: number; ms: number };

const rate: fc.Arbitrary<RateLimit> = fc.record({ limit: fc.integer({ min: 1, max: 5 }), periodMs: fc.integer({ min: 50, max: 300 }) });

const setupArb: fc.Arbitrary<Setup> = fc
  .record({
    groups: fc.integer({ min: 1, max: 4 }),
    groupRates: fc.array(fc.option(rate, { nil: null, freq: 3 }), { minLength: 4, maxLength: 4 }),
    queueRate: fc.option(rate, { nil: null, freq: 2 }),
    claimers: fc.integer({ min: 1, max: 3 }),
  })
  // at least one limit, or the run proves nothing
  .filter((s) => s.queueRate !== null || s.groupRates.slice(0, s.groups).some((r) => r !== null));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('enqueue' as const), jobs: fc.array(fc.integer({ min: -1, max: 3 }), { minLength: 1, maxLength: 5 }) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('claim' as const), claimer: fc.nat({ max: 2 }), n: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('race' as const), n: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('beat' as const), claimer: fc.nat({ max: 2 }), n: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'promote' as const }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 120 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('complete' as const), pick: fc.nat({ max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hold' as const), pick: fc.nat({ max: 30 }), ms: fc.integer({ min: 20, max: 200 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('holdGroup' as const), group: fc.integer({ min: -1, max: 3 }), ms: fc.integer({ min: 20, max: 200 }) }) },
);

/** What the test knows without asking Redis: the jobs waiting per entry, the held ones, every start, the holds. */
class Model {
  readonly waiting = new Map<Entry, number>();
  readonly held: Array<{ id: string; token: number; entry: Entry }> = [];
  /** Start times (server ms) per ring entry, and `!` for all of them (the queue's own limit). */
  readonly starts = new Map<string, number[]>();
  /** When each held entry's hold ends (server ms). */
  readonly heldUntil = new Map<Entry, number>();

  constructor(readonly setup: Setup) {}

  entryOf(index: number): Entry {
    return index < 0 ? UNGROUPED : GROUPS[index % this.setup.groups]!;
  }

  rateOf(entry: Entry): RateLimit | null {
    return entry === UNGROUPED ? null : (this.setup.groupRates[GROUPS.indexOf(entry)] ?? null);
  }

  /** Starts of `entry` (or `!`) in the window of `periodMs` that ends at `now`, as the scripts count them. */
  used(entry: string, periodMs: number, now: number): number {
    return (this.starts.get(entry) ?? []).filter((s) => s > now - periodMs && s <= now).length;
  }

  /**
   * What a claim at `now` could hand out at most, the ring's turns aside: per entry its waiting jobs
   * within its headroom (none while held), in all within the queue's headroom. A beat, which
   * readmits every due entry before it claims, hands out exactly min(n, this).
   */
  room(now: number): number {
    let sum = 0;
    for (const [entry, waiting] of this.waiting) {
      if ((this.heldUntil.get(entry) ?? 0) > now) continue;
      const r = this.rateOf(entry);
      sum += r ? Math.min(waiting, Math.max(0, r.limit - this.used(entry, r.periodMs, now))) : waiting;
    }
    const q = this.setup.queueRate;
    return q ? Math.min(sum, Math.max(0, q.limit - this.used('!', q.periodMs, now))) : sum;
  }

  /** Records a claim's jobs, checking each against its entry's hold. */
  took(jobs: ReadonlyArray<Job<unknown>>, now: number): void {
    for (const job of jobs) {
      const entry: Entry = (job.group as Group | undefined) ?? UNGROUPED;
      const until = this.heldUntil.get(entry);
      expect(until === undefined || now >= until, `${job.id} of ${entry} started at ${now}, held until ${until}`).toBe(true);
      const left = this.waiting.get(entry) ?? 0;
      expect(left, `${job.id} of ${entry} handed out, none waiting`).toBeGreaterThan(0);
      this.waiting.set(entry, left - 1);
      this.held.push({ id: job.id, token: job.token, entry });
      for (const key of [entry, '!']) this.starts.set(key, [...(this.starts.get(key) ?? []), now]);
    }
  }

  /** The bound, over every start so far: no window of a limit's period holds more starts than it. */
  checkBound(): void {
    const limited: Array<[string, RateLimit | null]> = [['!', this.setup.queueRate], ...GROUPS.map((g): [string, RateLimit | null] => [g, this.rateOf(g)])];
    for (const [entry, r] of limited) {
      if (!r) continue;
      const over = windowsOverLimit(this.starts.get(entry) ?? [], r);
      expect(over, `${entry === '!' ? 'the queue' : `group ${entry}`} over ${r.limit} per ${r.periodMs} ms: starts ${JSON.stringify(this.starts.get(entry))}`).toEqual([]);
    }
  }
}

describe('rate limits under random arrivals, limits, claimers and waits', () => {
  const redis = useRedis();

  async function step(queues: ReadonlyArray<Queue<unknown>>, model: Model, op: Op): Promise<void> {
    const queue = queues[0]!;
    switch (op.op) {
      case 'enqueue': {
        const entries = op.jobs.map((i) => model.entryOf(i));
        await queue.addBulk(entries.map((e, i) => ({ payload: i, ...(e === UNGROUPED ? {} : { group: e }) })));
        for (const e of entries) model.waiting.set(e, (model.waiting.get(e) ?? 0) + 1);
        return;
      }
      case 'claim': {
        const claimed = await leases(queues[op.claimer % queues.length]!).claim(op.n, LEASE);
        expect(claimed.jobs.length).toBeLessThanOrEqual(Math.min(op.n, model.room(claimed.now)));
        model.took(claimed.jobs, claimed.now);
        return;
      }
      case 'race': {
        // each claim is one script: Redis runs them one after another, in an order of its own
        const all = await Promise.all(queues.map((q) => leases(q).claim(op.n, LEASE)));
        for (const claimed of [...all].sort((a, b) => a.now - b.now)) model.took(claimed.jobs, claimed.now);
        return;
      }
      case 'beat': {
        const claimed = await leases(queues[op.claimer % queues.length]!).beat({ n: op.n, leaseMs: LEASE });
        // readmitted first, so exactly what the limits and holds leave room for
        expect(claimed.jobs.length, `a beat of ${op.n} at ${claimed.now}`).toBe(Math.min(op.n, model.room(claimed.now)));
        model.took(claimed.jobs, claimed.now);
        return;
      }
      case 'promote':
        await leases(queue).promote();
        return;
      case 'wait':
        if (op.ms > 0) await sleep(op.ms);
        return;
      case 'complete': {
        if (model.held.length === 0) return;
        const [h] = model.held.splice(op.pick % model.held.length, 1);
        expect((await leases(queue).complete([{ id: h!.id, token: h!.token }])).completed).toEqual([true]);
        return;
      }
      case 'hold': {
        if (model.held.length === 0) return;
        const [h] = model.held.splice(op.pick % model.held.length, 1);
        const round = await leases(queue).round({ finished: [{ job: { id: h!.id, token: h!.token }, outcome: { kind: 'hold', error: '429', holdMs: op.ms } }], leaseMs: LEASE });
        expect(round.settled).toEqual(['pending']);
        model.waiting.set(h!.entry, (model.waiting.get(h!.entry) ?? 0) + 1);
        const until = Number(await redis.raw.hget(`${keysOf(queue).prefix}holds`, h!.entry));
        expect(until).toBeGreaterThan(0);
        model.heldUntil.set(h!.entry, until);
        return;
      }
      case 'holdGroup': {
        const entry = model.entryOf(op.group);
        const until = await queue.holdGroup(entry === UNGROUPED ? null : entry, op.ms);
        // a longer hold it had is kept
        expect(until).toBeGreaterThanOrEqual(model.heldUntil.get(entry) ?? 0);
        model.heldUntil.set(entry, until);
        return;
      }
    }
  }

  it('never starts more than a limit in any window of its period, nor a held entry; a beat hands out all the limits allow', async () => {
    await fc.assert(
      fc.asyncProperty(setupArb, fc.array(opArb, { minLength: 1, maxLength: 30 }), async (setup, ops) => {
        const name = queueName('rate-prop');
        const queues = Array.from({ length: setup.claimers }, () => redis.queue({ name }));
        const queue = queues[0]!;
        const model = new Model(setup);
        try {
          if (setup.queueRate) await queue.setRateLimit(setup.queueRate);
          for (let g = 0; g < setup.groups; g++) {
            const r = setup.groupRates[g];
            if (r) await queue.setGroupRateLimit(GROUPS[g]!, r);
          }
          const run = async (label: string, op: Op): Promise<void> => {
            try {
              await step(queues, model, op);
              model.checkBound();
              expect(await checkInvariants(redis.raw, name)).toEqual([]);
            } catch (error) {
              if (error instanceof Error) error.message = `${label} ${JSON.stringify(op)}: ${error.message}`;
              throw error;
            }
          };
          for (const [i, op] of ops.entries()) await run(`step ${i}`, op);
          // the end: once every window and hold has passed, a beat hands out what the limits allow
          // at once, no entry left off the ring (a throttle never outlives its reason)
          const longest = Math.max(setup.queueRate?.periodMs ?? 0, ...setup.groupRates.map((r) => r?.periodMs ?? 0));
          const lastStart = Math.max(0, ...(model.starts.get('!') ?? []));
          const lastHold = Math.max(0, ...model.heldUntil.values());
          const wait = Math.max(lastStart + longest, lastHold) - (await redis.serverNow());
          if (wait > 0) await sleep(wait + 2);
          await run('final', { op: 'beat', claimer: 0, n: 1000 });
        } finally {
          const keys = await redis.raw.keys(`emq:{${name}}:*`);
          if (keys.length > 0) await redis.raw.del(...keys);
        }
      }),
      // about 0.25 s a run; RATE_PROP_RUNS=300 for a longer hunt (passed on both transports, 2026-12-01)
      { numRuns: Number(process.env.RATE_PROP_RUNS ?? 60) },
    );
  }, 90_000);

  it('the window check itself: counts a start until a period later, exclusive', () => {
    expect(windowsOverLimit([0, 10, 99, 100], { limit: 3, periodMs: 100 })).toEqual([]);
    expect(windowsOverLimit([0, 10, 99, 100], { limit: 2, periodMs: 100 })).toEqual([
      { end: 99, count: 3 },
      { end: 100, count: 3 },
    ]);
    expect(windowsOverLimit([5, 5, 5], { limit: 2, periodMs: 1 })).toEqual([{ end: 5, count: 3 }]);
    expect(windowsOverLimit([0, 1, 2], { limit: 1, periodMs: 1 })).toEqual([]);
  });
});
