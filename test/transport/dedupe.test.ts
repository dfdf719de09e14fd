import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type EnqueueOptions, type Queue } from '../../src/index.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, laneIds, leases, sleep, snapshotKeys, until, useRedis } from '../helpers.js';

/**
 * Deduplication windows on enqueue (docs/design.md, "Deduplication"): a key held until its job
 * finishes or for a ttl, duplicates answered with the holder's id and writing nothing, a replace
 * (debounce) of a job not yet started, the key released on completion, death and removal. The
 * keyspace checker runs after each step.
 */
describe('dedupe', () => {
  const redis = useRedis();
  const ddKey = (queue: Queue<unknown>, key: string): string => `${keysOf(queue).prefix}dd:${key}`;
  const consistent = async (queue: Queue<unknown>): Promise<void> => {
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  };
  /** Every key of the queue but meta (each enqueue call moves meta's sequence, a duplicate's too). */
  const stateOf = async (queue: Queue<unknown>): Promise<Record<string, unknown>> => {
    const all = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    delete all[keysOf(queue).key('meta')];
    return all;
  };
  const eventsOf = async (queue: Queue<unknown>): Promise<Array<Record<string, unknown>>> =>
    (await queue.readEvents({ after: '0', limit: 1000 })).events.map(({ id: _, time: __, ...rest }) => rest);

  it('drops an add while the job holding its key is unfinished, answering that job', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const first = await queue.add('a', { dedupe: { key: 'mail:1' } });
    expect(first).toEqual({ id: 'JOB:1', state: 'pending' });
    expect(await redis.raw.get(ddKey(queue, 'mail:1'))).toBe(first.id);
    expect(await redis.raw.pttl(ddKey(queue, 'mail:1'))).toBe(-1);
    expect(await redis.raw.hmget(k.job(first.id), 'dk', 'dt')).toEqual(['mail:1', null]);
    await consistent(queue);

    const before = await stateOf(queue);
    const events = await eventsOf(queue);
    expect(await queue.add('b', { dedupe: { key: 'mail:1' }, delayMs: 5_000 })).toEqual({ id: first.id, state: 'duplicate' });
    expect(await stateOf(queue)).toEqual(before);
    expect(await eventsOf(queue)).toEqual(events);
    expect((await queue.getJob(first.id))?.payload).toBe('a');
    // another key is another job
    expect(await queue.add('c', { dedupe: { key: 'mail:2' } })).toMatchObject({ state: 'pending' });
    expect((await queue.stats()).counts.pending).toBe(2);
    await consistent(queue);
  });

  it('holds a ttl key for its window even when the job finished sooner, then adds again', async () => {
    const queue = redis.queue<string>();
    const first = await queue.add('a', { dedupe: { key: 'k', ttlMs: 150 } });
    expect(await redis.raw.hget(keysOf(queue).job(first.id), 'dt')).toBe('150');
    const ttl = await redis.raw.pttl(ddKey(queue, 'k'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(150);
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    expect((await leases(queue).complete([job!])).completed).toEqual([true]);
    // finished, and the window still holds
    expect(await queue.add('b', { dedupe: { key: 'k', ttlMs: 150 } })).toEqual({ id: first.id, state: 'duplicate' });
    await consistent(queue);
    await until(async () => (await redis.raw.exists(ddKey(queue, 'k'))) === 0);
    const second = await queue.add('c', { dedupe: { key: 'k', ttlMs: 150 } });
    expect(second).toMatchObject({ state: 'pending' });
    expect(second.id).not.toBe(first.id);
    await consistent(queue);
  });

  it('a ttl key outlives a completed row deleted at once, and still answers its id', async () => {
    const queue = redis.queue<string>({ keepCompletedMs: 0 });
    const first = await queue.add('a', { dedupe: { key: 'k', ttlMs: 60_000 } });
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    await leases(queue).complete([job!]);
    expect(await redis.raw.exists(keysOf(queue).job(first.id))).toBe(0);
    await consistent(queue);
    expect(await queue.add('b', { dedupe: { key: 'k', replace: true } })).toEqual({ id: first.id, state: 'duplicate' });
    await consistent(queue);
  });

  it('replaces a scheduled job: the new payload and due time, the same id', async () => {
    const queue = redis.queue<{ v: number }>();
    const k = keysOf(queue);
    const first = await queue.add({ v: 1 }, { delayMs: 60_000, group: 'g', dedupe: { key: 'doc:7', replace: true } });
    expect(first.state).toBe('scheduled');
    const dueBefore = Number(await redis.raw.zscore(k.key('scheduled'), first.id));
    const orderBefore = await redis.raw.hget(k.job(first.id), 'o');
    const t0 = await redis.serverNow();
    expect(await queue.add({ v: 2 }, { delayMs: 120_000, dedupe: { key: 'doc:7', replace: true } })).toEqual({ id: first.id, state: 'replaced' });
    const t1 = await redis.serverNow();
    const record = await queue.getJob(first.id);
    expect(record).toMatchObject({ state: 'scheduled', payload: { v: 2 }, group: 'g' });
    const due = Number(await redis.raw.zscore(k.key('scheduled'), first.id));
    expect(due).toBeGreaterThanOrEqual(t0 + 120_000);
    expect(due).toBeLessThanOrEqual(t1 + 120_000);
    expect(due).toBeGreaterThan(dueBefore);
    expect(await redis.raw.hget(k.job(first.id), 'o')).toBe(orderBefore);
    await consistent(queue);
    const events = await eventsOf(queue);
    expect(events.at(-1)).toEqual({ event: 'replaced', jobId: first.id, group: 'g', dueAt: due });

    // a runAt the past makes it claimable now, back in its lane at its order
    expect(await queue.add({ v: 3 }, { runAt: 0, dedupe: { key: 'doc:7', replace: true } })).toEqual({ id: first.id, state: 'replaced' });
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await laneIds(redis.raw, k, 'g')).toEqual([first.id]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
    expect(await redis.raw.llen(k.key('wake'))).toBeGreaterThan(0);
    expect((await eventsOf(queue)).at(-1)).toEqual({ event: 'replaced', jobId: first.id, group: 'g' });
    await consistent(queue);
    const [claimed] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(claimed).toMatchObject({ id: first.id, payload: { v: 3 } });
    await consistent(queue);
  });

  it('replaces a pending job with a delay: out of its lane and the ring into scheduled, and back', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const [job, other] = await queue.addBulk([
      { payload: 'a', group: 'g', dedupe: { key: 'x' } },
      { payload: 'prio', priority: 5, dedupe: { key: 'y' } },
    ]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g', '*']);
    const orderOfPrio = await redis.raw.zscore(k.key('pending'), other!.id);

    const bellBefore = await redis.raw.llen(k.key('sched'));
    expect(await queue.add('b', { group: 'g', delayMs: 60_000, dedupe: { key: 'x', replace: true } })).toEqual({ id: job!.id, state: 'replaced' });
    expect(await redis.raw.lrange(k.fifo('g'), 0, '-1')).toEqual([]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    expect(await redis.raw.hget(k.job(job!.id), 's')).toBe('scheduled');
    expect(await redis.raw.llen(k.key('sched'))).toBe(bellBefore + 1);
    await consistent(queue);

    // a job with a priority waits in the zset with its order as its score alone: the row takes it
    expect(await queue.add('prio-2', { delayMs: 30_000, dedupe: { key: 'y', replace: true } })).toEqual({ id: other!.id, state: 'replaced' });
    expect(await redis.raw.hget(k.job(other!.id), 'o')).toBe(orderOfPrio);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual([]);
    await consistent(queue);
    // and back, claimable now, at the same order
    expect(await queue.add('prio-3', { dedupe: { key: 'y', replace: true } })).toEqual({ id: other!.id, state: 'replaced' });
    expect(await redis.raw.zscore(k.key('pending'), other!.id)).toBe(orderOfPrio);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['*']);
    await consistent(queue);

    // pending and claimable now again: it stays where it waits, with the new payload
    expect(await queue.add('prio-4', { dedupe: { key: 'y', replace: true } })).toEqual({ id: other!.id, state: 'replaced' });
    expect(await redis.raw.zscore(k.key('pending'), other!.id)).toBe(orderOfPrio);
    expect((await queue.getJob(other!.id))?.payload).toBe('prio-4');
    await consistent(queue);
  });

  it('a replace changes the window: a ttl key becomes until-finished and back', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('a', { dedupe: { key: 'w', ttlMs: 60_000 } });
    expect(await queue.add('b', { dedupe: { key: 'w', replace: true } })).toEqual({ id, state: 'replaced' });
    expect(await redis.raw.pttl(ddKey(queue, 'w'))).toBe(-1);
    expect(await redis.raw.hget(k.job(id), 'dt')).toBeNull();
    await consistent(queue);
    expect(await queue.add('c', { dedupe: { key: 'w', replace: true, ttlMs: 30_000 } })).toEqual({ id, state: 'replaced' });
    expect(await redis.raw.pttl(ddKey(queue, 'w'))).toBeGreaterThan(0);
    expect(await redis.raw.hget(k.job(id), 'dt')).toBe('30000');
    await consistent(queue);
  });

  it('does not replace a job once it started: active, or retried after a run', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('a', { dedupe: { key: 'r' } });
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    const before = await stateOf(queue);
    expect(await queue.add('b', { dedupe: { key: 'r', replace: true } })).toEqual({ id, state: 'duplicate' });
    expect(await stateOf(queue)).toEqual(before);
    expect(await leases(queue).retry([{ ...job!, error: 'again', delayMs: 60_000 }])).toEqual(['scheduled']);
    expect(await queue.add('c', { dedupe: { key: 'r', replace: true } })).toEqual({ id, state: 'duplicate' });
    expect((await queue.getJob(id))?.payload).toBe('a');
    await consistent(queue);
  });

  it('releases an until-finished key on completion', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('a', { dedupe: { key: 'c' } });
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    expect((await leases(queue).complete([job!])).completed).toEqual([true]);
    expect(await redis.raw.exists(ddKey(queue, 'c'))).toBe(0);
    // the completed row keeps its key: a removal releases only a key that still names it
    expect(await redis.raw.hget(k.job(id), 'dk')).toBe('c');
    await consistent(queue);
    const next = await queue.add('b', { dedupe: { key: 'c' } });
    expect(next).toMatchObject({ state: 'pending' });
    await queue.remove(id);
    expect(await redis.raw.get(ddKey(queue, 'c'))).toBe(next.id);
    await consistent(queue);
  });

  it('releases an until-finished key on death (a failing settle, a fail, a lapsed lease), and a reprocess does not take it again', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const a = await queue.add('a', { maxAttempts: 1, dedupe: { key: 'retry' } });
    const b = await queue.add('b', { dedupe: { key: 'fail' } });
    const c = await queue.add('c', { maxAttempts: 1, dedupe: { key: 'reap' } });
    const held = (await leases(queue).claim(2, 30_000)).jobs;
    expect(held.map((j) => j.id)).toEqual([a.id, b.id]);
    expect(await leases(queue).retry([{ ...held[0]!, error: 'boom' }])).toEqual(['dead']);
    expect(await leases(queue).fail([{ ...held[1]!, error: 'for good' }])).toEqual(['dead']);
    await leases(queue).claim(1, 20);
    await sleep(40);
    expect(await leases(queue).reap()).toMatchObject({ buried: 1 });
    for (const [job, key] of [[a, 'retry'], [b, 'fail'], [c, 'reap']] as const) {
      expect(await redis.raw.exists(ddKey(queue, key))).toBe(0);
      expect(await redis.raw.hmget(k.job(job.id), 's', 'dk')).toEqual(['dead', null]);
    }
    await consistent(queue);
    const again = await queue.add('a2', { dedupe: { key: 'retry' } });
    expect(again).toMatchObject({ state: 'pending' });
    await queue.reprocess(a.id);
    expect(await redis.raw.get(ddKey(queue, 'retry'))).toBe(again.id);
    await consistent(queue);
    await queue.reprocess(b.id);
    expect(await queue.add('b2', { dedupe: { key: 'fail' } })).toMatchObject({ state: 'pending' });
    await consistent(queue);
  });

  it('a ttl key stays through death and is released when the row is removed, in either mode', async () => {
    const queue = redis.queue<string>();
    const dead = await queue.add('a', { maxAttempts: 1, dedupe: { key: 'dead-ttl', ttlMs: 60_000 } });
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    await leases(queue).fail([{ ...job!, error: 'x' }]);
    expect(await redis.raw.get(ddKey(queue, 'dead-ttl'))).toBe(dead.id);
    await consistent(queue);
    await queue.remove(dead.id);
    expect(await redis.raw.exists(ddKey(queue, 'dead-ttl'))).toBe(0);
    const waiting = await queue.add('b', { delayMs: 60_000, dedupe: { key: 'u' } });
    await queue.remove(waiting.id);
    expect(await redis.raw.exists(ddKey(queue, 'u'))).toBe(0);
    await consistent(queue);
    expect(await queue.add('c', { dedupe: { key: 'u' } })).toMatchObject({ state: 'pending' });
    expect(await queue.add('d', { dedupe: { key: 'dead-ttl', ttlMs: 60_000 } })).toMatchObject({ state: 'pending' });
    await consistent(queue);
  });

  it('drain, clean and obliterate release the keys of the rows they delete', async () => {
    const queue = redis.queue<string>();
    await queue.addBulk([
      { payload: 'p', dedupe: { key: 'p' } },
      { payload: 'done', dedupe: { key: 'done', ttlMs: 60_000 } },
      { payload: 'dead', dedupe: { key: 'dead', ttlMs: 60_000 } },
    ]);
    const [p, done, dead] = (await leases(queue).claim(3, 30_000)).jobs;
    await leases(queue).complete([p!, done!]);
    await leases(queue).fail([{ ...dead!, error: 'x' }]);
    await queue.addBulk([
      { payload: 'w', group: 'g', dedupe: { key: 'w', ttlMs: 60_000 } },
      { payload: 's', delayMs: 60_000, dedupe: { key: 's' } },
    ]);
    expect(await redis.raw.exists(ddKey(queue, 'p'))).toBe(0);
    for (const key of ['done', 'dead', 'w', 's']) expect(await redis.raw.exists(ddKey(queue, key))).toBe(1);
    await consistent(queue);

    expect(await queue.drain()).toBe(2);
    for (const key of ['w', 's']) expect(await redis.raw.exists(ddKey(queue, key))).toBe(0);
    await consistent(queue);
    expect(await queue.clean('completed')).toHaveLength(2);
    expect(await redis.raw.exists(ddKey(queue, 'done'))).toBe(0);
    await consistent(queue);
    expect(await queue.clean('dead')).toEqual([dead!.id]);
    expect(await redis.raw.keys(`${keysOf(queue).prefix}dd:*`)).toEqual([]);
    await consistent(queue);

    const other = redis.queue<string>();
    await other.addBulk([
      { payload: 'a', dedupe: { key: 'a' } },
      { payload: 'b', delayMs: 60_000, dedupe: { key: 'b', ttlMs: 60_000 } },
    ]);
    await other.add('c', { maxAttempts: 1, dedupe: { key: 'c', ttlMs: 60_000 } });
    const [held] = (await leases(other).claim(1, 30_000)).jobs;
    await leases(other).fail([{ ...held!, error: 'x' }]);
    expect(await other.obliterate({ force: true })).toBe(true);
    // the request records are left to expire (obliterate.lua); nothing else is left
    expect((await redis.raw.keys(`${keysOf(other).prefix}*`)).filter((key) => !key.includes(':req:'))).toEqual([]);
  });

  it('repeated keys in one bulk add behave as adds one after the other', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const results = await queue.addBulk([
      { payload: 1, dedupe: { key: 'a' } },
      { payload: 2, dedupe: { key: 'a' } },
      { payload: 3, delayMs: 60_000, dedupe: { key: 'a', replace: true } },
      { payload: 4, dedupe: { key: 'b' } },
      { payload: 5, group: 'g', dedupe: { key: 'c', replace: true } },
      { payload: 6, dedupe: { key: 'c', replace: true } },
      { payload: 7 },
    ]);
    const [a, , , b, c, , plain] = results;
    expect(results.map((r) => r.state)).toEqual(['pending', 'duplicate', 'replaced', 'pending', 'pending', 'replaced', 'pending']);
    expect(results.map((r) => r.id)).toEqual([a!.id, a!.id, a!.id, b!.id, c!.id, c!.id, plain!.id]);
    expect(await queue.getJob(a!.id)).toMatchObject({ state: 'scheduled', payload: 3 });
    expect(await queue.getJob(c!.id)).toMatchObject({ state: 'pending', payload: 6, group: 'g' });
    expect(await laneIds(redis.raw, k)).toEqual([b!.id, plain!.id]);
    expect(await laneIds(redis.raw, k, 'g')).toEqual([c!.id]);
    expect((await eventsOf(queue)).map((e) => `${String(e.event)} ${String(e.jobId)}`)).toEqual([
      `added ${a!.id}`,
      `replaced ${a!.id}`,
      `added ${b!.id}`,
      `added ${c!.id}`,
      `replaced ${c!.id}`,
      `added ${plain!.id}`,
    ]);
    await consistent(queue);
  });

  it('an enqueue request sent again answers its first reply, a replace included', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('a', { delayMs: 60_000, dedupe: { key: 'i', replace: true } });
    const first = await queue.add('b', { delayMs: 90_000, dedupe: { key: 'i', replace: true }, idempotencyKey: 'req-1' });
    expect(first).toEqual({ id, state: 'replaced' });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect(await queue.add('b', { delayMs: 90_000, dedupe: { key: 'i', replace: true }, idempotencyKey: 'req-1' })).toEqual(first);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    await consistent(queue);
  });

  it('refuses bad dedupe options before any write, naming the field', async () => {
    const queue = redis.queue();
    const bad: Array<[unknown, RegExp]> = [
      ['k', /dedupe must be an object/],
      [{}, /dedupe\.key/],
      [{ key: '' }, /dedupe\.key/],
      [{ key: 'x'.repeat(257) }, /dedupe\.key/],
      [{ key: 'a\nb' }, /dedupe\.key/],
      [{ key: 'a\u0000' }, /dedupe\.key/],
      [{ key: 7 }, /dedupe\.key/],
      [{ key: 'k', ttlMs: 0 }, /dedupe\.ttlMs/],
      [{ key: 'k', ttlMs: 1.5 }, /dedupe\.ttlMs/],
      [{ key: 'k', ttlMs: '100' }, /dedupe\.ttlMs/],
      [{ key: 'k', replace: 'yes' }, /dedupe\.replace/],
      [{ key: 'k', extend: true }, /unknown dedupe field "extend"/],
    ];
    for (const [dedupe, message] of bad) {
      await expect(queue.add(1, { dedupe } as EnqueueOptions), JSON.stringify(dedupe)).rejects.toThrow(message);
      await expect(queue.addBulk([{ payload: 1 }, { payload: 2, dedupe } as { payload: number }])).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.add(1, { id: 'mine', dedupe: { key: 'k' } })).rejects.toThrow(/dedupe or id/);
    expect(await redis.raw.keys(`${keysOf(queue).prefix}*`)).toEqual([]);
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(0);
    // the longest key, and every other character, is taken
    const longest = 'ü'.repeat(256);
    expect(await queue.add(1, { dedupe: { key: longest } })).toMatchObject({ state: 'pending' });
    expect(await queue.add(1, { dedupe: { key: 'a b:ü/{x}*' } })).toMatchObject({ state: 'pending' });
    await consistent(queue);
  });

  it('adds without dedupe write no key and no field of it', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2, delayMs: 60_000 }, { payload: 3, group: 'g' }]);
    expect(await redis.raw.keys(`${keysOf(queue).prefix}dd:*`)).toEqual([]);
    expect(await redis.raw.hget(keysOf(queue).key('meta'), 'dd')).toBeNull();
    await consistent(queue);
  });

  it('the checker flags a key that does not match its row', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { id } = await queue.add(1, { dedupe: { key: 'f' } });
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(() => redis.raw.del(ddKey(queue, 'f')), () => redis.raw.set(ddKey(queue, 'f'), id), /holds dedupe key "f" until finished, but the key names null/);
    await expectFlag(() => redis.raw.pexpire(ddKey(queue, 'f'), 60_000), () => redis.raw.persist(ddKey(queue, 'f')), /expires, but the row/);
    await expectFlag(() => redis.raw.set(ddKey(queue, 'g'), 'JOB:nope'), () => redis.raw.del(ddKey(queue, 'g')), /names JOB:nope, which has no row/);
    await expectFlag(() => redis.raw.hdel(k.key('meta'), 'dd'), () => redis.raw.hset(k.key('meta'), 'dd', '1'), /meta dd/);
    await expectFlag(() => redis.raw.hset(k.job(id), 'dt', '0'), () => redis.raw.hdel(k.job(id), 'dt'), /dedupe ttl \(dt\) "0"|has no TTL, but the row/);
  });
});
