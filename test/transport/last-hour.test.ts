import { afterEach, describe, expect, it } from 'vitest';
import type { LastHour, Queue } from '../../src/index.js';
import { keyspace } from '../../src/keyspace.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionName, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { queueOverviews } from '../../src/queue/registry.js';
import { checkInvariants, checkPartitionedQueue, flagChecker } from '../invariants.js';
import { leases, queueName, sleep, useRedis } from '../helpers.js';

const MINUTE = 60_000;

/** The per-minute buckets' key of queue `name` (derived by the scripts from the prefix). */
const minutesKey = (name: string): string => `${keyspace(name).prefix}minutes`;

/**
 * The jobs completed and sent to dead per minute of the last hour (issue 20's chart): complete and
 * every burial count in `emq:{q}:minutes` (lua/includes/count_minute.lua), counts.lua reads the
 * hour, `stats().lastHour` and `queueOverviews` show it, obliterate deletes it, and the checker
 * knows its rules ((o) in test/invariants.ts).
 */
describe('the last hour, per minute', () => {
  const redis = useRedis();
  const partitioned: string[] = [];

  afterEach(async () => {
    for (const name of partitioned.splice(0)) {
      for (const key of await redis.raw.keys(`emq:{${name}~*}:*`)) await redis.raw.del(key);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
      await redis.raw.srem('emq:queues', name);
    }
  });

  /** The server's current minute (floor(ms / 60000)). */
  const serverMinute = async (): Promise<number> => Math.floor((await redis.serverNow()) / MINUTE);

  /**
   * Checks `hour`'s shape, and that the `kind` counts of minutes `from` (the server's minute before
   * the writes) to its last add up to `total`, every other bucket 0: the writes may straddle a
   * minute's turn, so they are summed over the minutes they ran in. When they all ran in one
   * minute, its bucket, the last, holds them all.
   */
  function expectCounted(hour: LastHour, kind: 'completed' | 'dead', from: number, total: number): void {
    expect(hour.completed).toHaveLength(60);
    expect(hour.dead).toHaveLength(60);
    expect(hour.minute % MINUTE).toBe(0);
    const first = 59 - (hour.minute / MINUTE - from);
    expect(first).toBeGreaterThanOrEqual(58);
    const buckets = hour[kind];
    expect(buckets.slice(first).reduce((a, b) => a + b, 0)).toBe(total);
    expect(buckets.slice(0, first).every((n) => n === 0)).toBe(true);
    if (first === 59) expect(buckets[59]).toBe(total);
  }

  /** Enqueues `n` jobs with `options` and claims them, a lease of `leaseMs` each. */
  async function claimed<P>(queue: Queue<P>, payloads: P[], options: { maxAttempts?: number; leaseMs?: number } = {}) {
    await queue.addBulk(payloads.map((payload) => ({ payload, ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}) })));
    const { jobs } = await leases(queue).claim(payloads.length, options.leaseMs ?? 30_000);
    expect(jobs).toHaveLength(payloads.length);
    return jobs;
  }

  it('counts the jobs completed in their minute, one HINCRBY a call, and stats shows 60 buckets', async () => {
    const queue = redis.queue<number>();
    const from = await serverMinute();
    const jobs = await claimed(queue, [1, 2, 3, 4, 5]);
    await leases(queue).complete(jobs.slice(0, 3));
    await leases(queue).complete(jobs.slice(3));
    // a complete fenced off (a repeat of one already done) counts nothing
    await leases(queue).complete([{ id: 'JOB:nope', token: 1 }]);
    const stats = await queue.stats();
    expectCounted(stats.lastHour, 'completed', from, 5);
    expect(stats.lastHour.dead.every((n) => n === 0)).toBe(true);
    expect(stats.lastHour.minute).toBe((await serverMinute()) * MINUTE);
    const fields = await redis.raw.hgetall(minutesKey(queue.name));
    expect(Object.values(fields).reduce((a, b) => a + Number(b), 0)).toBe(5);
    expect(Object.keys(fields).every((f) => f.startsWith('c'))).toBe(true);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('counts every way to dead: retries used up, failed for good, a lease reaped on its last attempt', async () => {
    const queue = redis.queue<string>();
    const from = await serverMinute();
    const [used, failed] = await claimed(queue, ['used', 'failed'], { maxAttempts: 1 });
    expect(await leases(queue).retry([{ id: used!.id, token: used!.token, error: 'x' }])).toEqual(['dead']);
    expect(await leases(queue).fail([{ id: failed!.id, token: failed!.token, error: 'for good' }])).toEqual(['dead']);
    // a retry with attempts left is no death
    const [again] = await claimed(queue, ['again'], { maxAttempts: 2 });
    expect(await leases(queue).retry([{ id: again!.id, token: again!.token, error: 'x', delayMs: 60_000 }])).toEqual(['scheduled']);
    await claimed(queue, ['lapsed'], { maxAttempts: 1, leaseMs: 1 });
    await sleep(10);
    expect(await leases(queue).reap()).toEqual({ requeued: 0, buried: 1 });
    const { lastHour, counts } = await queue.stats();
    expect(counts.dead).toBe(3);
    expectCounted(lastHour, 'dead', from, 3);
    expect(lastHour.completed.every((n) => n === 0)).toBe(true);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('drops fields over 60 minutes old at the first count of a minute, and sets the key to expire', async () => {
    const queue = redis.queue<number>();
    const key = minutesKey(queue.name);
    const minute = await serverMinute();
    await redis.raw.hset(key, `c${minute - 70}`, '4', `d${minute - 70}`, '2', `c${minute - 30}`, '7');
    expect(await redis.raw.hexists(key, `c${minute}`)).toBe(0);
    // stats leaves out the field outside the hour, and keeps the one inside it
    const before = (await queue.stats()).lastHour;
    expect(before.completed.reduce((a, b) => a + b, 0)).toBe(7);
    expect(before.completed[59 - (before.minute / MINUTE - (minute - 30))]).toBe(7);
    const [job] = await claimed(queue, [1]);
    await leases(queue).complete([job!]);
    const fields = await redis.raw.hgetall(key);
    const now = Object.keys(fields).find((f) => f !== `c${minute - 30}`)!;
    expect(fields).toEqual({ [`c${minute - 30}`]: '7', [now]: '1' });
    expect(Number(now.slice(1))).toBeGreaterThanOrEqual(minute);
    expect(Number(await redis.raw.call('PEXPIRETIME', key))).toBe((Number(now.slice(1)) + 61) * MINUTE);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // a later count in the same minute writes its field alone
    const [next] = await claimed(queue, [2]);
    await leases(queue).complete([next!]);
    expect(Number(await redis.raw.hget(key, now))).toBeGreaterThanOrEqual(1);
  });

  it("the first death of a minute trims too, completions' fields included", async () => {
    const queue = redis.queue<number>();
    const key = minutesKey(queue.name);
    const minute = await serverMinute();
    await redis.raw.hset(key, `c${minute - 61}`, '1', `c${minute - 59}`, '1');
    const [job] = await claimed(queue, [1], { maxAttempts: 1 });
    await leases(queue).fail([{ id: job!.id, token: job!.token, error: 'x' }]);
    const fields = Object.keys(await redis.raw.hgetall(key));
    expect(fields).toContain(`c${minute - 59}`);
    expect(fields).not.toContain(`c${minute - 61}`);
    expect(fields.filter((f) => f.startsWith('d'))).toHaveLength(1);
  });

  it('obliterate deletes the key with the rest of the queue', async () => {
    const queue = redis.queue<number>();
    const [job] = await claimed(queue, [1]);
    await leases(queue).complete([job!]);
    expect(await redis.raw.exists(minutesKey(queue.name))).toBe(1);
    expect(await queue.obliterate()).toBe(true);
    // request records (req:*) are left to their TTL, as for every obliterate
    expect((await redis.raw.keys(`emq:{${queue.name}}:*`)).filter((k) => !k.includes(':req:'))).toEqual([]);
  });

  it("a partitioned queue's overview and stats add its partitions up minute by minute", async () => {
    const name = queueName('minutes');
    partitioned.push(name);
    const queue = new PartitionedQueue<number>(redis.transport, name, { partitions: 3 });
    const from = await serverMinute();
    // every partition completes i + 1 jobs and fails one
    for (const [i, part] of queue.parts.entries()) {
      const jobs = await claimed(part, Array.from({ length: i + 2 }, (_, j) => j), { maxAttempts: 1 });
      await leases(part).complete(jobs.slice(1));
      await leases(part).fail([{ id: jobs[0]!.id, token: jobs[0]!.token, error: 'x' }]);
    }
    expect(queue.parts.map((p) => p.name)).toEqual([0, 1, 2].map((i) => partitionName(name, i)));
    const row = (await queueOverviews(redis.transport)).find((r) => r.queue === name)!;
    expect(row.partitions).toBe(3);
    expectCounted(row.lastHour, 'completed', from, 1 + 2 + 3);
    expectCounted(row.lastHour, 'dead', from, 3);
    const { lastHour } = await queue.stats();
    expectCounted(lastHour, 'completed', from, 6);
    expectCounted(lastHour, 'dead', from, 3);
    expect(await checkPartitionedQueue(redis.raw, name)).toEqual([]);
  });

  it('is known to the checker: each rule broken on purpose is flagged, and passes once repaired', async () => {
    const queue = redis.queue<number>();
    const key = minutesKey(queue.name);
    const [job] = await claimed(queue, [1]);
    await leases(queue).complete([job!]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const [field] = await redis.raw.hkeys(key);
    const newest = Number(field!.slice(1));
    const expireAt = String(await redis.raw.call('PEXPIRETIME', key));
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(() => redis.raw.hset(key, 'x1', '1'), () => redis.raw.hdel(key, 'x1'), /field "x1" is not c<minute> or d<minute>/);
    await expectFlag(() => redis.raw.hset(key, `d${newest}`, '0'), () => redis.raw.hdel(key, `d${newest}`), /holds "0", not a count >= 1/);
    await expectFlag(() => redis.raw.hset(key, `d${newest}`, 'two'), () => redis.raw.hdel(key, `d${newest}`), /holds "two", not a count >= 1/);
    await expectFlag(() => redis.raw.hset(key, `c${newest + 2}`, '1'), () => redis.raw.hdel(key, `c${newest + 2}`), /is after the server's minute/);
    await expectFlag(() => redis.raw.hset(key, `d${newest - 61}`, '1'), () => redis.raw.hdel(key, `d${newest - 61}`), /61 minutes before the newest .* not trimmed/);
    await expectFlag(() => redis.raw.persist(key), () => redis.raw.call('PEXPIREAT', key, expireAt), /the key has no TTL/);
    await expectFlag(
      () => redis.raw.call('PEXPIREAT', key, String((newest + 120) * MINUTE)),
      () => redis.raw.call('PEXPIREAT', key, expireAt),
      /the key expires at .* after/,
    );
    await expectFlag(() => redis.raw.del(key).then(() => redis.raw.set(key, 'x')), () => redis.raw.del(key), /has type string/);
  });
});
