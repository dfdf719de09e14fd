import { describe, expect, it } from 'vitest';
import type { Queue } from '../../src/index.js';
import { keysOf, laneSize, sleep, useRedis, leases } from '../helpers.js';

/**
 * Invariant 5, the doorbell: every transition that makes work claimable pushes exactly one token
 * onto `wake`, whatever the number of jobs it touched, and a transition that makes nothing
 * claimable (or runs while the queue is paused) pushes none.
 */
describe('the doorbell', () => {
  const redis = useRedis();

  /** How many tokens `action` pushed onto the queue's doorbell (LLEN after minus before), and what it returned. */
  async function ringsAnd<T>(queue: Queue<unknown>, action: () => Promise<T>): Promise<[number, T]> {
    const wake = keysOf(queue).key('wake');
    const before = await redis.raw.llen(wake);
    // the list is capped at 64: a delta is only meaningful below the cap
    expect(before).toBeLessThan(60);
    const result = await action();
    return [(await redis.raw.llen(wake)) - before, result];
  }

  /** How many tokens `action` pushed onto the queue's doorbell. */
  const rings = async (queue: Queue<unknown>, action: () => Promise<unknown>): Promise<number> => (await ringsAnd(queue, action))[0];

  /** Claims one job and returns what settle calls need. */
  async function claimOne(queue: Queue<unknown>, leaseMs = 30_000): Promise<{ id: string; token: number }> {
    const { jobs } = await leases(queue).claim(1, leaseMs);
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    return { id: job.id, token: job.token };
  }

  describe('enqueue', () => {
    it('rings once for an ungrouped job', async () => {
      const queue = redis.queue();
      expect(await rings(queue, () => queue.add({ n: 1 }))).toBe(1);
      expect(await redis.raw.lrange(keysOf(queue).key('wake'), 0, '-1')).toEqual(['1']);
    });

    it('rings once for a bulk enqueue of 50 jobs in one call', async () => {
      const queue = redis.queue();
      const jobs = Array.from({ length: 50 }, (_, n) => ({ payload: n }));
      expect(await rings(queue, () => queue.addBulk(jobs))).toBe(1);
      expect(await redis.raw.lrange(keysOf(queue).key('wake'), 0, '-1')).toEqual(['1']);
      expect(await laneSize(redis.raw, keysOf(queue))).toBe(50);
    });

    it('rings once for a bulk enqueue of 50 jobs across groups in one call', async () => {
      const queue = redis.queue();
      const jobs = Array.from({ length: 50 }, (_, n) => ({ payload: n, ...(n % 2 === 0 ? {} : { group: `g${n % 5}` }) }));
      expect(await rings(queue, () => queue.addBulk(jobs))).toBe(1);
      expect((await queue.stats()).counts.pending).toBe(50);
    });

    it('rings once for a job in a group that is open', async () => {
      const queue = redis.queue();
      expect(await rings(queue, () => queue.add(1, { group: 'g' }))).toBe(1);
    });

    it('does not ring for a job in a group at its limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.add(1, { group: 'g' });
      await claimOne(queue);
      expect(await rings(queue, () => queue.add(2, { group: 'g' }))).toBe(0);
      expect(await laneSize(redis.raw, keysOf(queue), 'g')).toBe(1);
    });

    it('does not ring for a job in a group whose limit is 0', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 0);
      expect(await rings(queue, () => queue.add(1, { group: 'g' }))).toBe(0);
    });

    it('does not ring for a job in a paused group', async () => {
      const queue = redis.queue();
      await queue.pauseGroup('g');
      expect(await rings(queue, () => queue.add(1, { group: 'g' }))).toBe(0);
      expect(await laneSize(redis.raw, keysOf(queue), 'g')).toBe(1);
    });

    it('does not ring for a delayed job', async () => {
      const queue = redis.queue();
      expect(await rings(queue, () => queue.add(1, { delayMs: 60_000 }))).toBe(0);
      expect(await redis.raw.zcard(keysOf(queue).key('scheduled'))).toBe(1);
    });

    it('does not ring while the queue is paused', async () => {
      const queue = redis.queue();
      await queue.pause();
      expect(await rings(queue, () => queue.add(1))).toBe(0);
      expect(await rings(queue, () => queue.addBulk([{ payload: 2 }, { payload: 3, group: 'g' }]))).toBe(0);
      expect((await queue.stats()).counts.pending).toBe(3);
    });

    it('does not ring for a duplicate id', async () => {
      const queue = redis.queue();
      await queue.add(1, { id: 'same' });
      await leases(queue).claim(1, 30_000);
      expect(await rings(queue, () => queue.add(1, { id: 'same' }))).toBe(0);
    });
  });

  describe('pause and resume', () => {
    it('rings once when the queue resumes with work waiting', async () => {
      const queue = redis.queue();
      await queue.pause();
      await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }]);
      expect(await rings(queue, () => queue.resume())).toBe(1);
    });

    it('does not ring when the queue resumes with no work waiting', async () => {
      const queue = redis.queue();
      await queue.pause();
      expect(await rings(queue, () => queue.resume())).toBe(0);
      // nor when resume finds it was not paused
      await queue.add(1);
      expect(await rings(queue, () => queue.resume())).toBe(0);
    });

    it('does not ring for pausing', async () => {
      const queue = redis.queue();
      await queue.add(1, { group: 'g' });
      expect(await rings(queue, () => queue.pause())).toBe(0);
      await queue.resume();
      expect(await rings(queue, () => queue.pauseGroup('g'))).toBe(0);
    });

    it('rings once when a group with work resumes', async () => {
      const queue = redis.queue();
      await queue.pauseGroup('g');
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      expect(await rings(queue, () => queue.resumeGroup('g'))).toBe(1);
    });

    it('does not ring when a group without work resumes, or one that was not paused', async () => {
      const queue = redis.queue();
      await queue.pauseGroup('g');
      expect(await rings(queue, () => queue.resumeGroup('g'))).toBe(0);
      await queue.add(1, { group: 'h' });
      expect(await rings(queue, () => queue.resumeGroup('h'))).toBe(0);
    });

    it('does not ring when a group resumes into its limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.add(1, { group: 'g' });
      await claimOne(queue);
      await queue.pauseGroup('g');
      await queue.add(2, { group: 'g' });
      expect(await rings(queue, () => queue.resumeGroup('g'))).toBe(0);
    });
  });

  describe('group limits', () => {
    it('rings once when a raised limit makes the lane serviceable', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 0);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      expect(await rings(queue, () => queue.setGroupLimit('g', 1))).toBe(1);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual(['g']);
    });

    it('rings once when a lifted limit makes the lane serviceable', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      await claimOne(queue);
      expect(await rings(queue, () => queue.setGroupLimit('g', null))).toBe(1);
    });

    it('does not ring when a limit change leaves the lane as it was', async () => {
      const queue = redis.queue();
      await queue.add(1, { group: 'g' });
      // serviceable before and after
      expect(await rings(queue, () => queue.setGroupLimit('g', 5))).toBe(0);
      // lowered out of service
      expect(await rings(queue, () => queue.setGroupLimit('g', 0))).toBe(0);
      // raised on a group with an empty lane
      expect(await rings(queue, () => queue.setGroupLimit('empty', 3))).toBe(0);
    });
  });

  describe('promotion', () => {
    it('rings once when promote moves due jobs', async () => {
      const queue = redis.queue();
      await queue.addBulk([
        { payload: 1, delayMs: 30 },
        { payload: 2, delayMs: 30, group: 'g' },
        { payload: 3, delayMs: 30, group: 'h' },
      ]);
      await sleep(150);
      const [tokens, { promoted }] = await ringsAnd(queue, () => leases(queue).promote());
      expect(tokens).toBe(1);
      expect(promoted).toBe(3);
    });

    it('does not ring when nothing is due', async () => {
      const queue = redis.queue();
      expect(await rings(queue, () => leases(queue).promote())).toBe(0);
      await queue.add(1, { delayMs: 60_000 });
      const [tokens, { promoted }] = await ringsAnd(queue, () => leases(queue).promote());
      expect(tokens).toBe(0);
      expect(promoted).toBe(0);
    });

    it('does not ring when the promoted job lands in a paused group', async () => {
      const queue = redis.queue();
      await queue.pauseGroup('g');
      await queue.add(1, { delayMs: 30, group: 'g' });
      await sleep(150);
      expect(await rings(queue, () => leases(queue).promote())).toBe(0);
      expect(await laneSize(redis.raw, keysOf(queue), 'g')).toBe(1);
    });

    it('rings once when a beat promotes', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1, delayMs: 30 }, { payload: 2, delayMs: 30 }]);
      await sleep(150);
      const [tokens, { promoted }] = await ringsAnd(queue, () => leases(queue).beat({ n: 0, leaseMs: 30_000 }));
      expect(tokens).toBe(1);
      expect(promoted).toBe(2);
    });

    it('does not ring for an idle beat', async () => {
      const queue = redis.queue();
      await queue.add(1, { delayMs: 60_000 });
      expect(await rings(queue, () => leases(queue).beat({ n: 5, leaseMs: 30_000 }))).toBe(0);
    });
  });

  describe('reaping', () => {
    it('rings once when reap requeues expired leases', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }]);
      await leases(queue).claim(2, 1);
      await sleep(50);
      const [tokens, { requeued }] = await ringsAnd(queue, () => leases(queue).reap());
      expect(tokens).toBe(1);
      expect(requeued).toBe(2);
    });

    it('rings once when a beat reaps', async () => {
      const queue = redis.queue();
      await queue.add(1);
      await leases(queue).claim(1, 1);
      await sleep(50);
      const [tokens, { requeued }] = await ringsAnd(queue, () => leases(queue).beat({ n: 0, leaseMs: 30_000 }));
      expect(tokens).toBe(1);
      expect(requeued).toBe(1);
    });

    it('does not ring when reap only buries', async () => {
      const queue = redis.queue();
      await queue.add(1, { maxAttempts: 1 });
      await leases(queue).claim(1, 1);
      await sleep(50);
      const [tokens, { buried }] = await ringsAnd(queue, () => leases(queue).reap());
      expect(tokens).toBe(0);
      expect(buried).toBe(1);
    });

    it('rings once when reap buries a job and so frees a slot under a limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([
        { payload: 1, group: 'g', maxAttempts: 1 },
        { payload: 2, group: 'g' },
      ]);
      await leases(queue).claim(5, 1);
      await sleep(50);
      expect(await rings(queue, () => leases(queue).reap())).toBe(1);
      expect((await leases(queue).claim(5, 30_000)).jobs.map((j) => j.payload)).toEqual([2]);
    });

    it('does not ring when no lease has expired', async () => {
      const queue = redis.queue();
      await queue.add(1);
      await leases(queue).claim(1, 60_000);
      expect(await rings(queue, () => leases(queue).reap())).toBe(0);
    });
  });

  describe('settling', () => {
    it('rings once for a retry without delay', async () => {
      const queue = redis.queue();
      await queue.add(1);
      const held = await claimOne(queue);
      const [tokens, outcome] = await ringsAnd(queue, () => leases(queue).retry([{ ...held, error: 'boom', delayMs: 0 }]));
      expect(tokens).toBe(1);
      expect(outcome).toEqual(['pending']);
    });

    it('rings once for a batch of retries without delay', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3, group: 'h' }]);
      const { jobs } = await leases(queue).claim(3, 30_000);
      expect(jobs).toHaveLength(3);
      expect(
        await rings(queue, () => leases(queue).retry(jobs.map((j) => ({ id: j.id, token: j.token, error: 'x', delayMs: 0 })))),
      ).toBe(1);
    });

    it('does not ring for a retry with a delay', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }]);
      const { jobs } = await leases(queue).claim(2, 30_000);
      expect(jobs).toHaveLength(2);
      const [tokens, outcome] = await ringsAnd(queue, () => leases(queue).retry(jobs.map((j) => ({ id: j.id, token: j.token, error: 'x', delayMs: 60_000 }))));
      expect(tokens).toBe(0);
      expect(outcome).toEqual(['scheduled', 'scheduled']);
    });

    it('does not ring for a retry that buries', async () => {
      const queue = redis.queue();
      await queue.add(1, { maxAttempts: 1 });
      const held = await claimOne(queue);
      expect(await rings(queue, () => leases(queue).retry([{ ...held, error: 'x', delayMs: 0 }]))).toBe(0);
    });

    it('rings once when a retry with a delay frees a slot under a limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      const held = await claimOne(queue);
      const [tokens, outcome] = await ringsAnd(queue, () => leases(queue).retry([{ ...held, error: 'x', delayMs: 60_000 }]));
      expect(tokens).toBe(1);
      expect(outcome).toEqual(['scheduled']);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual(['g']);
    });

    it('rings once when a retry without delay frees a slot and requeues into the same lane', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      const held = await claimOne(queue);
      expect(await rings(queue, () => leases(queue).retry([{ ...held, error: 'x', delayMs: 0 }]))).toBe(1);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual(['g']);
    });

    it('rings once when complete frees a slot under a limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      const held = await claimOne(queue);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual([]);
      expect(await rings(queue, () => leases(queue).complete([held]))).toBe(1);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual(['g']);
    });

    it('rings once when fail frees a slot under a limit', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      const held = await claimOne(queue);
      const [tokens, outcome] = await ringsAnd(queue, () => leases(queue).fail([{ ...held, error: 'bad' }]));
      expect(tokens).toBe(1);
      expect(outcome).toEqual(['dead']);
    });

    it('rings once when one complete frees slots in several groups at their limits', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 2);
      await queue.setGroupLimit('h', 1);
      await queue.addBulk([
        { payload: 'g1', group: 'g' },
        { payload: 'h1', group: 'h' },
        { payload: 'g2', group: 'g' },
        { payload: 'g3', group: 'g' },
        { payload: 'h2', group: 'h' },
      ]);
      const { jobs } = await leases(queue).claim(10, 30_000);
      expect(jobs.map((j) => j.payload).sort()).toEqual(['g1', 'g2', 'h1']);
      expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, -1)).toEqual([]);
      expect(await rings(queue, () => leases(queue).complete(jobs))).toBe(1);
      // each lane back on the ring exactly once
      expect((await redis.raw.lrange(keysOf(queue).key('ring'), 0, -1)).sort()).toEqual(['g', 'h']);
    });

    it('does not ring when complete frees a slot with nothing waiting in the lane', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.add(1, { group: 'g' });
      const held = await claimOne(queue);
      expect(await rings(queue, () => leases(queue).complete([held]))).toBe(0);
    });

    it('does not ring when an ungrouped job completes with nothing waiting', async () => {
      const queue = redis.queue();
      await queue.add(1);
      const held = await claimOne(queue);
      const [tokens, { completed }] = await ringsAnd(queue, () => leases(queue).complete([held]));
      expect(tokens).toBe(0);
      expect(completed).toEqual([true]);
    });

    it('does not ring when a job in an unlimited group completes or fails', async () => {
      const queue = redis.queue();
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }, { payload: 3, group: 'g' }]);
      const a = await claimOne(queue);
      const b = await claimOne(queue);
      expect(await rings(queue, () => leases(queue).complete([a]))).toBe(0);
      expect(await rings(queue, () => leases(queue).fail([{ ...b, error: 'x' }]))).toBe(0);
    });

    it('does not ring for a fenced-off settle', async () => {
      const queue = redis.queue();
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      const held = await claimOne(queue);
      const stale = { id: held.id, token: held.token + 1 };
      expect(await rings(queue, () => leases(queue).complete([stale]))).toBe(0);
      expect(await rings(queue, () => leases(queue).retry([{ ...stale, error: 'x', delayMs: 0 }]))).toBe(0);
      expect(await rings(queue, () => leases(queue).fail([{ ...stale, error: 'x' }]))).toBe(0);
    });
  });

  it('rings once when a dead job is reprocessed', async () => {
    const queue = redis.queue();
    await queue.add(1, { maxAttempts: 1 });
    const held = await claimOne(queue);
    expect(await leases(queue).fail([{ ...held, error: 'bad' }])).toEqual(['dead']);
    expect(await rings(queue, () => queue.reprocess(held.id))).toBe(1);
    expect((await leases(queue).claim(1, 30_000)).jobs.map((j) => j.id)).toEqual([held.id]);
  });

  it('does not ring when a dead job is reprocessed into a paused group', async () => {
    const queue = redis.queue();
    await queue.add(1, { maxAttempts: 1, group: 'g' });
    const held = await claimOne(queue);
    await leases(queue).fail([{ ...held, error: 'bad' }]);
    await queue.pauseGroup('g');
    expect(await rings(queue, () => queue.reprocess(held.id))).toBe(0);
  });

  it('does not ring for a claim', async () => {
    const queue = redis.queue();
    expect(await rings(queue, () => leases(queue).claim(5, 30_000))).toBe(0);
    await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3 }]);
    const [tokens, result] = await ringsAnd(queue, () => leases(queue).claim(2, 30_000));
    expect(tokens).toBe(0);
    const claimed = result.jobs.length;
    expect(claimed).toBe(2);
  });

  it('is emptied by a claim that finds less than it asked for: its tokens are stale', async () => {
    const queue = redis.queue();
    const wake = keysOf(queue).key('wake');
    await queue.add(1);
    await queue.add(2, { group: 'g' });
    expect(await redis.raw.llen(wake)).toBe(2);
    // n jobs claimed out of n asked: work may remain, the tokens stay
    expect((await leases(queue).claim(1, 30_000)).jobs).toHaveLength(1);
    expect(await redis.raw.llen(wake)).toBe(2);
    // fewer than asked: nothing is claimable now, so no parked consumer should wake for them
    expect((await leases(queue).claim(5, 30_000)).jobs).toHaveLength(1);
    expect(await redis.raw.llen(wake)).toBe(0);
    // and the next transition that makes work claimable rings again
    await queue.add(3);
    expect(await redis.raw.llen(wake)).toBe(1);
  });

  it('never holds more than 64 tokens, all of them "1", and cuts a full list back to 32', async () => {
    const queue = redis.queue();
    const wake = keysOf(queue).key('wake');
    for (let i = 0; i < 200; i++) {
      await queue.add(i);
      const length = await redis.raw.llen(wake);
      // 1..64, then the 65th push cuts it to 32, and it climbs to 64 again: one LTRIM per 33 pushes
      expect(length).toBe(i < 64 ? i + 1 : 32 + ((i - 64) % 33));
    }
    const tokens = await redis.raw.lrange(wake, 0, -1);
    expect(tokens).toHaveLength(32 + ((199 - 64) % 33));
    expect(new Set(tokens)).toEqual(new Set(['1']));
    expect((await queue.stats()).counts.pending).toBe(200);
  });
  describe('the schedule bell', () => {
    it("a full claim takes the bell's news: the next times in its reply, the bell emptied; a later full claim has none", async () => {
      const queue = redis.queue();
      const sched = keysOf(queue).key('sched');
      await queue.addBulk([1, 2, 3, 4].map((n) => ({ payload: { n } })));
      const later = await queue.add({ later: true }, { delayMs: 60_000 });
      expect(await redis.raw.llen(sched)).toBe(1); // nobody parked heard it
      const first = await leases(queue).claim(2, 30_000);
      expect(first.jobs).toHaveLength(2);
      expect(first.nextDueAt).toBe(Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), later.id)));
      expect(first.nextLeaseEnd).toBe(first.now + 30_000);
      expect(await redis.raw.llen(sched)).toBe(0);
      const second = await leases(queue).claim(2, 30_000);
      expect(second.jobs).toHaveLength(2);
      expect(second.nextDueAt).toBeNull();
      expect(second.nextLeaseEnd).toBeNull();
    });

    it('a beat reports the next times even when it claims all it asked for', async () => {
      const queue = redis.queue();
      await queue.addBulk([1, 2, 3].map((n) => ({ payload: { n } })));
      const later = await queue.add({ later: true }, { delayMs: 60_000 });
      await redis.raw.del(keysOf(queue).key('sched'));
      const beat = await leases(queue).beat({ n: 2, leaseMs: 30_000 });
      expect(beat.jobs).toHaveLength(2);
      expect(beat.nextDueAt).toBe(Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), later.id)));
      expect(beat.nextLeaseEnd).toBe(beat.now + 30_000);
      // the doorbell is left alone: work is still claimable
      expect(await redis.raw.llen(keysOf(queue).key('wake'))).toBeGreaterThan(0);
    });
  });
});
