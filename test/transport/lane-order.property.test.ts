import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/index.js';
import { keysOf, laneEntries, laneIds, queueName, sleep, useRedis, leases } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

/**
 * A lane is two keys, an ordered zset and an arrivals list (fresh jobs at the default priority),
 * and a claim pops them as one order: the lowest order first, whichever key holds it. These runs
 * mix every way a job reaches either key (a fresh job, a priority, a release back in its place, a
 * delayed job promoted with its older order, a job moved between groups) and check that each
 * claim takes exactly the lowest orders the lane held just before it.
 */
type Op =
  | { op: 'add'; priority: number; group: 'g' | null }
  | { op: 'addDelayed'; group: 'g' | null }
  | { op: 'claim'; n: number }
  | { op: 'release'; pick: number }
  | { op: 'promote' }
  | { op: 'move'; pick: number };

const group = fc.constantFrom('g' as const, null);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      priority: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) }),
      group,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('addDelayed' as const), group }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('claim' as const), n: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat({ max: 20 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('promote' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('move' as const), pick: fc.nat({ max: 20 }) }) },
);

describe('one order over a lane’s zset and arrivals list', () => {
  const redis = useRedis();

  /** The property, with group g unlimited or limited to `limit` (a limit of one hands out one job per claim, its lane's sizes read only as the pop needs them). */
  const lowestOrdersFirst = (limit: number | null) => async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        // one group only, so the ring alternates between `*` and g: claim one job at a time
        // through a queue whose only entry is the one being checked
        const queue = redis.queue<number>({ name: queueName('order') });
        if (limit !== null) await queue.setGroupLimit('g', limit);
        const k = keysOf(queue);
        const held: Job<number>[] = [];
        let seq = 0;
        for (const step of ops) {
          if (step.op === 'add') {
            await queue.add(seq++, { priority: step.priority, ...(step.group ? { group: step.group } : {}) });
          } else if (step.op === 'addDelayed') {
            await queue.add(seq++, { delayMs: 1, ...(step.group ? { group: step.group } : {}) });
          } else if (step.op === 'promote') {
            await sleep(2);
            await leases(queue).promote();
          } else if (step.op === 'release') {
            const h = held.splice(step.pick % Math.max(held.length, 1), 1)[0];
            if (h) await leases(queue).release([{ id: h.id, token: h.token }]);
          } else if (step.op === 'move') {
            const pending = [...(await laneIds(redis.raw, k)), ...(await laneIds(redis.raw, k, 'g'))];
            const id = pending[step.pick % Math.max(pending.length, 1)];
            if (id) await queue.moveToGroup(id, (await queue.getJob(id))?.group ? null : 'g');
          } else {
            // the ring decides which entry a claim of n serves; predict from both lanes' heads
            const ungrouped = (await laneEntries(redis.raw, k)).map(([id]) => id);
            const grouped = (await laneEntries(redis.raw, k, 'g')).map(([id]) => id);
            const activeInG = held.filter((j) => j.group === 'g').length;
            const claimed = await leases(queue).claim(step.n, 60_000);
            held.push(...claimed.jobs);
            const fromUngrouped = claimed.jobs.filter((j) => j.group === null).map((j) => j.id);
            const fromGroup = claimed.jobs.filter((j) => j.group === 'g').map((j) => j.id);
            expect(fromUngrouped).toEqual(ungrouped.slice(0, fromUngrouped.length));
            expect(fromGroup).toEqual(grouped.slice(0, fromGroup.length));
            // a claim leaves nothing it could have taken (within g's limit)
            const fromG = limit === null ? grouped.length : Math.min(grouped.length, Math.max(0, limit - activeInG));
            expect(claimed.jobs.length).toBe(Math.min(step.n, ungrouped.length + fromG));
          }
          expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
        }
      }),
      { numRuns: 40 },
    );
  };

  it('a claim takes the lowest orders of the lane, whichever key holds them', lowestOrdersFirst(null));

  it('so does a claim of a group limited to one job or two at a time', async () => {
    await lowestOrdersFirst(1)();
    await lowestOrdersFirst(2)();
  });

  it('a job released, a delayed job promoted and a priority job each take their place among fresh arrivals', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const early = await queue.add('early-delayed', { delayMs: 1 });
    const first = await queue.add('first');
    const second = await queue.add('second');
    const urgent = await queue.add('urgent', { priority: 1 });
    const [claimed] = (await leases(queue).claim(1, 60_000)).jobs;
    expect(claimed!.id).toBe(first.id);
    const third = await queue.add('third');
    await leases(queue).release([{ id: claimed!.id, token: claimed!.token }]);
    await sleep(2);
    await leases(queue).promote();
    // the arrivals list holds only second and third; the zset the rest, each at its own order
    expect(await redis.raw.lrange(k.fifo(), 0, '-1')).toEqual([second.id, third.id]);
    expect(await redis.raw.zrange(k.key('pending'), 0, '-1')).toEqual([early.id, first.id, urgent.id]);
    const order = (await leases(queue).claim(10, 60_000)).jobs.map((j) => j.payload);
    expect(order).toEqual(['early-delayed', 'first', 'second', 'third', 'urgent']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
