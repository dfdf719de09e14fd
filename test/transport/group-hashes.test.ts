import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/**
 * The groups' limits and active counts are hashes read and written a field per group at every
 * claim and settle: once a claim counts many groups, or many groups have a limit, each is kept a
 * hashtable (lua/includes/hash_as_table.lua), since a packed hash (Redis's listpack, up to 128
 * fields) is walked whole for each field. The conversion leaves no field behind, and the counts
 * and limits read as they did.
 */
describe('group limits and counts of many groups', () => {
  const redis = useRedis();
  const encoding = (key: string): Promise<unknown> => redis.raw.object('ENCODING', key);

  it('are hashtables once many groups count, with nothing in them but the groups', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const groups = Array.from({ length: 40 }, (_, g) => `g${g}`);
    for (const g of groups.slice(0, 15)) await queue.setGroupLimit(g, 1);
    // fewer limits than the threshold: still packed
    expect(await encoding(k.key('glimit'))).toBe('listpack');
    for (const g of groups.slice(15)) await queue.setGroupLimit(g, 1);
    expect(await encoding(k.key('glimit'))).toBe('hashtable');
    expect(Object.keys(await redis.raw.hgetall(k.key('glimit'))).sort()).toEqual([...groups].sort());

    await queue.addBulk(groups.flatMap((group) => [{ payload: 1, group }, { payload: 2, group }]));
    // a claim of one group packs its count as before
    const one = await leases(queue).claim(1, 60_000);
    expect(await encoding(k.key('gactive'))).toBe('listpack');
    const many = await leases(queue).claim(100, 60_000);
    // each group's limit of 1 holds: the 39 others, one job each
    expect(many.jobs.length).toBe(39);
    expect(await encoding(k.key('gactive'))).toBe('hashtable');
    const counts = await redis.raw.hgetall(k.key('gactive'));
    expect(Object.keys(counts).sort()).toEqual([...groups].sort());
    expect(new Set(Object.values(counts))).toEqual(new Set(['1']));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // settled, the counts go back to 0: deleted, and the next round claims each group's second job
    const done = await leases(queue).complete([...one.jobs, ...many.jobs].map(({ id, token }) => ({ id, token })));
    expect(done.completed.every(Boolean)).toBe(true);
    expect(await redis.raw.exists(k.key('gactive'))).toBe(0);
    expect((await leases(queue).claim(100, 60_000)).jobs.length).toBe(40);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
