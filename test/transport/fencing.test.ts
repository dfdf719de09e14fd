import { describe, expect, it } from 'vitest';
import type { Queue } from '../../src/index.js';
import { keysOf, laneIds, sleep, snapshotKeys, useRedis, leases } from '../helpers.js';


describe('fencing (invariant 4)', () => {
  const redis = useRedis();

  /** A job claimed under a 50 ms lease, reaped once expired and claimed again: [first holder, second holder]. */
  async function reapedAndReclaimed(queue: Queue<{ n: number }>) {
    const k = keysOf(queue);
    await queue.add({ n: 1 }, { maxAttempts: 5 });
    const first = await leases(queue).claim(1, 50);
    expect(first.jobs).toHaveLength(1);
    const stale = first.jobs[0]!;
    expect(stale.token).toBe(1);
    await sleep(120);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    // back to pending, its claim count `a` untouched by the reap
    expect(await redis.raw.hmget(k.job(stale.id), 's', 'a')).toEqual(['pending', '1']);
    expect(await laneIds(redis.raw, k)).toEqual([stale.id]);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);

    const second = await leases(queue).claim(1, 30_000);
    expect(second.jobs).toHaveLength(1);
    const current = second.jobs[0]!;
    expect(current).toMatchObject({ id: stale.id, token: 2, attempt: 2 });
    expect(await redis.raw.hmget(k.job(stale.id), 's', 'a')).toEqual(['active', '2']);
    return { stale, current };
  }

  it('a reaped holder is fenced off from complete, retry, fail and extend, and changes nothing', async () => {
    const queue = redis.queue<{ n: number }>();
    const k = keysOf(queue);
    const { stale, current } = await reapedAndReclaimed(queue);

    const row = await redis.raw.hgetall(k.job(stale.id));
    const active = await redis.raw.zrange(k.key('active'), 0, '-1', 'WITHSCORES');
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);

    expect((await leases(queue).complete([{ id: stale.id, token: stale.token }])).completed).toEqual([false]);
    expect(await leases(queue).retry([{ id: stale.id, token: stale.token, error: 'stale retry' }])).toEqual(['fenced']);
    expect(await leases(queue).retry([{ id: stale.id, token: stale.token, error: 'stale retry', delayMs: 0 }])).toEqual(['fenced']);
    expect(await leases(queue).fail([{ id: stale.id, token: stale.token, error: 'stale fail' }])).toEqual(['fenced']);
    expect(await leases(queue).extend([{ id: stale.id, token: stale.token }], 60_000)).toEqual([null]);

    expect(await redis.raw.hgetall(k.job(stale.id))).toEqual(row);
    expect(await redis.raw.zrange(k.key('active'), 0, '-1', 'WITHSCORES')).toEqual(active);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBeNull();

    // the current holder still owns the job and completes it, exactly once
    expect((await leases(queue).complete([{ id: current.id, token: current.token }])).completed).toEqual([true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
    expect(await redis.raw.hget(k.job(stale.id), 's')).toBe('completed');
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    // the current holder's complete sent again answers as it did and counts nothing
    // (test/transport/repeat-settle.test.ts); the stale holder is still fenced off
    expect((await leases(queue).complete([{ id: current.id, token: current.token }])).completed).toEqual([true]);
    expect((await leases(queue).complete([{ id: stale.id, token: stale.token }])).completed).toEqual([false]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 1, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
  });

  it('a token from the future is fenced off as well', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x');
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect((await leases(queue).complete([{ id: job!.id, token: job!.token + 1 }])).completed).toEqual([false]);
    expect(await leases(queue).retry([{ id: job!.id, token: job!.token + 1, error: 'e' }])).toEqual(['fenced']);
    expect(await leases(queue).fail([{ id: job!.id, token: job!.token + 1, error: 'e' }])).toEqual(['fenced']);
    expect(await leases(queue).extend([{ id: job!.id, token: job!.token + 1 }], 60_000)).toEqual([null]);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect(await redis.raw.hget(k.job(job!.id), 's')).toBe('active');
  });

  it('a holder of a removed job is fenced off from the same id enqueued and claimed again', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    await queue.add('old life', { id: 'reused' });
    const old = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    await queue.remove(old.id);
    await queue.add('new life', { id: 'reused' });
    const current = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(current).toMatchObject({ id: 'JOB:reused', payload: 'new life', attempt: 1 });
    expect(current.token).not.toBe(old.token);

    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect((await leases(queue).complete([{ id: old.id, token: old.token }])).completed).toEqual([false]);
    expect(await leases(queue).retry([{ id: old.id, token: old.token, error: 'stale' }])).toEqual(['fenced']);
    expect(await leases(queue).fail([{ id: old.id, token: old.token, error: 'stale' }])).toEqual(['fenced']);
    expect(await leases(queue).extend([{ id: old.id, token: old.token }], 60_000)).toEqual([null]);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect((await leases(queue).complete([{ id: current.id, token: current.token }])).completed).toEqual([true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
  });

  it('extend by the current holder moves its deadline forward from the server clock', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x');
    const claimed = await leases(queue).claim(1, 1_000);
    const job = claimed.jobs[0]!;
    expect(await redis.raw.zscore(k.key('active'), job.id)).toBe(String(claimed.now + 1_000));

    await sleep(20);
    const t0 = await redis.serverNow();
    const [deadline] = (await leases(queue).extend([{ id: job.id, token: job.token }], 60_000)) as Array<number | null>;
    const t1 = await redis.serverNow();
    expect(deadline).not.toBeNull();
    // the deadline is the server's TIME inside the script plus the lease
    expect(deadline! - 60_000).toBeGreaterThanOrEqual(t0);
    expect(deadline! - 60_000).toBeLessThanOrEqual(t1);
    expect(deadline!).toBeGreaterThan(claimed.now + 1_000);
    expect(await redis.raw.zscore(k.key('active'), job.id)).toBe(String(deadline));
    expect((await queue.getJob(job.id))?.leaseUntil).toBe(deadline);
    // the row itself is untouched by a renewal: same state, same token
    expect(await redis.raw.hmget(k.job(job.id), 's', 'a')).toEqual(['active', '1']);

    // the longer lease protects it from the reaper
    await sleep(1_100);
    expect(await leases(queue).reap()).toEqual({ requeued: 0, buried: 0 });
    expect(await redis.raw.hget(k.job(job.id), 's')).toBe('active');
  });

  it('extend of a reaped lease returns null and does not revive it', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x');
    const job = (await leases(queue).claim(1, 50)).jobs[0]!;
    await sleep(120);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect(await leases(queue).extend([{ id: job.id, token: job.token }], 60_000)).toEqual([null]);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await redis.raw.hget(k.job(job.id), 's')).toBe('pending');
  });

  it('a batch complete with one valid and one stale entry completes only the valid one', async () => {
    const queue = redis.queue<{ n: number }>();
    const k = keysOf(queue);
    const { stale, current } = await reapedAndReclaimed(queue);
    await queue.add({ n: 2 });
    const other = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(other.id).not.toBe(stale.id);

    const activeBefore = await redis.raw.zrange(k.key('active'), 0, '-1', 'WITHSCORES');
    const staleRow = await redis.raw.hgetall(k.job(stale.id));
    const result = await leases(queue).complete([
      { id: other.id, token: other.token },
      { id: stale.id, token: stale.token },
    ]);
    expect(result.completed).toEqual([true, false]);
    expect(await redis.raw.hget(k.job(other.id), 's')).toBe('completed');
    expect(await redis.raw.hgetall(k.job(stale.id))).toEqual(staleRow);
    // only the valid entry left the active set; the current holder's lease is as it was
    const currentLease = activeBefore[activeBefore.indexOf(current.id) + 1];
    expect(await redis.raw.zrange(k.key('active'), 0, '-1', 'WITHSCORES')).toEqual([current.id, currentLease]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');

    // and the reverse order: the stale entry first does not stop the valid one after it
    const again = await leases(queue).complete([
      { id: stale.id, token: stale.token },
      { id: current.id, token: current.token },
    ]);
    expect(again.completed).toEqual([false, true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('2');
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
  });
});
