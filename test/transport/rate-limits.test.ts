import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidNameError, queueOverviews } from '../../src/index.js';
import { renderMetrics } from '../../src/http/metrics.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, sleep, until, useRedis } from '../helpers.js';

/** Rate limits and holds (docs/design.md, "Rate limits and holds"), on both transports. */
describe('rate limits', () => {
  const redis = useRedis();
  const groupsOf = (jobs: ReadonlyArray<{ group: string | undefined }>): string[] => jobs.map((j) => j.group ?? '*');
  const count = (groups: readonly string[], g: string): number => groups.filter((x) => x === g).length;

  it("caps a group's starts in its window, and the other groups keep flowing", async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setGroupRateLimit('g', { limit: 3, periodMs: 400 });
    await queue.addBulk([...Array.from({ length: 10 }, (_, i) => ({ payload: i, group: 'g' })), ...Array.from({ length: 5 }, (_, i) => ({ payload: i, group: 'h' }))]);

    const first = await leases(queue).claim(20, 30_000);
    expect(count(groupsOf(first.jobs), 'g')).toBe(3);
    expect(count(groupsOf(first.jobs), 'h')).toBe(5);
    // g waits off the ring until its oldest start leaves the window, a due time the reply reports
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual([]);
    const until_ = Number(await redis.raw.zscore(k.key('throttled'), 'g'));
    expect(until_).toBe(first.now + 400);
    expect(first.nextDueAt).toBe(until_);
    expect(await redis.raw.zcard(`${k.prefix}starts:g`)).toBe(3);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // a claim meanwhile gets nothing of g; a beat before the time readmits nothing
    expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    expect((await leases(queue).beat({ n: 5, leaseMs: 30_000 })).jobs).toEqual([]);

    await sleep(Math.max(0, until_ - (await redis.serverNow())) + 5);
    const beat = await leases(queue).beat({ n: 20, leaseMs: 30_000 });
    expect(groupsOf(beat.jobs)).toEqual(['g', 'g', 'g']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("caps the queue's starts across every entry, and says when it may start again", async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setRateLimit({ limit: 4, periodMs: 300 });
    await queue.addBulk([...Array.from({ length: 6 }, (_, i) => ({ payload: i })), ...Array.from({ length: 6 }, (_, i) => ({ payload: i, group: 'a' }))]);

    const first = await leases(queue).claim(10, 30_000);
    expect(first.jobs).toHaveLength(4);
    // the ring's turns: fair between ungrouped work and group a
    expect(groupsOf(first.jobs)).toEqual(['*', 'a', '*', 'a']);
    const at = Number(await redis.raw.zscore(k.key('throttled'), '!'));
    expect(at).toBe(first.now + 300);
    expect(first.nextDueAt).toBe(at);
    // the entries stay on the ring: the queue's throttle is the claim's to check
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['*', 'a']);
    expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    await sleep(Math.max(0, at - (await redis.serverNow())) + 5);
    const beat = await leases(queue).beat({ n: 10, leaseMs: 30_000 });
    expect(beat.jobs).toHaveLength(4);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('composes with a group limit: a group at either limit is skipped', async () => {
    const queue = redis.queue();
    await queue.setGroupLimit('g', 1);
    await queue.setGroupRateLimit('g', { limit: 2, periodMs: 60_000 });
    await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: i, group: 'g' })));
    const l = leases(queue);
    const a = await l.claim(5, 30_000);
    expect(a.jobs).toHaveLength(1);
    await l.round({ finished: [{ job: { id: a.jobs[0]!.id, token: a.jobs[0]!.token } as never, outcome: { kind: 'complete' } }], leaseMs: 30_000 });
    const b = await l.claim(5, 30_000);
    expect(b.jobs).toHaveLength(1);
    await l.round({ finished: [{ job: { id: b.jobs[0]!.id, token: b.jobs[0]!.token } as never, outcome: { kind: 'complete' } }], leaseMs: 30_000 });
    // the slot is free, but the rate is spent for a minute
    expect((await l.claim(5, 30_000)).jobs).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('changes live: a raised limit readmits at once and rings the doorbell, a lowered one throttles at once', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setGroupRateLimit('g', { limit: 2, periodMs: 60_000 });
    await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: i, group: 'g' })));
    expect((await leases(queue).claim(6, 30_000)).jobs).toHaveLength(2);
    expect(await redis.raw.zscore(k.key('throttled'), 'g')).not.toBeNull();
    await redis.raw.del(k.key('wake'));

    await queue.setGroupRateLimit('g', { limit: 3, periodMs: 60_000 });
    expect(await redis.raw.zscore(k.key('throttled'), 'g')).toBeNull();
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['g']);
    expect(await redis.raw.llen(k.key('wake'))).toBe(1);
    expect((await leases(queue).claim(6, 30_000)).jobs).toHaveLength(1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // lowered under what it started: throttled until enough starts leave the window
    await queue.setGroupRateLimit('g', null);
    expect(await redis.raw.exists(`${k.prefix}starts:g`, `${k.prefix}grate`)).toBe(0);
    expect(await redis.raw.hget(k.key('meta'), 'grates')).toBeNull();
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['g']);
    expect((await leases(queue).claim(2, 30_000)).jobs).toHaveLength(2);
    await queue.setGroupRateLimit('g', { limit: 1, periodMs: 250 });
    // no start counted yet under the new limit (starts are logged only while there is one)
    expect((await leases(queue).claim(6, 30_000)).jobs).toHaveLength(1);
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual([]);
    await queue.setGroupRateLimit('g', { limit: 1, periodMs: 100_000 });
    const score = Number(await redis.raw.zscore(k.key('throttled'), 'g'));
    expect(score).toBeGreaterThan((await redis.serverNow()) + 90_000);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('holds a group: nothing of it starts until the hold ends, others flow, and it resumes on time', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'h' }, { payload: 3 }]);
    const heldUntil = await queue.holdGroup('g', 300);
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['h', '*']);
    expect(Number(await redis.raw.hget(`${k.prefix}holds`, 'g'))).toBe(heldUntil);
    // a shorter hold keeps the longer one
    expect(await queue.holdGroup('g', 10)).toBe(heldUntil);
    const claimed = await leases(queue).claim(5, 30_000);
    expect(groupsOf(claimed.jobs).sort()).toEqual(['*', 'h']);
    expect(claimed.nextDueAt).toBe(heldUntil);
    // a job enqueued into the held group waits too
    await queue.add(4, { group: 'g' });
    expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const stats = await queue.stats();
    expect(stats.rateLimits.throttled).toEqual([{ group: 'g', ungrouped: false, until: heldUntil, heldUntil }]);

    await sleep(Math.max(0, heldUntil - (await redis.serverNow())) + 5);
    const beat = await leases(queue).beat({ n: 5, leaseMs: 30_000 });
    expect(groupsOf(beat.jobs)).toEqual(['g', 'g']);
    expect(await redis.raw.exists(`${k.prefix}holds`, k.key('throttled'))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('holds the ungrouped lane with null', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'h' }]);
    await queue.holdGroup(null, 60_000);
    expect(await redis.raw.zscore(k.key('throttled'), '*')).not.toBeNull();
    expect(groupsOf((await leases(queue).claim(5, 30_000)).jobs)).toEqual(['h']);
    await queue.add(3);
    expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("gives a rate-limited job back without spending an attempt and holds its group (RateLimitedError's outcome)", async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1, group: 'g', maxAttempts: 1 }, { payload: 2, group: 'g' }, { payload: 3, group: 'h' }]);
    const l = leases(queue);
    const { jobs } = await l.claim(1, 30_000);
    expect(jobs[0]!.group).toBe('g');
    const held = { id: jobs[0]!.id, token: jobs[0]!.token } as never;
    const round = await l.round({ finished: [{ job: held, outcome: { kind: 'hold', error: '429', holdMs: 60_000 } }], claim: 5, leaseMs: 30_000 });
    expect(round.settled).toEqual(['pending']);
    // the same request's claim already sees g held
    expect(groupsOf(round.claimed!.jobs)).toEqual(['h']);
    const row = await redis.raw.hmget(k.job(jobs[0]!.id), 's', 'a', 'e');
    expect(row).toEqual(['pending', '0', null]);
    expect(Number(await redis.raw.zscore(k.key('throttled'), 'g'))).toBeGreaterThan((await redis.serverNow()) + 50_000);
    // sent again (a lost reply): answers the same and holds nothing more
    const again = await l.round({ finished: [{ job: held, outcome: { kind: 'hold', error: '429', holdMs: 60_000 } }], leaseMs: 30_000 });
    expect(again.settled).toEqual(['pending']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('refuses bad limits and holds, writing nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const bad: unknown[] = [
      { limit: 0, periodMs: 1000 },
      { limit: -1, periodMs: 1000 },
      { limit: 1.5, periodMs: 1000 },
      { limit: 1, periodMs: 0 },
      { limit: 1, periodMs: 0.5 },
      { limit: 1, periodMs: 8 * 24 * 3_600_000 },
      { limit: '5', periodMs: 1000 },
      { limit: 5 },
      { limit: 5, periodMs: 1000, burst: 2 },
      [5, 1000],
      5,
      undefined,
    ];
    for (const rate of bad) {
      await expect(queue.setRateLimit(rate as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(queue.setGroupRateLimit('g', rate as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.setGroupRateLimit('no spaces', { limit: 1, periodMs: 1 })).rejects.toBeInstanceOf(InvalidNameError);
    for (const ms of [0, -5, 1.5, '100', Number.NaN]) {
      await expect(queue.holdGroup('g', ms as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.holdGroup('*', 100)).rejects.toBeInstanceOf(InvalidNameError);
    expect(await redis.raw.keys(`${k.prefix}*`)).toEqual([]);
  });

  it('answers its limits in stats, and obliterate deletes every key of them', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setRateLimit({ limit: 100, periodMs: 60_000 });
    await queue.setGroupRateLimit('g', { limit: 1, periodMs: 60_000 });
    await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
    await leases(queue).claim(5, 30_000);
    await queue.holdGroup(null, 60_000);
    const { rateLimits } = await queue.stats();
    expect(rateLimits.queue).toEqual({ limit: 100, periodMs: 60_000 });
    expect(rateLimits.groups).toEqual({ g: { limit: 1, periodMs: 60_000 } });
    // soonest first: g's throttle and the hold both end a minute from their calls
    expect(new Set(rateLimits.throttled.map((t) => JSON.stringify([t.group, t.ungrouped, t.heldUntil === null])))).toEqual(
      new Set([JSON.stringify(['g', false, true]), JSON.stringify([null, true, false])]),
    );
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    await queue.obliterate({ force: true });
    // the request records are left to expire (obliterate.lua)
    expect((await redis.raw.keys(`${k.prefix}*`)).filter((key) => !key.startsWith(`${k.prefix}req:`))).toEqual([]);
  });

  it('counts each time an entry reaches its rate limit (emq_rate_limited_total)', async () => {
    const queue = redis.queue();
    await queue.setGroupRateLimit('g', { limit: 1, periodMs: 60_000 });
    await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
    await leases(queue).claim(5, 30_000);
    await until(async () => (await redis.raw.hget(keysOf(queue).key('meta'), 'rated')) === '1');
    expect((await queueOverviews(redis.transport)).find((o) => o.queue === queue.name)).toMatchObject({ rateLimitedTotal: 1 });
    expect(await renderMetrics(redis.transport)).toContain(`emq_rate_limited_total{queue="${queue.name}"} 1`);
  });

  it('the checker flags a start over the limit, an entry at its limit left on the ring, and a hold without its throttle', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const expectFlag = flagChecker(redis.raw, queue.name);
    await queue.setGroupRateLimit('g', { limit: 2, periodMs: 60_000 });
    await queue.addBulk(Array.from({ length: 4 }, (_, i) => ({ payload: i, group: 'g' })));
    await leases(queue).claim(4, 30_000);
    const log = `${k.prefix}starts:g`;
    const now = await redis.serverNow();
    await expectFlag(() => redis.raw.zadd(log, now, '0'), () => redis.raw.zrem(log, '0'), /over its limit 2/);
    await expectFlag(
      () => redis.raw.zrem(k.key('throttled'), 'g'),
      () => redis.raw.zadd(k.key('throttled'), now + 60_000, 'g'),
      /at its rate limit \(2 starts\) but not throttled/,
    );
    await expectFlag(() => redis.raw.hset(`${k.prefix}holds`, 'h', String(now + 5000)), () => redis.raw.hdel(`${k.prefix}holds`, 'h'), /h: held until .* but not throttled/);
    await expectFlag(() => redis.raw.hset(k.key('meta'), 'grates', '2'), () => redis.raw.hset(k.key('meta'), 'grates', '1'), /meta grates/);
  });
});
