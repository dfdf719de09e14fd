import { describe, expect, it } from 'vitest';
import { buryJobs, completeJobs, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneIds, leases, scriptsOf, sleep, useRedis } from '../helpers.js';
import { listJobsOp } from '../../src/ops/list-jobs.js';

/**
 * getJobs(state, {offset, limit}): a page of one state's jobs in that state's order (pending lane
 * by lane in claim order, scheduled by due time, active by lease deadline, completed and dead most
 * recent first). It only reads: the keyspace is the same after.
 */
describe('getJobs', () => {
  const redis = useRedis();

  it('lists pending jobs lane by lane, ungrouped first and groups by name, each lane in claim order', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    await queue.addBulk([
      { payload: 'u1' },
      { payload: 'b1', group: 'b'},
      { payload: 'a1', group: 'a'},
      { payload: 'u-late', priority: 2},
      { payload: 'u2' },
      { payload: 'a-late', group: 'a', priority: 1},
      { payload: 'a2', group: 'a'},
    ]);
    // u1 runs and is retried: it goes back to its place in the zset, ahead of u2 in the list
    const [u1] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(u1!.payload).toBe('u1');
    expect(await leases(queue).retry([{ id: u1!.id, token: u1!.token, error: 'x', delayMs: 0 }])).toEqual(['pending']);

    const all = (await queue.getJobs('pending', { limit: 100 })).map((j) => j.payload);
    expect(all).toEqual(['u1', 'u2', 'u-late', 'a1', 'a2', 'a-late', 'b1']);
    // each lane as a claim takes it
    const byId = new Map((await queue.getJobs('pending', { limit: 100 })).map((j) => [j.id, j.payload]));
    const lanes = [...(await laneIds(redis.raw, k)), ...(await laneIds(redis.raw, k, 'a')), ...(await laneIds(redis.raw, k, 'b'))];
    expect(lanes.map((id) => byId.get(id))).toEqual(all);
    // pages of every size put together are the whole list
    for (const limit of [1, 2, 3, 5]) {
      const pages: string[] = [];
      for (let offset = 0; offset < all.length + 2; offset += limit) {
        pages.push(...(await queue.getJobs('pending', { offset, limit })).map((j) => j.payload));
      }
      expect(pages, `limit ${limit}`).toEqual(all);
    }
    expect((await queue.getJobs('pending', { limit: 100 })).every((j) => j.state === 'pending')).toBe(true);
  });

  it('pages a lane whose zset and arrivals list interleave, at every offset, as the claims would take it', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    // 40 arrivals, every other one in group h and then moved into g: the moved ones wait in g's
    // zset at their own orders, between the orders of g's arrivals list
    const added = await queue.addBulk(Array.from({ length: 40 }, (_, i) => ({ payload: i, group: i % 2 === 0 ? 'g' : 'h'})));
    for (const [i, { id }] of added.entries()) if (i % 2 === 1) await queue.moveToGroup(id, 'g');
    expect(await redis.raw.zcard(k.lane('g'))).toBe(20);
    expect(await redis.raw.llen(k.fifo('g'))).toBe(20);
    // some run and go back in their place; some finish
    const { jobs } = await leases(queue).claim(6, 30_000);
    await leases(queue).release(jobs.filter((_, i) => i % 2 === 0));
    await leases(queue).complete(jobs.filter((_, i) => i % 2 === 1));
    await queue.add(200, { group: 'g', priority: 1 });
    const want = await laneIds(redis.raw, k, 'g');
    expect(want).toHaveLength(38);
    for (let offset = 0; offset <= want.length; offset++) {
      for (const limit of [1, 4, 38]) {
        const page = (await queue.getJobs('pending', { offset, limit })).map((j) => j.id);
        expect(page, `offset ${offset}, limit ${limit}`).toEqual(want.slice(offset, offset + limit));
      }
    }
    // the order is the claims' order
    const claimed = (await leases(queue).claim(38, 30_000)).jobs.map((j) => j.id);
    expect(claimed).toEqual(want);
  });

  it('lists scheduled by due time and active by lease deadline, soonest first, with those times', async () => {
    const queue = redis.queue<string>();
    await queue.add('in-3m', { delayMs: 180_000 });
    await queue.add('in-1m', { delayMs: 60_000 });
    await queue.add('in-2m', { delayMs: 120_000 });
    const scheduled = await queue.getJobs('scheduled');
    expect(scheduled.map((j) => j.payload)).toEqual(['in-1m', 'in-2m', 'in-3m']);
    expect(scheduled.map((j) => j.state)).toEqual(['scheduled', 'scheduled', 'scheduled']);
    expect(scheduled[0]!.runAt).toBe(Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), scheduled[0]!.id)));
    expect((await queue.getJobs('scheduled', { offset: 1, limit: 1 })).map((j) => j.payload)).toEqual(['in-2m']);

    await queue.addBulk([{ payload: 'long' }, { payload: 'short' }]);
    await leases(queue).claim(1, 60_000);
    await leases(queue).claim(1, 10_000);
    const active = await queue.getJobs('active');
    expect(active.map((j) => j.payload)).toEqual(['short', 'long']);
    expect(active[0]!.leaseUntil).toBeLessThan(active[1]!.leaseUntil!);
    expect(active.every((j) => j.state === 'active')).toBe(true);
  });

  it('lists completed and dead jobs most recent first, leaving out completed rows that expired', async () => {
    const queue = redis.queue<number>({ keepCompletedMs: 150 });
    const [first] = await completeJobs(queue, [1]);
    await sleep(200);
    const later = await completeJobs(queue, [2, 3]);
    await sleep(5);
    const last = await completeJobs(queue, [4]);
    const completed = await queue.getJobs('completed');
    // two finished in the same millisecond: ties go by id, the greater first (ZREVRANGE)
    expect(completed.map((j) => j.id)).toEqual([...last, ...[...later].reverse()]);
    expect(completed.map((j) => j.id)).not.toContain(first);
    expect(completed[0]).toMatchObject({ state: 'completed', payload: 4, maxAttempts: 3 });
    expect(completed[0]!.finishedAt).toBeGreaterThanOrEqual(completed[1]!.finishedAt!);

    const dead = redis.queue<number>();
    const older = await buryJobs(dead, [1]);
    await sleep(5);
    const newer = await buryJobs(dead, [2]);
    expect((await dead.getJobs('dead')).map((j) => j.id)).toEqual([...newer, ...older]);
    expect(await dead.getJobs('dead')).toEqual(await dead.listDead());
  });

  it('writes nothing, and refuses a bad state, offset or limit with EMQARG', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g', delayMs: 60_000}]);
    await buryJobs(queue, [3]);
    const before = await redis.raw.dump(keysOf(queue).key('meta'));
    for (const state of ['pending', 'scheduled', 'active', 'completed', 'dead'] as const) await queue.getJobs(state);
    expect(await redis.raw.dump(keysOf(queue).key('meta'))).toEqual(before);
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.getJobs('parked' as 'pending'), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.getJobs('pending', { limit: 0 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.getJobs('pending', { limit: 1001 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.getJobs('dead', { offset: -1 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.getJobs('dead', { offset: 1.5 }), arg);
    // the script's own check, past the core's
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(listJobsOp('parked' as 'pending', 0, 10)), arg);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
