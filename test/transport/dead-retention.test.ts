import { describe, expect, it } from 'vitest';
import { buryJobs, queueState, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, useRedis } from '../helpers.js';
import { setDeadRetentionOp } from '../../src/ops/set-dead-retention.js';

/**
 * The retention of dead jobs: a setting stored with the queue (meta `dage`, `dmax`), applied
 * wherever a job goes dead (fail, retry, the reaper): each burial deletes at most two of the
 * oldest dead jobs past it, row and all.
 */
describe('the dead-job retention', () => {
  const redis = useRedis();

  it('is off by default, and set and read back as a whole (twice: the same)', async () => {
    const queue = redis.queue();
    expect(await queue.deadRetention()).toEqual({ maxAgeMs: null, maxCount: null });
    expect(await queue.setDeadRetention({ maxCount: 10 })).toEqual({ maxAgeMs: null, maxCount: 10 });
    const once = await queueState(redis.raw, queue);
    expect(await queue.setDeadRetention({ maxCount: 10 })).toEqual({ maxAgeMs: null, maxCount: 10 });
    expect(await queueState(redis.raw, queue)).toEqual(once);
    expect(await queue.setDeadRetention({ maxAgeMs: 60_000, maxCount: null })).toEqual({ maxAgeMs: 60_000, maxCount: null });
    expect(await queue.deadRetention()).toEqual({ maxAgeMs: 60_000, maxCount: null });
    expect(await redis.raw.hmget(keysOf(queue).key('meta'), 'dage', 'dmax')).toEqual(['60000', null]);
    expect(await queue.setDeadRetention({})).toEqual({ maxAgeMs: null, maxCount: null });
    expect(await redis.raw.hmget(keysOf(queue).key('meta'), 'dage', 'dmax')).toEqual([null, null]);
  });

  it('keeps at most maxCount dead jobs: each burial by fail, retry or the reaper deletes the oldest past it', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.setDeadRetention({ maxCount: 2 });
    const failed = await buryJobs(queue, [1, 2, 3]);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual(failed.slice(1));
    expect(await redis.raw.exists(k.job(failed[0]!))).toBe(0);
    // a retry that uses up the attempts
    await queue.add(4, { maxAttempts: 1 });
    const [retried] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(await leases(queue).retry([{ id: retried!.id, token: retried!.token, error: 'x' }])).toEqual(['dead']);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([failed[2], retried!.id]);
    // the reaper burying a lapsed lease
    await queue.add(5, { maxAttempts: 1 });
    const [lapsed] = (await leases(queue).claim(1, 1)).jobs;
    await sleep(10);
    expect(await leases(queue).reap()).toEqual({ requeued: 0, buried: 1 });
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([retried!.id, lapsed!.id]);
    expect((await queue.stats()).counts.dead).toBe(2);
    expect(await redis.raw.hget(k.key('meta'), 'buried')).toBe('5');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('keeps dead jobs at most maxAgeMs', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.setDeadRetention({ maxAgeMs: 100 });
    const [old] = await buryJobs(queue, [1]);
    await sleep(150);
    const [recent] = await buryJobs(queue, [2]);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([recent]);
    expect(await redis.raw.exists(k.job(old!))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('with maxCount 0 keeps none: the fail answers dead, its row is gone, and its repeat is fenced', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.setDeadRetention({ maxCount: 0 });
    await queue.add(1, { maxAttempts: 1 });
    const [held] = (await leases(queue).claim(1, 30_000)).jobs;
    const item = { id: held!.id, token: held!.token, error: 'boom' };
    expect(await leases(queue).fail([item])).toEqual(['dead']);
    expect(await redis.raw.exists(k.job(held!.id))).toBe(0);
    expect(await redis.raw.exists(k.key('dead'))).toBe(0);
    expect(await leases(queue).fail([item])).toEqual(['fenced']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('shrinks a backlog by one a burial (two deleted for one added); clean removes it at once', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await buryJobs(queue, Array.from({ length: 6 }, (_, i) => i));
    await queue.setDeadRetention({ maxCount: 1 });
    expect(await redis.raw.zcard(k.key('dead'))).toBe(6);
    await buryJobs(queue, [100]);
    expect(await redis.raw.zcard(k.key('dead'))).toBe(5);
    expect(await queue.clean('dead', { limit: 4 })).toHaveLength(4);
    expect(await redis.raw.zcard(k.key('dead'))).toBe(1);
  });

  it('refuses a bad setting with EMQARG and writes nothing; the checker knows the setting', async () => {
    const queue = redis.queue();
    await queue.add(1);
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.setDeadRetention({ maxAgeMs: -1 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.setDeadRetention({ maxCount: 2.5 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.setDeadRetention(null as unknown as {}), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(setDeadRetentionOp(-5, null)), arg);
    const meta = keysOf(queue).key('meta');
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(() => redis.raw.hset(meta, 'dmax', 'lots'), () => redis.raw.hdel(meta, 'dmax'), /meta dmax holds "lots", not a count/);
    await expectFlag(() => redis.raw.hset(meta, 'dage', '-4'), () => redis.raw.hdel(meta, 'dage'), /meta dage holds "-4", not a count/);
  });
});
