import { describe, expect, it } from 'vitest';
import { keysOf, leaseCount, leases, useRedis } from '../helpers.js';
import { ACTIVE_SKIPLIST_MEMBER, checkInvariants } from '../invariants.js';

// lua/includes/active_skiplist.lua: a claim of 32 jobs or more keeps the active zset a skiplist with
// one member scored +inf that is no lease; every read of the leases leaves it out
describe('the active zset kept a skiplist', () => {
  const redis = useRedis();

  it('a small claim leaves the zset as Redis makes it: its leases only', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk(Array.from({ length: 31 }, (_, i) => ({ payload: i })));
    const claimed = await leases(queue).claim(31, 30_000);
    expect(claimed.jobs).toHaveLength(31);
    expect(await redis.raw.zcard(k.key('active'))).toBe(31);
    expect(await redis.raw.zscore(k.key('active'), ACTIVE_SKIPLIST_MEMBER)).toBeNull();
    expect(await redis.raw.object('ENCODING', k.key('active'))).toBe('listpack');
  });

  it('a claim of 32 makes it a skiplist that stays one, and every read of the leases leaves its member out', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.addBulk(Array.from({ length: 40 }, (_, i) => ({ payload: i })));
    const first = await leases(queue).claim(32, 30_000);
    expect(first.jobs).toHaveLength(32);
    expect(await redis.raw.object('ENCODING', k.key('active'))).toBe('skiplist');
    expect(await redis.raw.zscore(k.key('active'), ACTIVE_SKIPLIST_MEMBER)).toBe('inf');
    expect(await leaseCount(redis.raw, k)).toBe(32);
    expect((await queue.stats()).counts.active).toBe(32);
    const listed = await queue.getJobs('active', { limit: 100 });
    expect(listed.map((j) => j.id).sort()).toEqual(first.jobs.map((j) => j.id).sort());
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // the rest, then everything completed: the earliest lease deadline is none, not +inf
    const done = await leases(queue).complete(
      first.jobs.map((j) => ({ id: j.id, token: j.token })),
      { claimN: 100, leaseMs: 10_000 },
    );
    expect(done.claimed?.jobs).toHaveLength(8);
    expect(done.claimed?.nextLeaseEnd).toBe(done.claimed!.now + 10_000);
    const last = await leases(queue).complete(done.claimed!.jobs.map((j) => ({ id: j.id, token: j.token })), { claimN: 1, leaseMs: 10_000 });
    expect(last.claimed?.jobs).toHaveLength(0);
    expect(last.claimed?.nextLeaseEnd).toBeNull();
    expect(await redis.raw.zrange(k.key('active'), 0, '-1')).toEqual([ACTIVE_SKIPLIST_MEMBER]);
    expect(await redis.raw.object('ENCODING', k.key('active'))).toBe('skiplist');
    expect(await leaseCount(redis.raw, k)).toBe(0);
    expect((await queue.stats()).counts).toMatchObject({ active: 0, completed: 40 });
    expect(await queue.getJobs('active')).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // nothing reaps it, and a queue holding it has no active jobs to refuse an obliterate for
    expect((await leases(queue).reap()).requeued).toBe(0);
    expect(await queue.obliterate()).toBe(true);
    expect(await redis.raw.exists(k.key('active'))).toBe(0);
  });

  it('a sweep of a group counts its leased jobs, not the member', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk(Array.from({ length: 33 }, (_, i) => ({ payload: i, group: 'g' })));
    await queue.setGroupLimit('g', 100);
    const claimed = await leases(queue).claim(33, 30_000);
    expect(claimed.jobs).toHaveLength(33);
    expect(await queue.sweepGroup('g')).toEqual({ stored: 33, counted: 33 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('the checker refuses any other member that is no job, and the member under another score', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await redis.raw.zadd(k.key('active'), 'inf', 'not-a-job');
    expect(await checkInvariants(redis.raw, queue.name)).toContain('not-a-job: not a JOB: id');
    await redis.raw.del(k.key('active'));
    await redis.raw.zadd(k.key('active'), '5', ACTIVE_SKIPLIST_MEMBER);
    expect(await checkInvariants(redis.raw, queue.name)).toContain(`${ACTIVE_SKIPLIST_MEMBER}: not a JOB: id`);
  });
});
