import { describe, expect, it } from 'vitest';
import { buryJobs, completeJobs, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { leases, scriptsOf, useRedis } from '../helpers.js';
import { obliterateOp } from '../../src/ops/obliterate.js';

/**
 * obliterate({force, limit}): the whole queue goes, every key and its registry entry, in chunks
 * of at most 500 rows; refused (EMQSTATE, nothing written) while jobs are active unless forced.
 * Only the request records (`req:*`, each with a TTL) are left to expire.
 */
describe('obliterate', () => {
  const redis = useRedis();

  /** Keys of the queue that are not request records with a TTL. */
  async function keysLeft(name: string): Promise<string[]> {
    const out: string[] = [];
    for (const key of await redis.raw.keys(`emq:{${name}}:*`)) {
      if (!key.includes(':req:') || (await redis.raw.pttl(key)) < 0) out.push(key);
    }
    return out.sort();
  }

  /** A queue with jobs in every state, settings, bells and a registry entry. */
  async function busyQueue() {
    const queue = redis.queue<string>({ keepCompletedMs: -1 });
    await queue.setGroupLimit('g', 5);
    await queue.pauseGroup('p');
    await completeJobs(queue, ['c1', 'c2']);
    await buryJobs(queue, ['d1'], { group: 'g' });
    await queue.addBulk([
      { payload: 'u1' },
      { payload: 'g1', group: 'g'},
      { payload: 'g2', group: 'g', priority: 2},
      { payload: 'p1', group: 'p'},
      { payload: 's1', delayMs: 60_000},
    ]);
    await queue.setDeadRetention({ maxCount: 100 });
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(1);
    return queue;
  }

  it('deletes every key of a queue with no active job, and its registry entry', async () => {
    const queue = await busyQueue();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    expect(await queue.obliterate()).toBe(true);
    expect(await keysLeft(queue.name)).toEqual([]);
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(0);
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
    // twice: nothing to do, still gone
    expect(await queue.obliterate()).toBe(true);
    expect(await keysLeft(queue.name)).toEqual([]);
    // the queue can be used again, and registers again with its next enqueue
    await queue.add('again');
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(1);
    expect((await leases(queue).claim(1, 30_000)).jobs.map((j) => j.payload)).toEqual(['again']);
  });

  it('is refused while jobs are active, writing nothing; forced, it fences their holders off', async () => {
    const queue = await busyQueue();
    const held = (await leases(queue).claim(2, 30_000)).jobs;
    expect(held).toHaveLength(2);
    await refusedUnchanged(redis.raw, queue, () => queue.obliterate(), { name: 'JobStateError', code: 'EMQSTATE' });
    await refusedUnchanged(redis.raw, queue, () => queue.obliterate({ force: false }), { code: 'EMQSTATE' });
    expect(await queue.obliterate({ force: true })).toBe(true);
    expect(await keysLeft(queue.name)).toEqual([]);
    expect((await leases(queue).complete(held)).completed).toEqual([false, false]);
    expect(await leases(queue).retry(held.map((j) => ({ id: j.id, token: j.token, error: 'x' })))).toEqual(['fenced', 'fenced']);
    expect(await keysLeft(queue.name)).toEqual([]);
  });

  it('goes in chunks with a limit: each step a smaller, paused, consistent queue', async () => {
    const queue = redis.queue<number>();
    await queue.setGroupLimit('g3', 2);
    await queue.addBulk(Array.from({ length: 2300 }, (_, i) => ({ payload: i, ...(i % 3 === 0 ? {} : { group: `g${i % 40}` })})));
    await buryJobs(queue, Array.from({ length: 300 }, (_, i) => i));
    await leases(queue).claim(50, 30_000);
    const steps: boolean[] = [];
    for (let i = 0; i < 20 && steps.at(-1) !== true; i++) {
      steps.push(await queue.obliterate({ force: true, limit: 700 }));
      if (steps.at(-1) === false) {
        expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
        expect((await queue.stats()).paused).toBe(true);
        expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
      }
    }
    expect(steps.slice(0, 3)).toEqual([false, false, false]);
    expect(steps.at(-1)).toBe(true);
    expect(await keysLeft(queue.name)).toEqual([]);
  });

  it('a chunk sent again goes on where it stopped: harmless twice', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: i })));
    const gateway = scriptsOf(queue);
    expect(await gateway.run(obliterateOp(false, 20))).toEqual({ outcome: 'more', count: 20, outbox: [] });
    expect(await gateway.run(obliterateOp(false, 20))).toEqual({ outcome: 'done', count: 10, outbox: [] });
    expect(await gateway.run(obliterateOp(false, 20))).toEqual({ outcome: 'done', count: 0, outbox: [] });
    expect(await keysLeft(queue.name)).toEqual([]);
  });

  it('refuses a bad limit or force with EMQARG and writes nothing', async () => {
    const queue = await busyQueue();
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    await refusedUnchanged(redis.raw, queue, () => queue.obliterate({ limit: 0 }), arg);
    await refusedUnchanged(redis.raw, queue, () => queue.obliterate({ force: 'yes' as unknown as boolean }), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(obliterateOp(true, 0)), arg);
    expect(await keysLeft(queue.name)).not.toEqual([]);
  });
});
