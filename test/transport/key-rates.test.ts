import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Queue } from '../../src/index.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, scriptsOf, snapshotKeys, useRedis } from '../helpers.js';
import { rateLimitsOp } from '../../src/ops/rate-limits.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A rate limit per concurrency key (docs/design/job-controls.md, "A rate per key"): at most
 * `limit` starts of jobs naming the key in any window of `periodMs`, as a group's rate counts. A
 * job blocked by a key's rate parks on it, the key is throttled until one more start fits, and a
 * beat then readmits as many parked jobs as the window has room for.
 */
describe('concurrency keys: a rate per key', () => {
  const redis = useRedis();
  const whole = async (queue: Queue<unknown>): Promise<void> => {
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  };
  const raw = (queue: Queue<unknown>, name: string): string => `${keysOf(queue).prefix}${name}`;
  const keyOf = async (queue: Queue<unknown>, key: string) => (await queue.keyLimits()).find((k) => k.key === key)!;

  it('starts at most `limit` jobs naming a key a window; the rest park, the other jobs go on, and a beat readmits them when the window has room', async () => {
    const queue = redis.queue<string>();
    expect(await queue.setKeyRateLimit('org:7', { limit: 2, periodMs: 400 })).toBe(0);
    for (const [p, g] of [['a1', 'u1'], ['a2', 'u1'], ['b1', 'u2'], ['b2', 'u2'], ['c1', 'u3']] as const) await queue.add(p, { id: p, group: g, keys: ['org:7'] });
    await queue.add('free', { id: 'free', group: 'u4' });
    const l = leases(queue);
    const first = await l.claim(10, 30_000);
    // two org:7 jobs start (one a group, fair); three park; the job without the key is not held back
    expect(first.jobs.map((j) => j.payload).sort()).toEqual(['a1', 'b1', 'free']);
    const key = await keyOf(queue, 'org:7');
    expect(key).toMatchObject({ rate: { limit: 2, periodMs: 400 }, running: 2, parked: 3 });
    expect(key.throttledUntil).toBeGreaterThan(first.now);
    expect(key.throttledUntil).toBeLessThanOrEqual(first.now + 400);
    // the key's throttle is no group's: rateLimits lists none
    expect((await queue.rateLimits()).throttled).toEqual([]);
    await whole(queue);
    // running jobs ending free no start in the window: the parked ones stay parked
    await l.complete(first.jobs);
    expect((await l.claim(10, 30_000)).jobs).toEqual([]);
    expect(await redis.raw.zcard(raw(queue, 'kwait:org:7'))).toBe(3);
    await whole(queue);
    // the reply's next due time is the key's: a parked consumer's timer beats then
    const dry = await l.beat({ n: 0, leaseMs: 30_000 });
    expect(dry.nextDueAt).toBe(key.throttledUntil);
    await sleep(Math.max(0, key.throttledUntil! - Date.now()) + 30);
    // the beat readmits two, in their order; the third waits on, throttled again
    await l.beat({ n: 0, leaseMs: 30_000 });
    expect(await redis.raw.zrange(raw(queue, 'kwait:org:7'), 0, '-1')).toEqual(['JOB:c1']);
    expect((await keyOf(queue, 'org:7')).throttledUntil).not.toBeNull();
    await whole(queue);
    const second = await l.claim(10, 30_000);
    expect(second.jobs.map((j) => j.payload).sort()).toEqual(['a2', 'b2']);
    await whole(queue);
    // lifting the rate readmits the rest at once
    expect(await queue.setKeyRateLimit('org:7', null)).toBe(1);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['c1']);
    expect(await keyOf(queue, 'org:7')).toMatchObject({ rate: null, throttledUntil: null, parked: 0 });
    expect(await redis.raw.exists(raw(queue, 'starts:#org:7'))).toBe(0);
    const { events } = await queue.readEvents();
    expect(events.filter((e) => e.event === 'key-rate')).toMatchObject([
      { key: 'org:7', rate: { limit: 2, periodMs: 400 } },
      { key: 'org:7', rate: null },
    ]);
    await whole(queue);
  });

  it('counts starts in any window, judged by the claims, across beats and settles', async () => {
    const queue = redis.queue<number>();
    const rate = { limit: 3, periodMs: 250 };
    await queue.setKeyRateLimit('k', rate);
    for (let i = 0; i < 12; i++) await queue.add(i, { group: `g${i % 4}`, keys: ['k'] });
    const l = leases(queue);
    const starts: number[] = [];
    const deadline = Date.now() + 5_000;
    while (starts.length < 12 && Date.now() < deadline) {
      const beat = await l.beat({ n: 0, leaseMs: 30_000 });
      const got = await l.claim(10, 30_000);
      for (const _ of got.jobs) starts.push(got.now);
      await l.complete(got.jobs);
      await whole(queue);
      await sleep(Math.max(5, Math.min(60, (beat.nextDueAt ?? Date.now() + 60) - Date.now())));
    }
    expect(starts).toHaveLength(12);
    for (const t of starts) expect(starts.filter((s) => s > t - rate.periodMs && s <= t).length).toBeLessThanOrEqual(rate.limit);
    // 12 starts at 3 a window take at least 3 whole windows
    expect(starts[11]! - starts[0]!).toBeGreaterThanOrEqual(3 * rate.periodMs);
  });

  it("a complete-and-claim judges and logs a key's window at the one instant of its call: the reply's now", async () => {
    // the settle's freed slots read the key's window before the claim does: a second reading of the
    // clock, a ms later, trimmed starts the claim's window still counted (found by the key-rate bench)
    const queue = redis.queue<number>();
    await queue.setKeyLimit('k', 2);
    await queue.setKeyRateLimit('k', { limit: 1_000, periodMs: 60_000 });
    for (let i = 0; i < 40; i++) await queue.add(i, { group: `g${i % 4}`, keys: ['k'] });
    const l = leases(queue);
    let held = (await l.claim(2, 30_000)).jobs;
    const log = raw(queue, 'starts:#k');
    for (let round = 0; round < 19; round++) {
      const { claimed } = await l.complete(held, { claimN: 2, leaseMs: 30_000 });
      held = claimed!.jobs;
      expect(held).toHaveLength(2);
      for (const job of held) expect(Number(await redis.raw.zscore(log, String(job.token)))).toBe(claimed!.now);
    }
    await whole(queue);
  });

  it('a key at its limit and its rate: whichever binds holds the jobs, and a settle readmits no more than the rate has room for', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k', 1);
    await queue.setKeyRateLimit('k', { limit: 2, periodMs: 60_000 });
    for (const id of ['A', 'B', 'C']) await queue.add(id, { id, keys: ['k'] });
    const l = leases(queue);
    // the limit binds: A runs, B and C park, nothing throttles the key
    const a = await l.claim(10, 30_000);
    expect(a.jobs.map((j) => j.payload)).toEqual(['A']);
    expect(await keyOf(queue, 'k')).toMatchObject({ running: 1, parked: 2, throttledUntil: null });
    await l.complete(a.jobs);
    const b = await l.claim(10, 30_000);
    expect(b.jobs.map((j) => j.payload)).toEqual(['B']);
    await whole(queue);
    // B ends: the slot is free but the window has room for none; C stays parked and the key is
    // throttled until A's start leaves the window
    await l.complete(b.jobs);
    const after = await keyOf(queue, 'k');
    expect(after).toMatchObject({ running: 0, parked: 1 });
    expect(after.throttledUntil).toBeGreaterThanOrEqual(a.now + 60_000);
    expect(after.throttledUntil).toBeLessThanOrEqual(a.now + 60_000 + 5);
    await whole(queue);
    // a raised rate readmits C at once, still within the limit of one
    expect(await queue.setKeyRateLimit('k', { limit: 10, periodMs: 60_000 })).toBe(1);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['C']);
    await whole(queue);
  });

  it('a rate lowered under the starts in the window parks the next job; a removed parked job leaves no trace; obliterate takes the rates', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyRateLimit('k', { limit: 5, periodMs: 60_000 });
    for (const id of ['A', 'B', 'C', 'D']) await queue.add(id, { id, keys: ['k'] });
    const l = leases(queue);
    expect((await l.claim(2, 30_000)).jobs.map((j) => j.payload)).toEqual(['A', 'B']);
    await queue.setKeyRateLimit('k', { limit: 1, periodMs: 60_000 });
    expect((await l.claim(10, 30_000)).jobs).toEqual([]);
    expect(await redis.raw.zrange(raw(queue, 'kwait:k'), 0, '-1')).toEqual(['JOB:C', 'JOB:D']);
    expect(Number(await redis.raw.hget(raw(queue, 'meta'), 'rated'))).toBe(1);
    await whole(queue);
    await queue.remove('C');
    await whole(queue);
    expect(await queue.obliterate({ force: true })).toBe(true);
    expect((await redis.raw.keys(`${keysOf(queue).prefix}*`)).filter((k) => !k.includes(':req:'))).toEqual([]);
  });

  it('rateLimits lists the groups a page past any number of throttled keys', async () => {
    const queue = redis.queue<string>();
    for (const k of ['k1', 'k2', 'k3']) {
      await queue.setKeyRateLimit(k, { limit: 1, periodMs: 30_000 });
      await queue.add(`${k}-a`, { keys: [k] });
      await queue.add(`${k}-b`, { keys: [k] });
    }
    await queue.setGroupRateLimit('g', { limit: 1, periodMs: 60_000 });
    await queue.add('g-a', { group: 'g' });
    await queue.add('g-b', { group: 'g' });
    const l = leases(queue);
    await l.claim(10, 30_000);
    await l.claim(10, 30_000);
    // the keys' throttles end before the group's: the first entries of the throttled set
    expect((await queue.keyLimits()).map((k) => k.throttledUntil !== null)).toEqual([true, true, true]);
    const read = await scriptsOf(queue as Queue<unknown>).run(rateLimitsOp(1));
    expect(read.throttled.map((t) => t.entry)).toEqual(['g']);
    expect((await queue.rateLimits()).throttled).toMatchObject([{ group: 'g', ungrouped: false }]);
    await whole(queue);
  });

  it('refuses a bad key or rate before any write, and a partitioned queue refuses it', async () => {
    const queue = redis.queue<string>();
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    for (const rate of [{ limit: 0, periodMs: 1000 }, { limit: 1, periodMs: 0 }, { limit: 1.5, periodMs: 10 }, { limit: 1 }, { limit: 1, periodMs: 10, burst: 2 }, 5]) {
      await expect(queue.setKeyRateLimit('k', rate as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.setKeyRateLimit('bad key', { limit: 1, periodMs: 10 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    const parts = new PartitionedQueue<string>(redis.transport, `key-rates-parts-${Date.now().toString(36)}`, { partitions: 2 });
    await expect(parts.setKeyRateLimit('k', { limit: 1, periodMs: 10 })).rejects.toMatchObject({ code: 'EMQPARTITION' });
  });
});
