import { describe, expect, it } from 'vitest';
import { JobNotFoundError, JobStateError, type Queue } from '../../src/index.js';
import { keysOf, laneIds, laneSize, leases, scriptsOf, sleep, useRedis } from '../helpers.js';
import { retryOp } from '../../src/ops/retry.js';

describe('retry, backoff and dead jobs', () => {
  const redis = useRedis();

  /** Waits until the server clock reaches `at` (ms). */
  async function untilServerTime(at: number): Promise<void> {
    while ((await redis.serverNow()) < at) await sleep(10);
  }

  /** Claims exactly one job and returns it. */
  async function claimOne<P>(queue: Queue<P>) {
    const claimed = await leases(queue).claim(1, 30_000);
    expect(claimed.jobs).toHaveLength(1);
    return claimed.jobs[0]!;
  }

  it('a fixed backoff schedules the retry at server time + delay', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x', { backoff: { type: 'fixed', delayMs: 500 } });
    const job = await claimOne(queue);
    const t0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id: job.id, token: job.token, error: 'boom' }])).toEqual(['scheduled']);
    const t1 = await redis.serverNow();

    const due = Number(await redis.raw.zscore(k.key('scheduled'), job.id));
    expect(due - 500).toBeGreaterThanOrEqual(t0);
    expect(due - 500).toBeLessThanOrEqual(t1);
    expect(await redis.raw.hmget(k.job(job.id), 's', 'e', 'a')).toEqual(['scheduled', 'boom', '1']);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await laneSize(redis.raw, k)).toBe(0);
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect((await queue.getJob(job.id))?.runAt).toBe(due);

    // a second failure of a fixed backoff waits the same again
    await untilServerTime(due);
    expect((await leases(queue).promote()).promoted).toBe(1);
    const again = await claimOne(queue);
    expect(again.token).toBe(2);
    const u0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id: again.id, token: again.token, error: 'boom 2' }])).toEqual(['scheduled']);
    const u1 = await redis.serverNow();
    const due2 = Number(await redis.raw.zscore(k.key('scheduled'), job.id));
    expect(due2 - 500).toBeGreaterThanOrEqual(u0);
    expect(due2 - 500).toBeLessThanOrEqual(u1);
  });

  it('an exponential backoff doubles per attempt up to its cap: 100, 200, 400, 800, 1000', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x', {
      maxAttempts: 10,
      backoff: { type: 'exponential', delayMs: 100, maxDelayMs: 1000, jitter: 0 },
    });
    const expected = [100, 200, 400, 800, 1000];
    for (let attempt = 1; attempt <= expected.length; attempt++) {
      const job = await claimOne(queue);
      expect(job).toMatchObject({ token: attempt, attempt });
      const t0 = await redis.serverNow();
      expect(await leases(queue).retry([{ id: job.id, token: job.token, error: `e${attempt}` }])).toEqual(['scheduled']);
      const t1 = await redis.serverNow();
      const due = Number(await redis.raw.zscore(k.key('scheduled'), job.id));
      const delay = expected[attempt - 1]!;
      // due = (the script's TIME, between t0 and t1) + this attempt's delay
      expect(due - delay, `attempt ${attempt}`).toBeGreaterThanOrEqual(t0);
      expect(due - delay, `attempt ${attempt}`).toBeLessThanOrEqual(t1);
      // never claimable before it is due
      expect((await leases(queue).promote()).promoted).toBe(0);
      await untilServerTime(due);
      expect(await leases(queue).promote()).toEqual({ promoted: 1, nextDueAt: null });
    }
  });

  it('jitter takes off at most its fraction of the delay', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    // a jitter-free reference in the same retry call gives the script's own clock exactly
    const ref = await queue.add('ref', { backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push((await queue.add(i, { backoff: { type: 'exponential', delayMs: 1000, jitter: 0.5 } })).id);
    }
    const jobs = (await leases(queue).claim(31, 30_000)).jobs;
    expect(jobs).toHaveLength(31);
    const outcomes = await leases(queue).retry(jobs.map((j) => ({ id: j.id, token: j.token, error: 'e' })));
    expect(outcomes.every((o) => o === 'scheduled')).toBe(true);
    const now = Number(await redis.raw.zscore(k.key('scheduled'), ref.id)) - 1000;
    const delays = await Promise.all(
      ids.map(async (id) => Number(await redis.raw.zscore(k.key('scheduled'), id)) - now),
    );
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(500);
      expect(d).toBeLessThanOrEqual(1000);
    }
    // it is actually random: 30 draws do not all land on one value
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('jitter bounds are exact at both ends of the random draw', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const ref = await queue.add('ref', { backoff: { type: 'fixed', delayMs: 1000, jitter: 0 } });
    const low = await queue.add('low', { backoff: { type: 'fixed', delayMs: 1000, jitter: 0.5 } });
    const high = await queue.add('high', { backoff: { type: 'fixed', delayMs: 1000, jitter: 0.5 } });
    const byId = new Map((await leases(queue).claim(3, 30_000)).jobs.map((j) => [j.id, j]));
    const draws = new Map([
      [ref.id, 0.5],
      [low.id, 0],
      [high.id, 0.999999],
    ]);
    const items = [ref.id, low.id, high.id].map((id) => ({ id, token: byId.get(id)!.token, error: 'e' }));
    let call = 0;
    const random = (): number => draws.get(items[call++]!.id)!;
    const gateway = scriptsOf(queue);
    expect(await gateway.run(retryOp(items, random))).toEqual({ value: ['scheduled', 'scheduled', 'scheduled'], outbox: [] });
    const now = Number(await redis.raw.zscore(k.key('scheduled'), ref.id)) - 1000;
    // draw 0 takes nothing off; a draw just under 1 takes off (almost) the whole jitter fraction
    expect(Number(await redis.raw.zscore(k.key('scheduled'), low.id)) - now).toBe(1000);
    expect(Number(await redis.raw.zscore(k.key('scheduled'), high.id)) - now).toBe(500);
  });

  it('a tiny jitter (1e-7) still backs off', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x', { backoff: { type: 'fixed', delayMs: 5_000, jitter: 1e-7 } });
    const job = await claimOne(queue);
    const t0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id: job.id, token: job.token, error: 'e' }])).toEqual(['scheduled']);
    const due = Number(await redis.raw.zscore(k.key('scheduled'), job.id));
    expect(due - t0).toBeGreaterThanOrEqual(4_999);
    expect(await laneSize(redis.raw, k)).toBe(0);
  });

  it('delayMs overrides the backoff: 0 puts the job straight back to pending and rings once', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    await queue.add('x', { backoff: { type: 'fixed', delayMs: 60_000 } });
    const job = await claimOne(queue);
    await redis.raw.del(k.key('wake'));
    expect(await leases(queue).retry([{ id: job.id, token: job.token, error: 'again', delayMs: 0 }])).toEqual(['pending']);
    expect(await redis.raw.hmget(k.job(job.id), 's', 'e', 'a')).toEqual(['pending', 'again', '1']);
    expect(await laneIds(redis.raw, k)).toEqual([job.id]);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
    const again = await claimOne(queue);
    expect(again).toMatchObject({ id: job.id, token: 2, attempt: 2, payload: 'x' });

    // and a positive delayMs replaces the 60 s backoff
    const t0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id: again.id, token: again.token, error: 'later', delayMs: 250 }])).toEqual(['scheduled']);
    const t1 = await redis.serverNow();
    const due = Number(await redis.raw.zscore(k.key('scheduled'), job.id));
    expect(due - 250).toBeGreaterThanOrEqual(t0);
    expect(due - 250).toBeLessThanOrEqual(t1);
  });

  it('a job is dead after its max attempts, with its last error', async () => {
    const queue = redis.queue<{ n: number }>();
    const k = keysOf(queue);
    await queue.add({ n: 7 }, { maxAttempts: 2, backoff: 0 });
    const first = await claimOne(queue);
    const firstOutcome = await leases(queue).retry([{ id: first.id, token: first.token, error: 'first' }]);
    expect(['scheduled', 'pending']).toContain(firstOutcome[0]);
    expect(firstOutcome[0]).toBe('pending'); // backoff 0: no wait at all
    const second = await claimOne(queue);
    expect(second).toMatchObject({ token: 2, attempt: 2, maxAttempts: 2 });

    const t0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id: second.id, token: second.token, error: 'second', delayMs: 0 }])).toEqual(['dead']);
    const t1 = await redis.serverNow();
    const row = await redis.raw.hgetall(k.job(first.id));
    expect(row).toMatchObject({ s: 'dead', e: 'second', a: '2' });
    const finished = Number(row.f);
    expect(finished).toBeGreaterThanOrEqual(t0);
    expect(finished).toBeLessThanOrEqual(t1);
    expect(await redis.raw.zscore(k.key('dead'), first.id)).toBe(row.f);
    for (const set of ['pending', 'scheduled', 'active'] as const) {
      expect(await redis.raw.zscore(k.key(set), first.id), set).toBeNull();
    }
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 1, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
    expect(await queue.getJob(first.id)).toMatchObject({ state: 'dead', error: 'second', finishedAt: finished, payload: { n: 7 } });
    // the retry sent again answers as it did and writes nothing (repeat-settle.test.ts); the
    // holder before it is fenced off
    expect(await leases(queue).retry([{ id: second.id, token: second.token, error: 'second', delayMs: 0 }])).toEqual(['dead']);
    expect(await redis.raw.hgetall(k.job(first.id))).toEqual(row);
    expect(await leases(queue).retry([{ id: first.id, token: first.token, error: 'first' }])).toEqual(['fenced']);
  });

  it('fail() sends a job with attempts left straight to dead', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('x', { maxAttempts: 5 });
    const job = await claimOne(queue);
    expect(await leases(queue).fail([{ id: job.id, token: job.token, error: 'unrecoverable' }])).toEqual(['dead']);
    expect(await redis.raw.hmget(k.job(job.id), 's', 'e', 'a')).toEqual(['dead', 'unrecoverable', '1']);
    expect(await redis.raw.hget(k.job(job.id), 'f')).not.toBeNull();
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([job.id]);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await laneSize(redis.raw, k)).toBe(0);
    expect((await queue.stats()).counts.dead).toBe(1);
    // the holder's fail sent again answers as it did and writes nothing (repeat-settle.test.ts)
    expect(await leases(queue).fail([{ id: job.id, token: job.token, error: 'again' }])).toEqual(['dead']);
    expect(await redis.raw.hget(k.job(job.id), 'e')).toBe('unrecoverable');
    expect((await queue.stats()).counts.dead).toBe(1);
  });

  it('reprocess gives a dead job a fresh allowance while its token keeps rising', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('x', { maxAttempts: 2, backoff: 0 });
    // first run: two attempts, then dead
    expect(await leases(queue).retry([{ id, token: (await claimOne(queue)).token, error: 'a' }])).toEqual(['pending']);
    expect(await leases(queue).retry([{ id, token: (await claimOne(queue)).token, error: 'b' }])).toEqual(['dead']);

    await redis.raw.del(k.key('wake'));
    await queue.reprocess(id);
    const row = await redis.raw.hgetall(k.job(id));
    expect(row).toMatchObject({ s: 'pending', a: '2', z: '2' });
    expect(row.f).toBeUndefined();
    expect(await redis.raw.zcard(k.key('dead'))).toBe(0);
    expect(await laneIds(redis.raw, k)).toEqual([id]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
    // the record's attempt is this run's (none yet); attemptsStarted keeps every claim
    expect(await queue.getJob(id)).toMatchObject({ state: 'pending', attempt: 0, maxAttempts: 2, attemptsStarted: 2 });

    // second run: again maxAttempts - 1 retries before dead; the token goes on from 2
    const third = await claimOne(queue);
    expect(third).toMatchObject({ token: 3, attempt: 1, maxAttempts: 2 });
    expect(await leases(queue).retry([{ id, token: third.token, error: 'c' }])).toEqual(['pending']);
    const fourth = await claimOne(queue);
    expect(fourth).toMatchObject({ token: 4, attempt: 2 });
    expect(await queue.getJob(id)).toMatchObject({ state: 'active', attempt: 2, attemptsStarted: 4 });
    // a holder from the first run is fenced off
    expect(await leases(queue).retry([{ id, token: 2, error: 'old' }])).toEqual(['fenced']);
    expect(await leases(queue).retry([{ id, token: fourth.token, error: 'd' }])).toEqual(['dead']);
    expect(await redis.raw.hmget(k.job(id), 's', 'e', 'a', 'z')).toEqual(['dead', 'd', '4', '2']);
    expect(await queue.getJob(id)).toMatchObject({ state: 'dead', attempt: 2, maxAttempts: 2, attemptsStarted: 4 });
  });

  it('reprocess refuses a job that is not dead, and a missing one', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    await expect(queue.reprocess(id)).rejects.toBeInstanceOf(JobStateError);
    await expect(queue.reprocess(id)).rejects.toMatchObject({ code: 'EMQSTATE' });
    expect(await redis.raw.hget(k.job(id), 's')).toBe('pending');
    await claimOne(queue);
    await expect(queue.reprocess(id)).rejects.toBeInstanceOf(JobStateError);
    expect(await redis.raw.hget(k.job(id), 's')).toBe('active');
    await expect(queue.reprocess('nope')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.reprocess('nope')).rejects.toMatchObject({ code: 'EMQNOTFOUND' });
    expect(await redis.raw.exists(k.job('JOB:nope'))).toBe(0);
  });

  it('a reaped job past its max attempts goes to dead with "lease expired"', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { id } = await queue.add('x', { maxAttempts: 2 });
    expect((await leases(queue).claim(1, 50)).jobs).toHaveLength(1);
    await sleep(120);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    expect(await redis.raw.hget(k.job(id), 's')).toBe('pending');
    expect((await leases(queue).claim(1, 50)).jobs[0]).toMatchObject({ id, token: 2 });
    await sleep(120);
    const t0 = await redis.serverNow();
    expect(await leases(queue).reap()).toEqual({ requeued: 0, buried: 1 });
    const row = await redis.raw.hgetall(k.job(id));
    expect(row).toMatchObject({ s: 'dead', e: 'lease expired', a: '2' });
    expect(Number(row.f)).toBeGreaterThanOrEqual(t0);
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([id]);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    expect(await laneSize(redis.raw, k)).toBe(0);
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect((await queue.stats()).counts.dead).toBe(1);
  });

  it('listDead returns dead jobs newest first with payloads decoded', async () => {
    const queue = redis.queue<{ n: number }>();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const { id } = await queue.add({ n });
      ids.push(id);
      const job = await claimOne(queue);
      expect(job.id).toBe(id);
      expect(await leases(queue).fail([{ id, token: job.token, error: `err ${n}` }])).toEqual(['dead']);
      await sleep(5); // distinct death times
    }
    const dead = await queue.listDead();
    expect(dead.map((j) => j.id)).toEqual([...ids].reverse());
    expect(dead.map((j) => j.payload)).toEqual([{ n: 2 }, { n: 1 }, { n: 0 }]);
    expect(dead.map((j) => j.error)).toEqual(['err 2', 'err 1', 'err 0']);
    expect(dead.every((j) => j.state === 'dead' && j.finishedAt !== undefined)).toBe(true);
    expect(dead[0]!.finishedAt!).toBeGreaterThan(dead[2]!.finishedAt!);
    expect((await queue.listDead({ offset: 1, limit: 1 })).map((j) => j.payload)).toEqual([{ n: 1 }]);
  });
});
