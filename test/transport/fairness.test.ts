import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Queue } from '../../src/index.js';
import { keysOf, useRedis, leases } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

const LEASE = 60_000;

/** Deletes every key of a queue: property runs clean up after themselves, so the keyspace stays small. */
async function drop(raw: Redis, ...queues: ReadonlyArray<Queue<unknown>>): Promise<void> {
  for (const q of queues) {
    const keys = await raw.keys(`emq:{${q.name}}:*`);
    if (keys.length > 0) await raw.del(...keys);
  }
}

/** A job's group as a claim reports it, `*` for ungrouped. */
const entryOf = (group: string | undefined): string => group ?? '*';

describe('fairness of the ring', () => {
  const redis = useRedis();

  /** `count` single claims; each claim's job (or null when it got none), in claim order. */
  async function singleClaims<P>(queue: Queue<P>, count: number): Promise<Array<{ id: string; group: string; payload: P } | null>> {
    const out: Array<{ id: string; group: string; payload: P } | null> = [];
    for (let i = 0; i < count; i++) {
      const { jobs } = await leases(queue).claim(1, LEASE);
      expect(jobs.length).toBeLessThanOrEqual(1);
      const job = jobs[0];
      out.push(job ? { id: job.id, group: entryOf(job.group), payload: job.payload } : null);
    }
    return out;
  }

  it('single claims take turns across groups of very different sizes; the small group is served at once', async () => {
    const queue = redis.queue<number>();
    const sizes = { A: 100, B: 10, C: 1 };
    for (const [group, size] of Object.entries(sizes)) {
      await queue.addBulk(Array.from({ length: size }, (_, i) => ({ payload: i, group })));
    }

    const claims = await singleClaims(queue, 111);
    expect(claims.every((c) => c !== null)).toBe(true);
    const order = claims.map((c) => c!.group);

    // C's only job comes within the first full turn of the ring
    expect(order.slice(0, 3)).toContain('C');
    // never the same group twice in a row while another group still had work
    const left: Record<string, number> = { ...sizes };
    for (const [i, g] of order.entries()) {
      if (i > 0 && order[i - 1] === g) {
        const others = Object.entries(left).filter(([other, n]) => other !== g && n > 0);
        expect(others, `claim ${i} served ${g} twice in a row while ${JSON.stringify(others)} waited`).toEqual([]);
      }
      left[g] = left[g]! - 1;
    }
    // the exact round-robin: A B C, then A B until B runs dry, then A alone
    expect(order).toEqual([...'ABC', ...Array.from({ length: 9 }, () => ['A', 'B']).flat(), ...Array.from({ length: 90 }, () => 'A')]);
    // within a group, arrival order
    for (const g of Object.keys(sizes)) {
      const payloads = claims.filter((c) => c!.group === g).map((c) => c!.payload);
      expect(payloads).toEqual([...payloads].sort((x, y) => x - y));
    }
    expect(await leases(queue).claim(1, LEASE)).toMatchObject({ jobs: [] });
    expect(await redis.raw.llen(keysOf(queue).key('ring'))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('ungrouped work takes its own turn: a big group enqueued first does not starve it', async () => {
    const queue = redis.queue<string>();
    await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ payload: `a${i}`, group: 'A' })));
    await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: `u${i}` })));

    const order = (await singleClaims(queue, 14)).map((c) => c!.group);
    expect(order.slice(0, 2)).toContain('*');
    // while ungrouped work remains, at most one group job between two ungrouped ones
    const positions = order.flatMap((g, i) => (g === '*' ? [i] : []));
    expect(positions).toHaveLength(5);
    expect(positions[0]).toBeLessThanOrEqual(1);
    for (let i = 1; i < positions.length; i++) expect(positions[i]! - positions[i - 1]!).toBeLessThanOrEqual(2);
    expect(order.slice(positions[4]! + 1).every((g) => g === 'A')).toBe(true);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a batch claim shares the same way: half ungrouped, half the big group', async () => {
    const queue = redis.queue<string>();
    await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ payload: `a${i}`, group: 'A' })));
    await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: `u${i}` })));
    const { jobs } = await leases(queue).claim(10, LEASE);
    expect(jobs.map((j) => j.payload).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'u0', 'u1', 'u2', 'u3', 'u4']);
    expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, -1)).toEqual(['A']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  describe('a batch claim(n) hands out what n single claims would, in their order', () => {
    const GROUPS = ['g0', 'g1', 'g2', 'g3'] as const;
    type Step = { kind: 'claim'; n: number } | { kind: 'complete'; pick: number } | { kind: 'completeAll' };

    const scenario = fc.record({
      jobs: fc.array(
        fc.record({
          group: fc.option(fc.constantFrom(...GROUPS), { nil: null, freq: 4 }),
          priority: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) }),
        }),
        { minLength: 1, maxLength: 40 },
      ),
      /** Where the enqueue is cut into separate calls (so the ring is built in several steps). */
      cuts: fc.array(fc.nat({ max: 40 }), { maxLength: 3 }),
      limits: fc.record({
        g0: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        g1: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
        g2: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
        g3: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
      }),
      steps: fc.array(
        fc.oneof(
          { weight: 6, arbitrary: fc.record({ kind: fc.constant('claim' as const), n: fc.integer({ min: 1, max: 8 }) }) },
          { weight: 2, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat({ max: 20 }) }) },
          { weight: 1, arbitrary: fc.constant({ kind: 'completeAll' as const }) },
        ) as fc.Arbitrary<Step>,
        { minLength: 1, maxLength: 15 },
      ),
    });

    it('the same jobs after every batch, the same ring', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ jobs, cuts, limits, steps }) => {
          const single = redis.queue<number>();
          const batch = redis.queue<number>();
          const both = [single, batch] as const;
          const held = [new Map<string, number>(), new Map<string, number>()] as const;
          const ring = (q: Queue<number>): Promise<string[]> => redis.raw.lrange(keysOf(q).key('ring'), 0, -1);
          try {
            for (const q of both) {
              for (const g of GROUPS) {
                const limit = limits[g];
                if (limit !== null) await q.setGroupLimit(g, limit);
              }
              const bounds = [0, ...new Set(cuts.filter((c) => c > 0 && c < jobs.length)), jobs.length].sort((x, y) => x - y);
              for (let i = 0; i + 1 < bounds.length; i++) {
                const part = jobs.slice(bounds[i], bounds[i + 1]);
                await q.addBulk(
                  part.map((j, k) => ({
                    payload: bounds[i]! + k,
                    priority: j.priority, ...(j.group === null ? {} : { group: j.group }),
                  })),
                );
              }
            }
            expect(await ring(batch)).toEqual(await ring(single));

            for (const [s, step] of steps.entries()) {
              const where = `step ${s} ${JSON.stringify(step)}`;
              if (step.kind === 'claim') {
                const bySingle: string[] = [];
                for (let i = 0; i < step.n; i++) {
                  for (const job of (await leases(single).claim(1, LEASE)).jobs) {
                    bySingle.push(job.id);
                    held[0].set(job.id, job.token);
                  }
                }
                const { jobs: byBatch } = await leases(batch).claim(step.n, LEASE);
                for (const job of byBatch) held[1].set(job.id, job.token);
                // in the same order too: a consumer runs a batch in reply order, so a batch listing
                // one group's jobs together would run them ahead of the other groups' turns
                expect(byBatch.map((j) => j.id), where).toEqual(bySingle);
              } else {
                const ids = [...held[0].keys()].sort();
                const chosen = step.kind === 'completeAll' ? ids : ids.length > 0 ? [ids[step.pick % ids.length]!] : [];
                for (const [q, mine] of [[single, held[0]], [batch, held[1]]] as const) {
                  const items = chosen.map((id) => ({ id, token: mine.get(id)! }));
                  if (items.length === 0) continue;
                  expect((await leases(q).complete(items)).completed, where).toEqual(items.map(() => true));
                  for (const id of chosen) mine.delete(id);
                }
              }
              expect([...held[1].keys()].sort(), where).toEqual([...held[0].keys()].sort());
              expect(await ring(batch), where).toEqual(await ring(single));
              expect(await checkInvariants(redis.raw, single.name), where).toEqual([]);
              expect(await checkInvariants(redis.raw, batch.name), where).toEqual([]);
            }
          } finally {
            await drop(redis.raw, single, batch);
          }
        }),
        { numRuns: 25 },
      );
    }, 60_000);
  });

  describe('priority within one lane', () => {
    const PRIORITIES = [3, 0, 2, 0, 1, 3, 0, 2, 1, 0];
    /** Indexes of PRIORITIES in the order they must be claimed: lower priority first, then arrival. */
    const expected = (priorities: readonly number[]): number[] =>
      priorities.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]).map(([, i]) => i);

    for (const group of ['g', undefined]) {
      it(`lower values first, equal values in arrival order (${group === undefined ? 'ungrouped' : 'a group lane'})`, async () => {
        const queue = redis.queue<number>();
        for (const [i, priority] of PRIORITIES.entries()) {
          await queue.add(i, { priority, ...(group === undefined ? {} : { group }) });
        }
        const claimed = await singleClaims(queue, PRIORITIES.length);
        expect(claimed.map((c) => c!.payload)).toEqual(expected(PRIORITIES));
        expect(claimed.every((c) => c!.group === entryOf(group))).toBe(true);
        expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
      });
    }

    it('holds for random priorities, claimed singly or in batches', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 30 }),
          fc.boolean(),
          fc.integer({ min: 1, max: 7 }),
          async (priorities, grouped, n) => {
            const queue = redis.queue<number>();
            await queue.addBulk(priorities.map((priority, i) => ({ payload: i, priority, ...(grouped ? { group: 'g' } : {}) })));
            const order: number[] = [];
            for (;;) {
              const { jobs } = await leases(queue).claim(n, LEASE);
              // one lane: a batch is a run of that lane's head, in order
              order.push(...jobs.map((j) => j.payload));
              if (jobs.length < n) break;
            }
            expect(order).toEqual(expected(priorities));
            await drop(redis.raw, queue);
          },
        ),
        { numRuns: 20 },
      );
    });
  });
});
