import { describe, expect, it } from 'vitest';
import { refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, scriptsOf, useRedis } from '../helpers.js';
import { drainOp } from '../../src/ops/drain.js';

/**
 * drain(): the jobs waiting to run (pending in every lane, scheduled) are deleted, rows and all,
 * in chunks of at most 500 rows; active jobs run on; lanes leave the ring, group counts, limits
 * and paused flags stay, and the keyspace checker holds.
 */
describe('drain', () => {
  const redis = useRedis();

  it('deletes pending and scheduled jobs, never active ones, and keeps the queue consistent', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    await queue.setGroupLimit('limited', 1);
    await queue.addBulk([
      { payload: 'u1' },
      { payload: 'u-prio', priority: 3},
      { payload: 'l1', group: 'limited'},
      { payload: 'l2', group: 'limited'},
      { payload: 'p1', group: 'paused'},
      { payload: 's1', delayMs: 60_000},
      { payload: 's2', delayMs: 60_000, group: 'limited'},
    ]);
    await queue.pauseGroup('paused');
    // l1 is active: its group is at its limit
    const active = (await leases(queue).claim(2, 30_000)).jobs;
    expect(active.map((j) => j.payload).sort()).toEqual(['l1', 'u1']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    expect(await queue.drain()).toBe(5);
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, scheduled: 0, active: 2 });
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
    expect(await redis.raw.hget(k.key('gactive'), 'limited')).toBe('1');
    expect(await redis.raw.hget(k.key('glimit'), 'limited')).toBe('1');
    expect(await redis.raw.sismember(k.key('gpaused'), 'paused')).toBe(1);
    const rows = (await redis.raw.keys(`${k.prefix}job:*`)).sort();
    expect(rows).toEqual(active.map((j) => k.job(j.id)).sort());
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // a consumer then claims nothing; the active jobs finish normally and free their slots
    expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    expect((await leases(queue).complete(active)).completed).toEqual([true, true]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // and the queue takes work again as before
    await queue.add('after', { group: 'limited' });
    expect((await leases(queue).claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['after']);
  });

  it('goes in chunks over many groups and a long schedule, and stops at its limit', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.addBulk(Array.from({ length: 2600 }, (_, i) => ({ payload: i, ...(i % 2 === 0 ? { group: `g${i % 150}` } : {})})));
    await queue.addBulk(Array.from({ length: 1500 }, (_, i) => ({ payload: i, delayMs: 60_000 + i})));
    expect(await queue.drain({ limit: 1700 })).toBe(1700);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const { pending, scheduled } = (await queue.stats()).counts;
    expect(pending + scheduled).toBe(2400);
    expect(await queue.drain()).toBe(2400);
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, scheduled: 0 });
    expect(await redis.raw.keys(`${k.prefix}job:*`)).toEqual([]);
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // twice: nothing left
    expect(await queue.drain()).toBe(0);
  });

  it('rings no doorbell: nothing became claimable', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g'}]);
    await redis.raw.del(k.key('wake'));
    await queue.drain();
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);
  });

  it('sent again (a lost reply), a chunk answers the same and deletes nothing more', async () => {
    const queue = redis.queue<string>();
    await queue.addBulk([{ payload: 'a' }, { payload: 'b' }]);
    const gateway = scriptsOf(queue);
    const request = { key: 'b:drain-repeat', ttlMs: 60_000 };
    const once = await gateway.run(drainOp(1000, '', request));
    expect(once).toEqual({ deleted: 2, cursor: 'done', outbox: [] });
    // a job enqueued after the drain ran must survive its repeat
    await queue.add('later');
    expect(await gateway.run(drainOp(1000, '', request))).toEqual(once);
    expect((await queue.getJobs('pending')).map((j) => j.payload)).toEqual(['later']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('refuses a bad limit or cursor with EMQARG and writes nothing', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2, delayMs: 60_000}]);
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.drain({ limit: 0 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.drain({ limit: 2.5 }), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(drainOp(10, 'x7', { key: '', ttlMs: 0 })), arg);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(drainOp(0, '', { key: '', ttlMs: 0 })), arg);
  });
});
