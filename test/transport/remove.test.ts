import { describe, expect, it } from 'vitest';
import { JobNotFoundError } from '../../src/errors.js';
import { keysOf, laneIds, laneSize, useRedis, leases } from '../helpers.js';

/**
 * remove: a job in any state leaves every set it was in and its row is deleted; an active job's
 * group slot is freed and its holder fenced off; a lane left empty leaves the ring.
 */
describe('remove', () => {
  const redis = useRedis();

  it('frees an active job\'s group slot and fences its holder off', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setGroupLimit('g', 1);
    await queue.addBulk([{ payload: 'first', group: 'g' }, { payload: 'second', group: 'g' }]);
    const first = await leases(queue).claim(10, 30_000);
    expect(first.jobs.map((j) => j.payload)).toEqual(['first']);
    const held = first.jobs[0]!;
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
    // the other one waits in the lane and is not claimable
    expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    expect(await laneSize(redis.raw, k, 'g')).toBe(1);

    const wakeBefore = await redis.raw.llen(k.key('wake'));
    await queue.remove(held.id);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
    expect(await redis.raw.zscore(k.key('active'), held.id)).toBeNull();
    expect(Number((await redis.raw.hget(k.key('gactive'), 'g')) ?? '0')).toBe(0);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
    expect(await redis.raw.llen(k.key('wake'))).toBe(wakeBefore + 1);

    const next = await leases(queue).claim(10, 30_000);
    expect(next.jobs.map((j) => j.payload)).toEqual(['second']);
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');

    // the removed job's holder is fenced off and changes nothing
    const stale = { id: held.id, token: held.token };
    expect((await leases(queue).complete([stale])).completed).toEqual([false]);
    expect(await leases(queue).retry([{ ...stale, error: 'x', delayMs: 0 }])).toEqual(['fenced']);
    expect(await leases(queue).retry([{ ...stale, error: 'x', delayMs: 60_000 }])).toEqual(['fenced']);
    expect(await leases(queue).fail([{ ...stale, error: 'x' }])).toEqual(['fenced']);
    expect(await leases(queue).extend([stale], 30_000)).toEqual([null]);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
    expect(await redis.raw.zrange(k.key('active'), 0, '-1')).toEqual([next.jobs[0]!.id]);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await redis.raw.zcard(k.key('dead'))).toBe(0);
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 1, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
  });

  it('removes an ungrouped active job and fences its holder off', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add(1);
    const held = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    const wakeBefore = await redis.raw.llen(k.key('wake'));
    await queue.remove(held.id);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await redis.raw.llen(k.key('wake'))).toBe(wakeBefore);
    expect((await leases(queue).complete([held])).completed).toEqual([false]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBeNull();
  });

  it('takes a lane off the ring when its last pending job is removed', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [a1, a2, b1] = await queue.addBulk([
      { payload: 'a1', group: 'a' },
      { payload: 'a2', group: 'a' },
      { payload: 'b1', group: 'b' },
    ]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['a', 'b']);
    await queue.remove(a1!.id);
    // still work in the lane: it stays
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['a', 'b']);
    expect(await laneIds(redis.raw, k, 'a')).toEqual([a2!.id]);
    await queue.remove(a2!.id);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['b']);
    expect(await laneSize(redis.raw, k, 'a')).toBe(0);
    for (const id of [a1!.id, a2!.id]) expect(await redis.raw.exists(k.job(id))).toBe(0);
    expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.id)).toEqual([b1!.id]);
  });

  it('takes * off the ring when the last ungrouped pending job is removed', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [u1, g1, u2] = await queue.addBulk([{ payload: 'u1' }, { payload: 'g1', group: 'g' }, { payload: 'u2' }]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*', 'g']);
    await queue.remove(u2!.id);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*', 'g']);
    await queue.remove(u1!.id);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
    expect(await laneSize(redis.raw, k)).toBe(0);
    for (const id of [u1!.id, u2!.id]) expect(await redis.raw.exists(k.job(id))).toBe(0);
    expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.id)).toEqual([g1!.id]);
  });

  it('removes a pending job of a paused group without touching the ring', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [g1] = await queue.addBulk([{ payload: 'g1', group: 'g' }, { payload: 'u1' }]);
    await queue.pauseGroup('g');
    await queue.remove(g1!.id);
    expect(await laneSize(redis.raw, k, 'g')).toBe(0);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    expect(await redis.raw.exists(k.job(g1!.id))).toBe(0);
    // resuming the emptied group does not put it back
    await queue.resumeGroup('g');
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
  });

  it('removes a scheduled job from the scheduled set', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [s1, s2] = await queue.addBulk([
      { payload: 's1', delayMs: 60_000 },
      { payload: 's2', delayMs: 60_000, group: 'g' },
    ]);
    await queue.remove(s1!.id);
    expect(await redis.raw.zrange(k.key('scheduled'), 0, '-1')).toEqual([s2!.id]);
    expect(await redis.raw.exists(k.job(s1!.id))).toBe(0);
    await queue.remove(s2!.id);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await redis.raw.exists(k.job(s2!.id))).toBe(0);
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
  });

  it('removes a retry waiting for its backoff', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add(1);
    const held = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(await leases(queue).retry([{ id: held.id, token: held.token, error: 'x', delayMs: 60_000 }])).toEqual(['scheduled']);
    await queue.remove(held.id);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
  });

  it('removes a dead job from the dead set', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1, maxAttempts: 1 }, { payload: 2, maxAttempts: 1 }]);
    const { jobs } = await leases(queue).claim(2, 30_000);
    expect(await leases(queue).fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'bad' })))).toEqual(['dead', 'dead']);
    const [d1, d2] = [jobs[0]!, jobs[1]!];
    await queue.remove(d1.id);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([d2.id]);
    expect(await redis.raw.exists(k.job(d1.id))).toBe(0);
    expect((await queue.listDead()).map((j) => j.id)).toEqual([d2.id]);
    await expect(queue.reprocess(d1.id)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('removes a completed row', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add(1);
    const held = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    await leases(queue).complete([held]);
    expect(await redis.raw.exists(k.job(held.id))).toBe(1);
    await queue.remove(held.id);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
    expect(await queue.getJob(held.id)).toBeNull();
  });

  it('throws JobNotFoundError for a missing job, and for a job already removed', async () => {
    const queue = redis.queue();
    await expect(queue.remove('nope')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.remove('JOB:nope')).rejects.toMatchObject({ code: 'EMQNOTFOUND', jobId: 'JOB:nope', status: 404 });
    const { id } = await queue.add(1);
    await queue.remove(id);
    await expect(queue.remove(id)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('keeps a removed job\'s holder fenced off after the same id is enqueued and claimed again', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('old', { id: 'x' });
    const old = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    await queue.remove('x');
    expect(await queue.add('new', { id: 'x' })).toEqual({ id: 'JOB:x', state: 'pending' });
    const fresh = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(fresh.payload).toBe('new');

    // the old holder still runs the removed job: it must not settle the new one
    expect((await leases(queue).complete([{ id: old.id, token: old.token }])).completed).toEqual([false]);
    expect(await redis.raw.hget(k.job('JOB:x'), 's')).toBe('active');
    expect(await redis.raw.zscore(k.key('active'), 'JOB:x')).not.toBeNull();
    // and the new holder still holds it
    expect((await leases(queue).complete([{ id: fresh.id, token: fresh.token }])).completed).toEqual([true]);
  });
});
