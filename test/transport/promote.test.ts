import { describe, expect, it } from 'vitest';
import { keysOf, laneIds, laneOrder, laneSize, sleep, useRedis, leases } from '../helpers.js';

describe('promotion of scheduled jobs', () => {
  const redis = useRedis();

  async function untilServerTime(at: number): Promise<void> {
    while ((await redis.serverNow()) < at) await sleep(10);
  }

  it('moves due jobs earliest-due first, at most `limit` per call, and reports the next due time', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    // arrival order differs from due order: the delays are shuffled
    const delays = [140, 20, 200, 60, 180, 40, 100, 160, 80, 120];
    const added = await queue.addBulk(delays.map((delayMs, i) => ({ payload: i, delayMs })));
    expect(added.every((a) => a.state === 'scheduled')).toBe(true);
    const ids = added.map((a) => a.id);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(10);
    expect(await laneSize(redis.raw, k)).toBe(0);
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    // nothing claimable yet: no doorbell
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);

    const due = new Map<string, number>();
    for (const id of ids) due.set(id, Number(await redis.raw.zscore(k.key('scheduled'), id)));
    // one enqueue script, one clock: each due time is that clock + the job's delay
    const base = due.get(ids[0]!)! - delays[0]!;
    ids.forEach((id, i) => expect(due.get(id)).toBe(base + delays[i]!));
    const byDue = [...ids].sort((a, b) => due.get(a)! - due.get(b)!);
    const arrival = (id: string): number => ids.indexOf(id);

    await untilServerTime(base + 200);
    const moved: string[] = [];
    for (let call = 0; call < 3; call++) {
      const before = new Set(await redis.raw.zrange(k.key('scheduled'), 0, '-1'));
      const result = await leases(queue).promote(3);
      const after = new Set(await redis.raw.zrange(k.key('scheduled'), 0, '-1'));
      const now = [...before].filter((id) => !after.has(id));
      // this call moved the three earliest-due of what was left
      expect(new Set(now)).toEqual(new Set(byDue.slice(call * 3, call * 3 + 3)));
      expect(result.promoted).toBe(3);
      // the next due time is the earliest still scheduled
      expect(result.nextDueAt).toBe(due.get(byDue[call * 3 + 3]!));
      moved.push(...now);
      // every promoted job is pending, in order of arrival (the score is priority, then arrival)
      expect(await laneIds(redis.raw, k)).toEqual(
        [...moved].sort((a, b) => arrival(a) - arrival(b)),
      );
      for (const id of now) expect(await redis.raw.hget(k.job(id), 's')).toBe('pending');
      // one doorbell token per promotion that made work claimable
      expect(await redis.raw.llen(k.key('wake'))).toBe(call + 1);
      expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    }
    expect(await leases(queue).promote(3)).toEqual({ promoted: 1, nextDueAt: null });
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await leases(queue).promote(3)).toEqual({ promoted: 0, nextDueAt: null });
    expect(await redis.raw.llen(k.key('wake'))).toBe(4);

    // claims follow arrival order, not due order
    const claimed = await leases(queue).claim(10, 30_000);
    expect(claimed.jobs.map((j) => j.id)).toEqual(ids);
  });

  it('a promote before anything is due moves nothing and names the first due time', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('later', { delayMs: 60_000 });
    await queue.add('sooner', { delayMs: 30_000 });
    const first = Number((await redis.raw.zrange(k.key('scheduled'), 0, '0', 'WITHSCORES'))[1]);
    expect(await leases(queue).promote()).toEqual({ promoted: 0, nextDueAt: first });
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(2);
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);
  });

  it('a scheduled job is never claimed early, by claim() or beat(), and beat() claims it once due', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id, state } = await queue.add('delayed', { delayMs: 300 });
    expect(state).toBe('scheduled');
    const record = await queue.getJob(id);
    const dueAt = record!.runAt!;
    expect(record).toMatchObject({ state: 'scheduled', runAt: dueAt });
    expect(dueAt - record!.createdAt).toBe(300);

    let polls = 0;
    while ((await redis.serverNow()) < dueAt - 50) {
      const claimed = await leases(queue).claim(1, 30_000);
      expect(claimed.jobs).toEqual([]);
      expect(claimed.nextDueAt).toBe(dueAt);
      const beat = await leases(queue).beat({ n: 1, leaseMs: 30_000 });
      // whatever the timing, a beat that ran before the due time took nothing
      if (beat.now < dueAt) {
        expect(beat.jobs).toEqual([]);
        expect(beat.promoted).toBe(0);
        expect(beat.nextDueAt).toBe(dueAt);
      }
      polls++;
      await sleep(20);
    }
    expect(polls).toBeGreaterThan(0);
    expect(await redis.raw.zscore(k.key('scheduled'), id)).toBe(String(dueAt));
    expect(await redis.raw.hget(k.job(id), 'a')).toBe('0');

    // claim() alone never promotes, even after the due time
    await untilServerTime(dueAt);
    expect((await leases(queue).claim(1, 30_000)).jobs).toEqual([]);
    const beat = await leases(queue).beat({ n: 1, leaseMs: 30_000 });
    expect(beat.now).toBeGreaterThanOrEqual(dueAt);
    expect(beat.promoted).toBe(1);
    expect(beat.jobs.map((j) => [j.id, j.payload, j.token])).toEqual([[id, 'delayed', 1]]);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await redis.raw.zscore(k.key('active'), id)).toBe(String(beat.now + 30_000));
  });

  it('priority and group survive promotion: a delayed grouped job lands in its lane', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('g-job', { delayMs: 50, group: 'tenant-a', priority: 7 });
    const plain = await queue.add('plain', { delayMs: 50 });
    const order = await redis.raw.hget(k.job(id), 'o');
    expect(await redis.raw.hmget(k.job(id), 'g', 'p')).toEqual(['tenant-a', '7']);
    const record = await queue.getJob(id);
    expect(record).toMatchObject({ state: 'scheduled', group: 'tenant-a', priority: 7 });
    expect(record!.runAt).toBe(Number(await redis.raw.zscore(k.key('scheduled'), id)));
    // a scheduled job is in no lane yet
    expect(await laneSize(redis.raw, k, 'tenant-a')).toBe(0);

    // wait for the later of the two due times: the second job was added after the first
    const plainDue = Number(await redis.raw.zscore(k.key('scheduled'), plain.id));
    await untilServerTime(Math.max(record!.runAt!, plainDue));
    expect((await leases(queue).promote()).promoted).toBe(2);
    expect(await laneIds(redis.raw, k, 'tenant-a')).toEqual([id]);
    expect(await laneOrder(redis.raw, k, id, 'tenant-a')).toBe(order);
    // priority 7 sits above 2^32 * 7 in the order score
    expect(Number(order)).toBeGreaterThanOrEqual(7 * 2 ** 32);
    expect(await laneIds(redis.raw, k)).toEqual([plain.id]);
    expect(await redis.raw.sismember(k.key('groups'), 'tenant-a')).toBe(1);
    expect((await redis.raw.lrange(k.key('ring'), 0, '-1')).sort()).toEqual(['*', 'tenant-a']);
    expect(await redis.raw.hmget(k.job(id), 's', 'g', 'p')).toEqual(['pending', 'tenant-a', '7']);

    const claimed = await leases(queue).claim(2, 30_000);
    const grouped = claimed.jobs.find((j) => j.id === id);
    expect(grouped).toMatchObject({ group: 'tenant-a', payload: 'g-job' });
    expect(await redis.raw.hget(k.key('gactive'), 'tenant-a')).toBe('1');
  });

  it('a delayed job into a paused group is promoted into its lane but not onto the ring', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.pauseGroup('g');
    const { id } = await queue.add('x', { delayMs: 30, group: 'g' });
    await untilServerTime((await queue.getJob(id))!.runAt!);
    expect((await leases(queue).promote()).promoted).toBe(1);
    expect(await laneIds(redis.raw, k, 'g')).toEqual([id]);
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);
    expect((await leases(queue).beat({ n: 1, leaseMs: 30_000 })).jobs).toEqual([]);
  });
});
