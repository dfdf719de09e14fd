import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/**
 * The keyspace checker's (r), cancel (test/cancel-invariants.ts), and (s), expiry (test/expiry-invariants.ts), can fail: each way of breaking a
 * cancelled row, its index, or the count of running jobs whose cancel is pending is reported.
 */
describe('the keyspace checker’s cancel', () => {
  const redis = useRedis();

  it('reports a cancelled row without its reason or out of its index, a reason on a pending row, and a wrong pending count', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const ended = await queue.add('ended');
    const waiting = await queue.add('waiting', { delayMs: 60_000 });
    await queue.add('running');
    await queue.cancel(ended.id, { reason: 'r' });
    const [running] = (await leases(queue).claim(1, 30_000)).jobs;
    await queue.cancel(running!.id, { reason: 'r' });
    const check = (): Promise<string[]> => checkInvariants(redis.raw, queue.name);
    expect(await check()).toEqual([]);

    // a cancelled row without its reason
    await redis.raw.hdel(k.job(ended.id), 'cx');
    expect(await check()).toEqual([`${ended.id}: cancelled without a reason (cx)`]);
    await redis.raw.hset(k.job(ended.id), 'cx', 'r');
    // out of its index: in no place, its row says cancelled
    await redis.raw.zrem(`${k.prefix}cancelled`, ended.id);
    expect(await check()).toEqual([`${ended.id}: in no set, but its row says "cancelled"`]);
    await redis.raw.zadd(`${k.prefix}cancelled`, Number(await redis.raw.hget(k.job(ended.id), 'f')), ended.id);
    // a reason on a job that is neither cancelled nor running
    await redis.raw.hset(k.job(waiting.id), 'cx', 'r');
    expect(await check()).toEqual([`${waiting.id}: scheduled with a cancel reason (cx): only a cancelled row, or an active one whose cancel was asked, has one`]);
    await redis.raw.hdel(k.job(waiting.id), 'cx');
    // the count of running jobs whose cancel is pending, too low: a settle would not read the row's cx
    await redis.raw.hdel(k.key('meta'), 'cx');
    expect(await check()).toEqual(['meta cx is undefined but 1 running job(s) have their cancel asked']);
    await redis.raw.hset(k.key('meta'), 'cx', '1');
    expect(await check()).toEqual([]);
  });
});

describe('the keyspace checker’s expiry', () => {
  const redis = useRedis();

  it('reports a never started job out of the expiring index, an index at another time, and meta xp missing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const job = await queue.add('x', { expireAfterMs: 60_000 });
    const check = (): Promise<string[]> => checkInvariants(redis.raw, queue.name);
    expect(await check()).toEqual([]);
    const xa = (await redis.raw.hget(k.job(job.id), 'xa'))!;
    await redis.raw.zadd(`${k.prefix}expiring`, Number(xa) + 1, job.id);
    expect(await check()).toEqual([`${job.id}: expires at ${xa} but is indexed at ${Number(xa) + 1}`]);
    await redis.raw.zrem(`${k.prefix}expiring`, job.id);
    expect(await check()).toEqual([`${job.id}: pending, never started, expires at ${xa}, but not in the expiring index`]);
    await redis.raw.zadd(`${k.prefix}expiring`, Number(xa), job.id);
    await redis.raw.hdel(k.key('meta'), 'xp');
    expect(await check()).toEqual(['rows have an expiry but meta xp is undefined: the claims would not sweep them']);
    await redis.raw.hset(k.key('meta'), 'xp', '1');
    expect(await check()).toEqual([]);
  });
});
