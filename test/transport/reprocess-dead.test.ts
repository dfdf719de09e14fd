import { describe, expect, it } from 'vitest';
import { buryJobs, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneIds, leases, scriptsOf, sleep, useRedis } from '../helpers.js';
import { reprocessDeadOp } from '../../src/ops/reprocess-dead.js';

/**
 * reprocessDead({limit}): dead jobs, oldest first, back to their lanes at their own orders with a
 * fresh allowance of attempts (as reprocess does one), in chunks of at most 250; the doorbell
 * rings once a chunk when any became claimable.
 */
describe('reprocessDead', () => {
  const redis = useRedis();

  it('puts every dead job back in its lane, rings once, and a consumer runs them with fresh attempts', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const ungrouped = await buryJobs(queue, ['u1', 'u2']);
    const grouped = await buryJobs(queue, ['g1'], { group: 'g' });
    await redis.raw.del(k.key('wake'));
    expect(await queue.reprocessDead()).toBe(3);
    expect(await redis.raw.llen(k.key('wake'))).toBe(1);
    expect(await redis.raw.exists(k.key('dead'))).toBe(0);
    expect(await laneIds(redis.raw, k)).toEqual(ungrouped);
    expect(await laneIds(redis.raw, k, 'g')).toEqual(grouped);
    for (const id of [...ungrouped, ...grouped]) {
      expect(await redis.raw.hmget(k.job(id), 's', 'a', 'z', 'f')).toEqual(['pending', '1', '1', null]);
    }
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const { jobs } = await leases(queue).claim(10, 30_000);
    expect(jobs.map((j) => j.payload).sort()).toEqual(['g1', 'u1', 'u2']);
    expect(jobs.every((j) => j.attempt === 1 && j.maxAttempts === 1)).toBe(true);
    // twice: none left
    expect(await queue.reprocessDead()).toBe(0);
  });

  it('takes the oldest first, up to its limit, in chunks', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const older = await buryJobs(queue, [1, 2]);
    await sleep(5);
    const newer = await buryJobs(queue, [3]);
    expect(await queue.reprocessDead({ limit: 2 })).toBe(2);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual(newer);
    expect(await laneIds(redis.raw, k)).toEqual(older);

    const many = redis.queue<number>();
    await buryJobs(many, Array.from({ length: 2100 }, (_, i) => i), { group: 'g' });
    expect(await many.reprocessDead({ limit: 1500 })).toBe(1500);
    expect((await many.stats()).counts).toMatchObject({ dead: 600, pending: 1500 });
    expect(await many.reprocessDead()).toBe(600);
    expect(await checkInvariants(redis.raw, many.name)).toEqual([]);
  });

  it('rings nothing while the queue is paused, and the work waits for resume', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await buryJobs(queue, [1]);
    await queue.pause();
    await redis.raw.del(k.key('wake'));
    expect(await queue.reprocessDead()).toBe(1);
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);
    expect((await leases(queue).claim(1, 30_000)).jobs).toEqual([]);
    await queue.resume();
    expect(await redis.raw.llen(k.key('wake'))).toBe(1);
  });

  it('sent again (a lost reply), a chunk answers the same and takes no more', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await buryJobs(queue, [1, 2, 3]);
    const gateway = scriptsOf(queue);
    const request = { key: 'b:reprocess-repeat', ttlMs: 60_000 };
    const once = await gateway.run(reprocessDeadOp(2, request));
    expect(once).toEqual({ reprocessed: 2, more: true, outbox: [] });
    expect(await gateway.run(reprocessDeadOp(2, request))).toEqual(once);
    expect(await redis.raw.zcard(k.key('dead'))).toBe(1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('refuses a bad limit with EMQARG and writes nothing', async () => {
    const queue = redis.queue<number>();
    await buryJobs(queue, [1]);
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.reprocessDead({ limit: 0 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.reprocessDead({ limit: -3 }), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(reprocessDeadOp(0, { key: '', ttlMs: 0 })), arg);
  });
});
