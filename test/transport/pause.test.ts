import { describe, expect, it } from 'vitest';
import { keysOf, laneIds, laneSize, sleep, useRedis, leases } from '../helpers.js';

/** Invariant 7: a paused queue or group hands out nothing; what is active finishes normally. */
describe('pause', () => {
  const redis = useRedis();

  describe('the queue', () => {
    it('hands out nothing while paused: claim and beat return no jobs and say paused', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3, group: 'h' }]);
      expect(await queue.pause()).toBe(true);
      expect(await redis.raw.hget(k.key('meta'), 'paused')).not.toBeNull();
      expect((await queue.stats()).paused).toBe(true);

      const claimed = await leases(queue).claim(10, 30_000);
      expect(claimed.paused).toBe(true);
      expect(claimed.jobs).toEqual([]);
      const beat = await leases(queue).beat({ n: 10, leaseMs: 30_000 });
      expect(beat.paused).toBe(true);
      expect(beat.jobs).toEqual([]);

      // nothing was leased, and the claimable work is still where it was
      expect(await redis.raw.zcard(k.key('active'))).toBe(0);
      expect((await queue.stats()).counts).toMatchObject({ pending: 3, active: 0 });
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*', 'g', 'h']);
    });

    it('pausing twice returns false, resuming an unpaused queue returns false', async () => {
      const queue = redis.queue();
      expect(await queue.resume()).toBe(false);
      expect(await queue.pause()).toBe(true);
      expect(await queue.pause()).toBe(false);
      expect(await queue.resume()).toBe(true);
      expect(await queue.resume()).toBe(false);
      expect((await queue.stats()).paused).toBe(false);
    });

    it('hands out nothing from a beat that promotes or reaps while paused', async () => {
      const queue = redis.queue();
      await queue.add('leased');
      await leases(queue).claim(1, 1);
      await queue.add('delayed', { delayMs: 30 });
      await queue.pause();
      await sleep(150);
      const beat = await leases(queue).beat({ n: 10, leaseMs: 30_000 });
      expect(beat.paused).toBe(true);
      expect(beat.jobs).toEqual([]);
      expect(beat.promoted).toBe(1);
      expect(beat.requeued).toBe(1);
      expect((await queue.stats()).counts).toMatchObject({ pending: 2, active: 0, scheduled: 0 });
    });

    it('lets active jobs finish normally while paused', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3, maxAttempts: 1 }, { payload: 4 }]);
      const { jobs } = await leases(queue).claim(4, 30_000);
      expect(jobs).toHaveLength(4);
      const [a, b, c, d] = [jobs[0]!, jobs[1]!, jobs[2]!, jobs[3]!];
      await queue.pause();

      expect((await leases(queue).complete([a])).completed).toEqual([true]);
      expect(await redis.raw.hget(k.job(a.id), 's')).toBe('completed');
      expect(await leases(queue).retry([{ id: b.id, token: b.token, error: 'x', delayMs: 0 }])).toEqual(['pending']);
      expect(await leases(queue).fail([{ id: c.id, token: c.token, error: 'x' }])).toEqual(['dead']);
      const [deadline] = await leases(queue).extend([d], 60_000);
      expect(deadline).not.toBeNull();
      expect(Number(await redis.raw.zscore(k.key('active'), d.id))).toBe(deadline);
      expect((await leases(queue).complete([d])).completed).toEqual([true]);

      // the retried job waits; it is not handed out while paused
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      expect((await queue.stats()).counts).toEqual({ pending: 1, scheduled: 0, active: 0, dead: 1, completed: 2, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
    });

    it('complete-and-claim completes but claims nothing while paused', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
      const { jobs } = await leases(queue).claim(1, 30_000);
      await queue.pause();
      const done = await leases(queue).complete([jobs[0]!], { claimN: 5, leaseMs: 30_000 });
      expect(done.completed).toEqual([true]);
      expect(done.claimed?.paused).toBe(true);
      expect(done.claimed?.jobs ?? []).toEqual([]);
      expect((await queue.stats()).counts).toMatchObject({ pending: 1, active: 0, completed: 1 });
    });

    it('makes waiting work claimable again on resume', async () => {
      const queue = redis.queue();
      await queue.add(1);
      await queue.pause();
      await queue.addBulk([{ payload: 2, group: 'g' }, { payload: 3 }]);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      expect(await queue.resume()).toBe(true);
      const claimed = await leases(queue).claim(10, 30_000);
      expect(claimed.paused).toBe(false);
      expect(claimed.jobs.map((j) => j.payload).sort()).toEqual([1, 2, 3]);
    });
  });

  describe('a group', () => {
    it('hands out nothing of a paused group while other groups and ungrouped work are claimed', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([
        { payload: 'a1', group: 'a' },
        { payload: 'b1', group: 'b' },
        { payload: 'u1' },
        { payload: 'a2', group: 'a' },
        { payload: 'b2', group: 'b' },
        { payload: 'u2' },
      ]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['a', 'b', '*']);
      expect(await queue.pauseGroup('a')).toBe(true);
      expect(await redis.raw.smembers(k.key('gpaused'))).toEqual(['a']);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['b', '*']);

      const claimed = await leases(queue).claim(10, 30_000);
      expect(claimed.paused).toBe(false);
      expect(claimed.jobs.map((j) => j.payload).sort()).toEqual(['b1', 'b2', 'u1', 'u2']);
      expect(claimed.jobs.every((j) => j.group !== 'a')).toBe(true);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      expect(await laneIds(redis.raw, k, 'a')).toHaveLength(2);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
    });

    it('keeps new jobs in the paused lane, off the ring', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.pauseGroup('a');
      const added = await queue.add('a1', { group: 'a' });
      expect(added.state).toBe('pending');
      await queue.add('u1');
      expect(await laneIds(redis.raw, k, 'a')).toEqual([added.id]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
      expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['u1']);
      expect((await queue.stats()).counts.pending).toBe(1);
    });

    it('keeps promoted, requeued and reprocessed jobs of a paused group off the ring', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([
        { payload: 'lease', group: 'a' },
        { payload: 'dead', group: 'a', maxAttempts: 1 },
      ]);
      const { jobs } = await leases(queue).claim(2, 30_000);
      const dead = jobs.find((j) => j.payload === 'dead')!;
      await leases(queue).fail([{ id: dead.id, token: dead.token, error: 'x' }]);
      await queue.add('delayed', { group: 'a', delayMs: 30 });
      const lease = jobs.find((j) => j.payload === 'lease')!;
      await queue.pauseGroup('a');
      await leases(queue).extend([lease], 1);
      await sleep(150);
      expect((await leases(queue).reap()).requeued).toBe(1);
      expect((await leases(queue).promote()).promoted).toBe(1);
      await queue.reprocess(dead.id);
      expect(await laneSize(redis.raw, k, 'a')).toBe(3);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    });

    it('lets active jobs of a paused group finish normally', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1, group: 'a' }, { payload: 2, group: 'a' }]);
      const { jobs } = await leases(queue).claim(2, 30_000);
      expect(jobs).toHaveLength(2);
      await queue.pauseGroup('a');
      expect((await leases(queue).complete([jobs[0]!])).completed).toEqual([true]);
      expect(await leases(queue).retry([{ id: jobs[1]!.id, token: jobs[1]!.token, error: 'x', delayMs: 0 }])).toEqual(['pending']);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual([]);
    });

    it('puts the lane back on the ring on resume', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([{ payload: 'a1', group: 'a' }, { payload: 'u1' }]);
      await queue.pauseGroup('a');
      await queue.add('a2', { group: 'a' });
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
      expect(await queue.resumeGroup('a')).toBe(true);
      expect(await redis.raw.smembers(k.key('gpaused'))).toEqual([]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*', 'a']);
      const claimed = await leases(queue).claim(10, 30_000);
      expect(claimed.jobs.map((j) => j.payload).sort()).toEqual(['a1', 'a2', 'u1']);
    });

    it('does not put an empty lane on the ring on resume', async () => {
      const queue = redis.queue();
      await queue.pauseGroup('a');
      expect(await queue.resumeGroup('a')).toBe(true);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual([]);
    });

    it('pausing a group twice and resuming an unpaused group return false', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.add(1, { group: 'a' });
      expect(await queue.resumeGroup('a')).toBe(false);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['a']);
      expect(await queue.pauseGroup('a')).toBe(true);
      expect(await queue.pauseGroup('a')).toBe(false);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
      expect(await queue.resumeGroup('a')).toBe(true);
      expect(await queue.resumeGroup('a')).toBe(false);
      // each at most once on the ring
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['a']);
    });

    it('a group paused while the whole queue is paused stays paused after the queue resumes', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 'a1', group: 'a' }, { payload: 'u1' }]);
      await queue.pause();
      await queue.pauseGroup('a');
      await queue.resume();
      expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['u1']);
    });
  });

  describe('a group limit of 0', () => {
    it('hands out nothing for that group while others are claimed', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.setGroupLimit('z', 0);
      await queue.addBulk([
        { payload: 'z1', group: 'z' },
        { payload: 'b1', group: 'b' },
        { payload: 'u1' },
      ]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['b', '*']);
      const claimed = await leases(queue).claim(10, 30_000);
      expect(claimed.jobs.map((j) => j.payload).sort()).toEqual(['b1', 'u1']);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      expect(await laneSize(redis.raw, k, 'z')).toBe(1);
      expect(await redis.raw.hget(k.key('gactive'), 'z')).toBeNull();
    });

    it('takes a serviceable lane off the ring when the limit drops to 0', async () => {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.addBulk([{ payload: 'z1', group: 'z' }, { payload: 'z2', group: 'z' }]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['z']);
      await queue.setGroupLimit('z', 0);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
      expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
      await queue.setGroupLimit('z', null);
      expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['z1', 'z2']);
    });
  });
});
