import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneIds, useRedis, leases } from '../helpers.js';

describe('release: giving back jobs never started', () => {
  const redis = useRedis();

  it('puts the job back in its lane in order, uncounted, frees its slot and rings once', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.setGroupLimit('g', 1);
    await queue.addBulk([1, 2].map((payload) => ({ payload, group: 'g' })));
    const [held] = (await leases(queue).claim(5, 30_000)).jobs;
    expect(held).toMatchObject({ id: 'JOB:1', attempt: 1 });
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual([]); // at its limit
    const wake = await redis.raw.llen(k.key('wake'));

    expect(await leases(queue).release([{ id: held!.id, token: held!.token }])).toEqual(['released']);
    expect(await redis.raw.llen(k.key('wake'))).toBe(wake + 1);
    expect(await queue.getJob(held!.id)).toMatchObject({ state: 'pending', attempt: 0 });
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
    expect(await laneIds(redis.raw, k, 'g')).toEqual(['JOB:1', 'JOB:2']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // the release sent again answers as it did and un-counts nothing more (repeat-settle.test.ts);
    // a complete under the token changes nothing
    expect(await leases(queue).release([{ id: held!.id, token: held!.token }])).toEqual(['released']);
    expect(await queue.getJob(held!.id)).toMatchObject({ state: 'pending', attempt: 0 });
    expect((await leases(queue).complete([{ id: held!.id, token: held!.token }])).completed).toEqual([false]);
    const [again] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(again).toMatchObject({ id: 'JOB:1', attempt: 1 });
    expect(again!.token).toBeGreaterThan(held!.token);
    // claimed again: the old token is fenced off
    expect(await leases(queue).release([{ id: held!.id, token: held!.token }])).toEqual(['fenced']);
    expect(await queue.getJob(held!.id)).toMatchObject({ state: 'active', attempt: 1 });
  });
});
