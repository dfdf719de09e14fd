import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keysOf, laneIds, useRedis, leases } from '../helpers.js';

/**
 * Invariant 1, one clock: every time a script writes comes from the Redis server's TIME. The
 * client's clock is skewed to 2001 for every test here (only Date is faked, so ioredis' timers
 * run normally); a time taken from it would land about 25 years off.
 */
describe('one clock', () => {
  const redis = useRedis();
  const YEAR = 365 * 86_400_000;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2001-01-01'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The server's TIME read just before and just after `action`. */
  async function around<T>(action: () => Promise<T>): Promise<{ result: T; t0: number; t1: number }> {
    const t0 = await redis.serverNow();
    const result = await action();
    const t1 = await redis.serverNow();
    return { result, t0, t1 };
  }

  /** `value` is server time (read between t0 and t1) plus `offset`, and nowhere near the client's clock. */
  function expectServerTime(value: number, t0: number, t1: number, offset = 0): void {
    expect(value).toBeGreaterThanOrEqual(t0 + offset - 50);
    expect(value).toBeLessThanOrEqual(t1 + offset + 1000);
    expect(Math.abs(value - (Date.now() + offset))).toBeGreaterThan(YEAR);
  }

  it('runs with the client clock skewed far from the server', async () => {
    const server = await redis.serverNow();
    expect(Date.now()).toBe(new Date('2001-01-01').getTime());
    expect(server - Date.now()).toBeGreaterThan(10 * YEAR);
  });

  it('schedules a delayed job from server time', async () => {
    const queue = redis.queue();
    const { result, t0, t1 } = await around(() => queue.add({ n: 1 }, { delayMs: 60_000 }));
    expect(result.state).toBe('scheduled');
    const due = Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), result.id));
    expectServerTime(due, t0, t1, 60_000);
    expect((await queue.getJob(result.id))?.runAt).toBe(due);
  });

  it('writes the created time from server time', async () => {
    const queue = redis.queue();
    const { result, t0, t1 } = await around(() => queue.addBulk([{ payload: 1 }, { payload: 2, delayMs: 5000 }]));
    for (const { id } of result) {
      const created = Number(await redis.raw.hget(keysOf(queue).job(id), 'c'));
      expectServerTime(created, t0, t1);
    }
  });

  it('leases from server time: the active score is claim.now + leaseMs', async () => {
    const queue = redis.queue();
    const added = await around(() => queue.add({ n: 1 }));
    const { result: claim, t0, t1 } = await around(() => leases(queue).claim(1, 30_000));
    expect(claim.jobs).toHaveLength(1);
    const job = claim.jobs[0]!;
    expectServerTime(claim.now, t0, t1);
    expect(Math.abs(claim.now - t0)).toBeLessThan(1000);
    const score = await redis.raw.zscore(keysOf(queue).key('active'), job.id);
    expect(Number(score)).toBe(claim.now + 30_000);
    expect(job.leaseUntil).toBe(claim.now + 30_000);
    expectServerTime(Number(score), t0, t1, 30_000);
    // the created time the claim reports is the row's, which the server wrote at enqueue
    expect(job.createdAt).toBe(Number(await redis.raw.hget(keysOf(queue).job(job.id), 'c')));
    expectServerTime(job.createdAt, added.t0, added.t1);
  });

  it('extends a lease from server time', async () => {
    const queue = redis.queue();
    await queue.add(1);
    const { jobs } = await leases(queue).claim(1, 1000);
    const job = jobs[0]!;
    const { result, t0, t1 } = await around(() => leases(queue).extend([job], 45_000));
    const deadline = result[0] as number | null;
    expect(typeof deadline).toBe('number');
    expectServerTime(deadline!, t0, t1, 45_000);
    expect(Number(await redis.raw.zscore(keysOf(queue).key('active'), job.id))).toBe(deadline);
  });

  it('schedules a retry with backoff at server time + the backoff delay', async () => {
    const queue = redis.queue();
    await queue.add(1, { backoff: 5000 });
    const { jobs } = await leases(queue).claim(1, 30_000);
    const job = jobs[0]!;
    const { result, t0, t1 } = await around(() => leases(queue).retry([{ id: job.id, token: job.token, error: 'boom' }]));
    expect(result).toEqual(['scheduled']);
    const due = Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), job.id));
    expectServerTime(due, t0, t1, 5000);
  });

  it('schedules a retry with an explicit delay at server time + that delay', async () => {
    const queue = redis.queue();
    await queue.add(1);
    const { jobs } = await leases(queue).claim(1, 30_000);
    const job = jobs[0]!;
    const { result, t0, t1 } = await around(() => leases(queue).retry([{ id: job.id, token: job.token, error: 'boom', delayMs: 120_000 }]));
    expect(result).toEqual(['scheduled']);
    const due = Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), job.id));
    expectServerTime(due, t0, t1, 120_000);
  });

  it('stamps finish and death times from server time', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
    const { jobs } = await leases(queue).claim(2, 30_000);
    const [a, b] = [jobs[0]!, jobs[1]!];
    const done = await around(() => leases(queue).complete([a]));
    expectServerTime(Number(await redis.raw.hget(keysOf(queue).job(a.id), 'f')), done.t0, done.t1);
    const dead = await around(() => leases(queue).fail([{ id: b.id, token: b.token, error: 'bad' }]));
    expectServerTime(Number(await redis.raw.zscore(keysOf(queue).key('dead'), b.id)), dead.t0, dead.t1);
    expectServerTime(Number(await redis.raw.hget(keysOf(queue).job(b.id), 'f')), dead.t0, dead.t1);
  });

  it('promotes by server time only', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const later = await queue.add('later', { delayMs: 60_000 });
    const now = await redis.serverNow();
    const past = await queue.add('past', { runAt: now - 1000 });
    const ahead = await queue.add('ahead', { runAt: now + 60_000 });
    // a runAt taken from the skewed client clock is long past for the server
    const clientSoon = await queue.add('client', { runAt: Date.now() + 60_000 });
    expect(later.state).toBe('scheduled');
    expect(past.state).toBe('pending');
    expect(ahead.state).toBe('scheduled');
    expect(clientSoon.state).toBe('pending');
    expect(Number(await redis.raw.zscore(k.key('scheduled'), ahead.id))).toBe(now + 60_000);

    const promoted = await leases(queue).promote();
    expect(promoted.promoted).toBe(0);
    expect(await redis.raw.zrange(k.key('scheduled'), 0, '-1')).toEqual([later.id, ahead.id]);
    expect(await redis.raw.hget(k.job(later.id), 's')).toBe('scheduled');
    expect(await laneIds(redis.raw, k)).toEqual([past.id, clientSoon.id]);
    expect(promoted.nextDueAt).toBe(Number(await redis.raw.zscore(k.key('scheduled'), later.id)));
  });
});
