import { describe, expect, it } from 'vitest';
import { JobNotFoundError, JobStateError } from '../../src/index.js';
import { keysOf, laneIds, laneOrder, laneSize, snapshotKeys, useRedis, leases } from '../helpers.js';


describe('group administration', () => {
  const redis = useRedis();

  describe('moveToGroup', () => {
    it('moves a pending job from lane A to lane B with its order, fixing the ring and ringing once', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const { id } = await queue.add('x', { group: 'A' });
      await queue.add('u'); // ungrouped work on the ring too
      // a fresh job waits in A's arrivals list, its order in its row
      const order = await laneOrder(redis.raw, k, id, 'A');
      expect(order).not.toBeNull();
      expect(await redis.raw.lrange(k.fifo('A'), 0, '-1')).toEqual([id]);
      expect(await redis.raw.hget(k.job(id), 'o')).toBe(order);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['A', '*']);
      await redis.raw.del(k.key('wake'));

      await queue.moveToGroup(id, 'B');
      expect(await laneSize(redis.raw, k, 'A')).toBe(0);
      expect(await redis.raw.zrange(k.lane('B'), 0, '-1', 'WITHSCORES')).toEqual([id, order]);
      const ring = await redis.raw.lrange(k.key('ring'), 0, '-1');
      expect(ring).not.toContain('A');
      expect(ring.filter((e) => e === 'B')).toHaveLength(1);
      expect(ring.sort()).toEqual(['*', 'B']);
      // in B's zset at its order: a list takes only orders newer than its own
      expect(await redis.raw.hmget(k.job(id), 's', 'g', 'o')).toEqual(['pending', 'B', order]);
      expect(await redis.raw.sismember(k.key('groups'), 'B')).toBe(1);
      expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
      expect((await queue.getJob(id))?.group).toBe('B');

      const claimed = await leases(queue).claim(5, 30_000);
      expect(claimed.jobs.find((j) => j.id === id)).toMatchObject({ group: 'B', payload: 'x' });
      expect(await redis.raw.hget(k.key('gactive'), 'B')).toBe('1');
      expect(await redis.raw.hget(k.key('gactive'), 'A')).toBeNull();
    });

    it('into a lane that already has work: keeps its place by order, the lane stays on the ring once', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const early = await queue.add('early', { group: 'A' });
      const stay = await queue.add('stay', { group: 'A' });
      const late = await queue.add('late', { group: 'B' });
      await redis.raw.del(k.key('wake'));

      await queue.moveToGroup(early.id, 'B');
      // B: the earlier arrival goes ahead of the later one
      expect(await laneIds(redis.raw, k, 'B')).toEqual([early.id, late.id]);
      // A still has work, so it stays on the ring; B is on it exactly once
      expect(await laneIds(redis.raw, k, 'A')).toEqual([stay.id]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['A', 'B']);
      expect(await redis.raw.llen(k.key('wake'))).toBe(1);
    });

    it('to null makes the job ungrouped', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const { id } = await queue.add('x', { group: 'A', priority: 3 });
      const order = await laneOrder(redis.raw, k, id, 'A');
      expect(order).not.toBeNull();
      await redis.raw.del(k.key('wake'));
      await queue.moveToGroup(id, null);
      expect(await redis.raw.hget(k.job(id), 'g')).toBeNull();
      expect(await redis.raw.hget(k.job(id), 'p')).toBe('3');
      expect(await redis.raw.zrange(k.key('pending'), 0, '-1', 'WITHSCORES')).toEqual([id, order]);
      expect(await laneSize(redis.raw, k, 'A')).toBe(0);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
      expect(await redis.raw.llen(k.key('wake'))).toBe(1);
      const [job] = (await leases(queue).claim(1, 30_000)).jobs;
      expect(job).toMatchObject({ id, group: undefined });
      expect(await redis.raw.hlen(k.key('gactive'))).toBe(0);

      // and back from ungrouped into a group
      const other = await queue.add('y');
      await queue.moveToGroup(other.id, 'C');
      expect(await laneSize(redis.raw, k)).toBe(0);
      expect(await laneIds(redis.raw, k, 'C')).toEqual([other.id]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['C']);
    });

    it('into a paused group or one at its limit: in the lane, off the ring, no doorbell', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      await queue.pauseGroup('P');
      await queue.setGroupLimit('L', 1);
      await queue.add('busy', { group: 'L' });
      expect((await leases(queue).claim(1, 30_000)).jobs).toHaveLength(1);
      const a = await queue.add('a');
      const b = await queue.add('b');
      await redis.raw.del(k.key('wake'));

      await queue.moveToGroup(a.id, 'P');
      expect(await laneIds(redis.raw, k, 'P')).toEqual([a.id]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
      await queue.moveToGroup(b.id, 'L');
      expect(await laneIds(redis.raw, k, 'L')).toEqual([b.id]);
      // pending emptied: its entry left the ring too
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
      expect(await redis.raw.llen(k.key('wake'))).toBe(0);
      expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    });

    it('refuses a job that is not pending, and a missing one, changing nothing', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const active = await queue.add('a', { group: 'A' });
      await leases(queue).claim(1, 30_000);
      const scheduled = await queue.add('s', { group: 'A', delayMs: 600_000 });
      const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
      await expect(queue.moveToGroup(active.id, 'B')).rejects.toBeInstanceOf(JobStateError);
      await expect(queue.moveToGroup(active.id, null)).rejects.toMatchObject({ code: 'EMQSTATE' });
      await expect(queue.moveToGroup(scheduled.id, 'B')).rejects.toBeInstanceOf(JobStateError);
      await expect(queue.moveToGroup('missing', 'B')).rejects.toBeInstanceOf(JobNotFoundError);
      expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
      expect(await redis.raw.hget(k.job(active.id), 'g')).toBe('A');
      expect(await redis.raw.hget(k.key('gactive'), 'A')).toBe('1');
    });
  });

  describe('sweepGroup', () => {
    it('repairs an inflated active count and puts the lane back on the ring', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      await queue.setGroupLimit('g', 2);
      await queue.add('first', { group: 'g' });
      const waiting = await queue.add('waiting', { group: 'g' });
      expect((await leases(queue).claim(1, 30_000)).jobs).toHaveLength(1);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      // corrupt: the stored count says 5, and (consistently with that) g is off the ring
      await redis.raw.hset(k.key('gactive'), 'g', 5);
      await redis.raw.lrem(k.key('ring'), 0, 'g');
      await redis.raw.del(k.key('wake'));
      expect((await leases(queue).claim(1, 30_000)).jobs).toEqual([]);

      expect(await queue.sweepGroup('g')).toEqual({ stored: 5, counted: 1 });
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
      expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);

      const claimed = await leases(queue).claim(5, 30_000);
      expect(claimed.jobs.map((j) => j.id)).toEqual([waiting.id]);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('2');
    });

    it('repairs a count that is too low and takes the lane off the ring', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      await queue.setGroupLimit('g', 2);
      await queue.addBulk([1, 2, 3].map((n) => ({ payload: `j${n}`, group: 'g' })));
      expect((await leases(queue).claim(2, 30_000)).jobs).toHaveLength(2);
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
      // corrupt: the stored count lost both claims, and g went back on the ring
      await redis.raw.hdel(k.key('gactive'), 'g');
      await redis.raw.rpush(k.key('ring'), 'g');
      await redis.raw.del(k.key('wake'));

      expect(await queue.sweepGroup('g')).toEqual({ stored: 0, counted: 2 });
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('2');
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
      expect(await redis.raw.llen(k.key('wake'))).toBe(0);
      expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    });

    it('sweeping a consistent group changes nothing', async () => {
      const queue = redis.queue<string>();
      await queue.setGroupLimit('g', 3);
      await queue.addBulk([1, 2, 3, 4].map((n) => ({ payload: `g${n}`, group: 'g' })));
      // h has work but nothing active (paused, so no claim takes from it)
      await queue.pauseGroup('h');
      await queue.add('other', { group: 'h' });
      await queue.add('plain');
      // ring [g, *]: g, *, g
      expect((await leases(queue).claim(3, 30_000)).jobs.map((j) => j.payload).sort()).toEqual(['g1', 'g2', 'plain']);
      const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
      const { stored, counted } = await queue.sweepGroup('g');
      expect({ stored, counted }).toEqual({ stored: 2, counted: 2 });
      expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
      // a group with nothing active, and a group that never existed
      expect(await queue.sweepGroup('h')).toEqual({ stored: 0, counted: 0 });
      expect(await queue.sweepGroup('nobody')).toEqual({ stored: 0, counted: 0 });
      expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    });
  });

  describe('setGroupLimit', () => {
    it('lowered below the active count holds the group back until completions bring it below; null lifts it', async () => {
      const queue = redis.queue<number>();
      const k = keysOf(queue);
      await queue.addBulk([0, 1, 2, 3, 4, 5].map((n) => ({ payload: n, group: 'g' })));
      const first = (await leases(queue).claim(3, 30_000)).jobs;
      expect(first.map((j) => j.payload)).toEqual([0, 1, 2]);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('3');
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);

      await redis.raw.del(k.key('wake'));
      await queue.setGroupLimit('g', 1);
      expect(await redis.raw.hget(k.key('glimit'), 'g')).toBe('1');
      // lowering takes nothing back but takes the lane off the ring
      expect(await redis.raw.zcard(k.key('active'))).toBe(3);
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
      expect(await redis.raw.llen(k.key('wake'))).toBe(0);
      expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);

      // 3 -> 2 -> 1: still not below the limit of 1
      for (const job of first.slice(0, 2)) {
        expect((await leases(queue).complete([{ id: job.id, token: job.token }])).completed).toEqual([true]);
        expect(await redis.raw.llen(k.key('ring'))).toBe(0);
        expect(await redis.raw.llen(k.key('wake'))).toBe(0);
        expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
        expect((await leases(queue).beat({ n: 5, leaseMs: 30_000 })).jobs).toEqual([]);
      }
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      // 1 -> 0: below the limit, the lane is back and the doorbell rings
      expect((await leases(queue).complete([{ id: first[2]!.id, token: first[2]!.token }])).completed).toEqual([true]);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
      expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
      const one = (await leases(queue).claim(5, 30_000)).jobs;
      expect(one.map((j) => j.payload)).toEqual([3]);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
      expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);

      // null lifts the limit: the lane goes back on the ring and everything left is claimable
      await redis.raw.del(k.key('wake'));
      await queue.setGroupLimit('g', null);
      expect(await redis.raw.hexists(k.key('glimit'), 'g')).toBe(0);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
      expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
      expect((await leases(queue).claim(5, 30_000)).jobs.map((j) => j.payload)).toEqual([4, 5]);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('3');
    });

    it('a limit never lets a claim batch go past it, and other work still flows', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      await queue.setGroupLimit('g', 2);
      await queue.addBulk([
        ...[1, 2, 3, 4, 5].map((n) => ({ payload: `g${n}`, group: 'g' })),
        ...[1, 2, 3].map((n) => ({ payload: `u${n}` })),
      ]);
      const claimed = (await leases(queue).claim(10, 30_000)).jobs;
      expect(claimed.filter((j) => j.group === 'g')).toHaveLength(2);
      expect(claimed.filter((j) => j.group === undefined)).toHaveLength(3);
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('2');
      expect(await laneSize(redis.raw, k, 'g')).toBe(3);
      expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    });
  });
});
