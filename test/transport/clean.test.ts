import { describe, expect, it } from 'vitest';
import { buryJobs, completeJobs, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, useRedis } from '../helpers.js';
import { cleanOp } from '../../src/ops/clean.js';

/**
 * clean(state, {olderThanMs, limit}): finished jobs (completed, dead) that finished at least
 * olderThanMs ago, oldest first, rows and index entries deleted, in chunks of at most 500 rows
 * a script call; resolves with the ids.
 */
describe('clean', () => {
  const redis = useRedis();

  it('deletes dead jobs older than the cutoff, rows and entries, and answers their ids', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const old = await buryJobs(queue, [1, 2, 3]);
    await sleep(120);
    const recent = await buryJobs(queue, [4, 5], { group: 'g' });
    const removed = await queue.clean('dead', { olderThanMs: 100 });
    expect(removed.sort()).toEqual([...old].sort());
    for (const id of old) expect(await redis.raw.exists(k.job(id))).toBe(0);
    expect((await redis.raw.zrange(k.key('dead'), 0, '-1')).sort()).toEqual([...recent].sort());
    expect((await queue.stats()).counts).toMatchObject({ dead: 2, pending: 0 });
    // the buried counter counts burials, not dead rows: it stays
    expect(await redis.raw.hget(k.key('meta'), 'buried')).toBe('5');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // nothing of it is claimable, and reprocessing a cleaned id finds no job
    expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    await expect(queue.reprocess(old[0]!)).rejects.toMatchObject({ code: 'EMQNOTFOUND' });
    // all of the rest
    expect((await queue.clean('dead')).sort()).toEqual([...recent].sort());
    expect(await redis.raw.exists(k.key('dead'))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('deletes completed rows through the index, skipping entries whose row expired, and leaves waiting work alone', async () => {
    const queue = redis.queue<number>({ keepCompletedMs: 100 });
    const k = keysOf(queue);
    const [expired] = await completeJobs(queue, [0]);
    await sleep(150);
    expect(await redis.raw.exists(k.job(expired!))).toBe(0);
    const kept = redis.queue<number>({ keepCompletedMs: -1, name: queue.name });
    const done = await completeJobs(kept, [1, 2]);
    await queue.addBulk([{ payload: 10 }, { payload: 11, delayMs: 60_000}]);
    expect((await kept.clean('completed')).sort()).toEqual([...done].sort());
    // the stale entry went from the index without being reported
    expect(await redis.raw.exists(k.key('completed'))).toBe(0);
    expect((await queue.stats()).counts).toMatchObject({ pending: 1, scheduled: 1, completed: 3 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual([10]);
  });

  it('goes in chunks of 500 rows, oldest first, up to its limit', async () => {
    const queue = redis.queue<number>({ keepCompletedMs: -1 });
    const k = keysOf(queue);
    const ids = await completeJobs(queue, Array.from({ length: 2500 }, (_, i) => i));
    const first = await queue.clean('completed', { limit: 1200 });
    expect(first).toHaveLength(1200);
    expect(await redis.raw.zcard(k.key('completed'))).toBe(1300);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const rest = await queue.clean('completed');
    expect(new Set([...first, ...rest])).toEqual(new Set(ids));
    expect(rest).toHaveLength(1300);
    expect(await redis.raw.keys(`${k.prefix}job:*`)).toEqual([]);
    expect(await queue.clean('completed')).toEqual([]);
  });

  it('sent again (a lost reply), a chunk answers the same ids and deletes nothing more', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const ids = await buryJobs(queue, [1, 2, 3, 4]);
    const gateway = scriptsOf(queue);
    const request = { key: 'b:test-repeat', ttlMs: 60_000 };
    const once = await gateway.run(cleanOp('dead', 0, -1, 2, request));
    expect(once.ids).toHaveLength(2);
    expect(once.more).toBe(true);
    const twice = await gateway.run(cleanOp('dead', 0, -1, 2, request));
    expect(twice).toEqual(once);
    expect(await redis.raw.zcard(k.key('dead'))).toBe(2);
    expect(await redis.raw.pttl(`${k.prefix}req:b:test-repeat`)).toBeGreaterThan(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // and a whole clean twice: the second finds nothing
    expect((await queue.clean('dead')).sort()).toEqual(ids.filter((id) => !once.ids.includes(id)).sort());
    expect(await queue.clean('dead')).toEqual([]);
  });

  it('refuses another state or a bad number with EMQARG and writes nothing', async () => {
    const queue = redis.queue<number>();
    await buryJobs(queue, [1]);
    await queue.add(2);
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.clean('pending' as 'dead'), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.clean('dead', { olderThanMs: -1 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.clean('dead', { olderThanMs: 1.5 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.clean('dead', { limit: 0 }), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(cleanOp('pending' as 'dead', 0, -1, 10, { key: '', ttlMs: 0 })), arg);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(cleanOp('dead', 0, -1, 0, { key: '', ttlMs: 0 })), arg);
  });
});
