import { describe, expect, it } from 'vitest';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, sleep, useRedis } from '../helpers.js';

/**
 * A group's active count leaves no field behind: every way a slot frees deletes the count that
 * reaches 0, so a queue at rest holds no `gactive` field however many groups ran (a long-lived
 * queue with many short-lived groups would otherwise grow a field per group for ever). The
 * keyspace checker flags a stored 0.
 */
describe('group active counts at rest', () => {
  const redis = useRedis();

  it('each way a slot frees deletes a count that reaches 0', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const lease = leases(queue);
    await queue.setGroupLimit('g', 1);
    const rest = async (how: string): Promise<void> => {
      expect(await redis.raw.hgetall(k.key('gactive')), how).toEqual({});
      expect(await checkInvariants(redis.raw, queue.name), how).toEqual([]);
    };
    const claimOne = async (): Promise<{ id: string; token: number }> => {
      const [job] = (await lease.claim(1, 60_000)).jobs;
      expect(job?.group).toBe('g');
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      return { id: job!.id, token: job!.token };
    };
    await queue.addBulk(Array.from({ length: 7 }, (_, n) => ({ payload: n, group: 'g', maxAttempts: 5, backoff: 0 })));

    await lease.complete([await claimOne()]);
    await rest('complete');
    await lease.retry([{ ...(await claimOne()), error: 'x' }]);
    await rest('retry');
    await lease.fail([{ ...(await claimOne()), error: 'x' }]);
    await rest('fail');
    await lease.release([await claimOne()]);
    await rest('release');
    await queue.remove((await claimOne()).id);
    await rest('remove');
    await lease.claim(1, 1);
    await sleep(5);
    await lease.reap();
    await rest('reap');
    await claimOne();
    await redis.raw.hdel(k.key('gactive'), 'g'); // a drifted count: the sweep recounts 1
    expect(await queue.sweepGroup('g')).toEqual({ stored: 0, counted: 1 });
    const [active] = await redis.raw.zrange(k.key('active'), 0, '0');
    await lease.complete([{ id: active!, token: Number(await redis.raw.hget(k.job(active!), 't')) }]);
    await rest('complete after a sweep');
  });

  it('the checker flags a count of 0 left stored', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.add(1, { group: 'g' });
    await leases(queue).complete([(await leases(queue).claim(1, 60_000)).jobs[0]!]);
    await flagChecker(redis.raw, queue.name)(
      () => redis.raw.hset(k.key('gactive'), 'g', '0'),
      () => redis.raw.hdel(k.key('gactive'), 'g'),
      /group g: gactive holds "0", where a count of 0 is deleted/,
    );
  });
});
