import { describe, expect, it } from 'vitest';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, sleep, useRedis } from '../helpers.js';

/**
 * The completed index (`emq:{q}:completed`, score = finished ms): complete writes every completed
 * row into it unless keepCompletedMs is 0, trims entries older than keepCompletedMs behind the
 * rows' own TTL, and remove takes a row's entry with it. getJobs, clean and obliterate read it.
 */
describe('the completed index', () => {
  const redis = useRedis();

  /** Enqueues `n` jobs, claims and completes them; resolves with their ids. */
  async function complete(queue: ReturnType<typeof redis.queue>, n: number): Promise<string[]> {
    await queue.addBulk(Array.from({ length: n }, (_, i) => ({ payload: i })));
    const { jobs } = await leases(queue).claim(n, 30_000);
    expect((await leases(queue).complete(jobs)).completed).toEqual(jobs.map(() => true));
    return jobs.map((j) => j.id);
  }

  it('indexes each completed row at its finish time, and the checker holds', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const ids = await complete(queue, 3);
    const index = await redis.raw.zrange(k.key('completed'), 0, '-1', 'WITHSCORES');
    for (const id of ids) {
      const f = await redis.raw.hget(k.job(id), 'f');
      expect(index[index.indexOf(id) + 1]).toBe(f);
      expect(await redis.raw.pttl(k.job(id))).toBeGreaterThan(0);
    }
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a kept row expires exactly keepCompletedMs after its finish time, the instant its entry may go', async () => {
    // a TTL counted from each PEXPIRE's own moment outlived its index entry by up to the script's
    // length (a batch of 500 with events under load: milliseconds), and the soak's checker caught
    // a completed row missing from the index
    const queue = redis.queue({ keepCompletedMs: 60_000 });
    const k = keysOf(queue);
    const ids = await complete(queue, 500);
    for (const id of [ids[0]!, ids[499]!]) {
      const [f, expireAt] = await Promise.all([redis.raw.hget(k.job(id), 'f'), redis.raw.call('PEXPIRETIME', k.job(id))]);
      expect(Number(expireAt)).toBe(Number(f) + 60_000);
    }
  });

  it('indexes nothing with keepCompletedMs 0 (no row is kept), and everything with -1', async () => {
    const none = redis.queue({ keepCompletedMs: 0 });
    await complete(none, 2);
    expect(await redis.raw.exists(keysOf(none).key('completed'))).toBe(0);
    const forever = redis.queue({ keepCompletedMs: -1 });
    const ids = await complete(forever, 2);
    expect((await redis.raw.zrange(keysOf(forever).key('completed'), 0, '-1')).sort()).toEqual([...ids].sort());
    expect(await checkInvariants(redis.raw, forever.name)).toEqual([]);
  });

  it('drops entries older than keepCompletedMs at the next complete, behind the rows that expired', async () => {
    const queue = redis.queue({ keepCompletedMs: 100 });
    const k = keysOf(queue);
    const [old] = await complete(queue, 1);
    await sleep(150);
    expect(await redis.raw.exists(k.job(old!))).toBe(0);
    // the stale entry stays until a complete trims it: allowed, its row is gone
    expect(await redis.raw.zrange(k.key('completed'), 0, '-1')).toEqual([old]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const [fresh] = await complete(queue, 1);
    expect(await redis.raw.zrange(k.key('completed'), 0, '-1')).toEqual([fresh]);
  });

  it('loses a completed row\'s entry when the row is removed', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [a, b] = await complete(queue, 2);
    await queue.remove(a!);
    expect(await redis.raw.zrange(k.key('completed'), 0, '-1')).toEqual([b]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('is known to the checker: a completed row out of the index, or at another time, is flagged', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const [id] = await complete(queue, 1);
    const f = (await redis.raw.hget(k.job(id!), 'f'))!;
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(
      () => redis.raw.zrem(k.key('completed'), id!),
      () => redis.raw.zadd(k.key('completed'), f, id!),
      new RegExp(`${id}: completed but not in the completed index`),
    );
    await expectFlag(
      () => redis.raw.zadd(k.key('completed'), '5', id!),
      () => redis.raw.zadd(k.key('completed'), f, id!),
      new RegExp(`${id}: in the completed index at 5 but finished at "${f}"`),
    );
    await expectFlag(
      () => redis.raw.del(k.key('completed')).then(() => redis.raw.set(k.key('completed'), 'x')),
      () => redis.raw.del(k.key('completed')).then(() => redis.raw.zadd(k.key('completed'), f, id!)),
      /key .*:completed has type string/,
    );
  });
});
