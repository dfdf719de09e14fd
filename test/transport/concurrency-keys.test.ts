import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Queue } from '../../src/index.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, snapshotKeys, useRedis } from '../helpers.js';

/**
 * Concurrency keys (docs/design/job-controls.md, "Several concurrency keys"): a job starts only
 * while every key it names is under its limit; a job blocked by a full key parks on it and the
 * others go on (no head-of-line block); a run's end gives its keys' slots back and readmits the
 * parked jobs in order; raising a limit readmits as many as it has room for.
 */
describe('concurrency keys', () => {
  const redis = useRedis();
  const whole = async (...queues: Array<Queue<unknown>>): Promise<void> => {
    for (const q of queues) expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  };
  const raw = (queue: Queue<unknown>, name: string): string => `${keysOf(queue).prefix}${name}`;

  it('starts a job only while every key it names has room; a blocked one parks and a later lane\'s job runs', async () => {
    const queue = redis.queue<string>();
    expect(await queue.setKeyLimit('org:7', 1)).toBe(0);
    await queue.add('a1', { group: 'u1', keys: ['org:7', 'plan:free'] });
    await queue.add('a2', { group: 'u1', keys: ['org:7'] });
    await queue.add('b1', { group: 'u2', keys: ['org:7'] });
    await queue.add('c1', { group: 'u3', keys: ['org:8', 'plan:free'] });
    const l = leases(queue);
    const first = await l.claim(10, 30_000);
    // one org:7 job starts; the two others park; org:8's job is not held back by them
    expect(first.jobs.map((j) => j.payload).sort()).toEqual(['a1', 'c1']);
    expect(await redis.raw.hgetall(raw(queue, 'kactive'))).toEqual({ 'org:7': '1', 'org:8': '1', 'plan:free': '2' });
    expect(await redis.raw.zrange(raw(queue, 'kwait:org:7'), 0, '-1')).toHaveLength(2);
    expect((await queue.stats()).counts).toMatchObject({ pending: 2, active: 2 });
    expect((await queue.getJobs('pending')).map((j) => j.payload)).toEqual(['a2', 'b1']);
    expect(await queue.keyLimits()).toEqual([
      { key: 'org:7', limit: 1, running: 1, parked: 2, rate: null, throttledUntil: null },
      { key: 'org:8', limit: null, running: 1, parked: 0, rate: null, throttledUntil: null },
      { key: 'plan:free', limit: null, running: 2, parked: 0, rate: null, throttledUntil: null },
    ]);
    const { events } = await queue.readEvents();
    expect(events.filter((e) => e.event === 'parked').map((e) => ('key' in e ? e.key : ''))).toEqual(['org:7', 'org:7']);
    await whole(queue);
    // nothing more starts while org:7 is full
    expect((await l.claim(10, 30_000)).jobs).toEqual([]);
    // a1 ends: org:7's slot goes to the first parked job, in its order
    const a1 = first.jobs.find((j) => j.payload === 'a1')!;
    await l.complete([a1]);
    expect(await redis.raw.hget(raw(queue, 'kactive'), 'org:7')).toBeNull();
    const second = await l.claim(10, 30_000);
    expect(second.jobs.map((j) => j.payload)).toEqual(['a2']);
    await whole(queue);
    // raising the limit readmits the rest
    expect(await queue.setKeyLimit('org:7', 5)).toBe(1);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['b1']);
    await whole(queue);
  });

  it('a readmitted job that parks on another key gives its room back: no job waits for good on a key that runs nothing', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k1', 1);
    await queue.setKeyLimit('k2', 1);
    for (const [payload, keys] of [['X', ['k1']], ['Y', ['k2']], ['B', ['k1', 'k2']], ['D', ['k1']]] as const) await queue.add(payload, { id: payload, keys: [...keys] });
    const l = leases(queue);
    const first = await l.claim(10, 30_000);
    expect(first.jobs.map((j) => j.payload)).toEqual(['X', 'Y']);
    // X ends: k1's slot readmits B, the oldest parked; B, blocked by k2, parks there and gives k1's room to D
    await l.complete([first.jobs[0]!]);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual([]);
    const next = await l.claim(10, 30_000);
    expect(next.jobs.map((j) => j.payload)).toEqual(['D']);
    // B removed while parked: nothing waits on a key with room
    await queue.remove('B');
    expect(await queue.keyLimits()).toEqual([
      { key: 'k1', limit: 1, running: 1, parked: 0, rate: null, throttledUntil: null },
      { key: 'k2', limit: 1, running: 1, parked: 0, rate: null, throttledUntil: null },
    ]);
    await whole(queue);
  });

  it('a readmitted job that leaves its lane unstarted (removed, cancelled, expired) gives its room back to the next parked job', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k', 1);
    for (const id of ['A', 'B', 'C', 'D', 'E']) await queue.add(id, { id, keys: ['k'], ...(id === 'D' ? { expireAfterMs: 40 } : {}) });
    const l = leases(queue);
    const first = await l.claim(10, 30_000);
    expect(first.jobs.map((j) => j.payload)).toEqual(['A']);
    // A ends: its slot readmits B to its lane; B removed there, unstarted, readmits C
    await l.complete(first.jobs);
    await queue.remove('B');
    expect(await redis.raw.zrange(raw(queue, 'kwait:k'), 0, '-1')).toEqual(['JOB:D', 'JOB:E']);
    await whole(queue);
    // C cancelled in its lane readmits D; D expires in its lane and readmits E
    expect(await queue.cancel('C')).toEqual({ id: 'JOB:C', state: 'cancelled' });
    expect(await redis.raw.zrange(raw(queue, 'kwait:k'), 0, '-1')).toEqual(['JOB:E']);
    await new Promise((r) => setTimeout(r, 60));
    await l.beat({ n: 0, leaseMs: 30_000 });
    expect((await queue.getJob('D'))!.state).toBe('dead');
    expect(await redis.raw.exists(raw(queue, 'kwait:k'))).toBe(0);
    await whole(queue);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['E']);
    await whole(queue);
  });

  it('puts a lane that a claim emptied and refilled with a job taken back from a key\'s wait on the ring once', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k1', 0);
    await queue.add('B', { id: 'B', group: 'g', keys: ['k1'] });
    const l = leases(queue);
    expect((await l.claim(5, 30_000)).jobs).toEqual([]);
    // k1 gets room without a readmit (as a slot freed while B was being taken back elsewhere)
    await redis.raw.hset(raw(queue, 'klimit'), 'k1', '1');
    await queue.setKeyLimit('k2', 0);
    await queue.add('A', { id: 'A', group: 'g', keys: ['k2', 'k1'] });
    // A, g's only job, parks on k2 and gives k1's room back: B returns to g's lane, which the claim emptied
    expect((await l.claim(5, 30_000)).jobs).toEqual([]);
    expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, '-1')).toEqual(['g']);
    await whole(queue);
    expect((await l.claim(5, 30_000)).jobs.map((j) => j.payload)).toEqual(['B']);
    await whole(queue);
  });

  it('gives a key\'s slot back whatever ends the run: retry, fail, release, the reaper, remove, cancel', async () => {
    const queue = redis.queue<number>();
    await queue.setKeyLimit('k', 1);
    for (let i = 0; i < 7; i++) await queue.add(i, { keys: ['k'] });
    const l = leases(queue);
    const ends: Array<(h: { id: string; token: number }) => Promise<unknown>> = [
      (h) => l.retry([{ ...h, error: 'x', delayMs: 60_000 }]),
      (h) => l.fail([{ ...h, error: 'x' }]),
      (h) => l.release([h]),
      async (h) => {
        await redis.raw.zadd(keysOf(queue).key('active'), 1, h.id);
        await l.beat({ n: 0, leaseMs: 30_000 });
      },
      (h) => queue.remove(h.id),
      async (h) => {
        await queue.cancel(h.id);
        await l.complete([h]);
      },
    ];
    for (const end of ends) {
      const { jobs } = await l.claim(10, 30_000);
      expect(jobs).toHaveLength(1);
      expect(await redis.raw.hget(raw(queue, 'kactive'), 'k')).toBe('1');
      await end(jobs[0]!);
      expect(await redis.raw.hget(raw(queue, 'kactive'), 'k')).toBeNull();
      await whole(queue);
    }
  });

  it('removes, cancels, drains and expires a parked job out of its key\'s wait; obliterate takes the keys', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k', 1);
    await queue.add('runs', { keys: ['k'] });
    const parked = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((p) => queue.add(p, { keys: ['k'], ...(p === 'p4' ? { expireAfterMs: 30 } : {}) })));
    const l = leases(queue);
    expect((await l.claim(10, 30_000)).jobs.map((j) => j.payload)).toEqual(['runs']);
    expect(await redis.raw.zcard(raw(queue, 'kwait:k'))).toBe(4);
    await queue.remove(parked[0]!.id);
    expect(await queue.cancel(parked[1]!.id)).toEqual({ id: parked[1]!.id, state: 'cancelled' });
    await new Promise((r) => setTimeout(r, 50));
    await l.beat({ n: 0, leaseMs: 30_000 });
    expect((await queue.getJob(parked[3]!.id))!.state).toBe('dead');
    await whole(queue);
    expect(await queue.drain()).toBe(1);
    expect(await redis.raw.exists(raw(queue, 'kwait:k'))).toBe(0);
    await whole(queue);
    expect(await queue.obliterate({ force: true })).toBe(true);
    // every key but the requests' records (they expire on their own)
    expect((await redis.raw.keys(`${keysOf(queue).prefix}*`)).filter((k) => !k.includes(':req:'))).toEqual([]);
  });

  it('refuses bad keys and limits before any write, and a partitioned queue refuses keys', async () => {
    const queue = redis.queue<string>();
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    for (const keys of [[], ['a', 'b', 'c', 'd', 'e'], ['bad key'], ['a', 'a'], 'org:7', [7]]) {
      await expect(queue.add('x', { keys: keys as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.setKeyLimit('bad key', 1)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.setKeyLimit('k', -1)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    const parts = new PartitionedQueue<string>(redis.transport, `keys-parts-${Date.now().toString(36)}`, { partitions: 2 });
    await expect(parts.add('x', { keys: ['k'] })).rejects.toMatchObject({ code: 'EMQPARTITION' });
    await expect(parts.setKeyLimit('k', 1)).rejects.toMatchObject({ code: 'EMQPARTITION' });
  });

  it('a parked job is refused by changePriority and moveToGroup (it waits in no lane), and jobs without keys cost nothing more', async () => {
    const queue = redis.queue<string>();
    await queue.setKeyLimit('k', 0);
    const job = await queue.add('x', { keys: ['k'], group: 'g' });
    expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    await expect(queue.changePriority(job.id, 3)).rejects.toMatchObject({ code: 'EMQSTATE' });
    await expect(queue.moveToGroup(job.id, 'h')).rejects.toMatchObject({ code: 'EMQSTATE' });
    await whole(queue);
  });
});
