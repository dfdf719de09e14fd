import { describe, expect, it } from 'vitest';
import { DEFAULT_JOB_DEFAULTS, encodeBackoff, encodeJob } from '../../src/encode.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, laneOrder, scriptsOf, sleep, snapshotKeys, useRedis, leases } from '../helpers.js';
import { claimOp } from '../../src/ops/claim.js';
import { enqueueOp } from '../../src/ops/enqueue.js';

/**
 * The compact row (docs/design.md, "The row"): a job waiting in a lane carries only what the
 * scripts cannot know otherwise. `m` and `b` are written only when they differ from the scripts'
 * defaults (lua/includes/job_defaults.lua, which must equal DEFAULT_JOB_DEFAULTS); the order `o`
 * lives in the lane score until a claim writes it into the row, and on a scheduled row.
 */
describe('the row format', () => {
  const redis = useRedis();
  const ORDER_SPAN = 2 ** 32;

  it('a job on the defaults writes no m or b, and reads back with the defaults', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    const row = await redis.raw.hgetall(k.job(id));
    // `o` because it waits in the arrivals list, where the row holds the order
    expect(Object.keys(row).sort()).toEqual(['a', 'c', 'd', 'o', 's']);
    expect(await redis.raw.lrange(k.fifo(), 0, '-1')).toEqual([id]);
    expect(await laneOrder(redis.raw, k, id)).toBe('1');

    const record = await queue.getJob(id);
    expect(record).toMatchObject({ state: 'pending', attempt: 0, maxAttempts: DEFAULT_JOB_DEFAULTS.maxAttempts, attemptsStarted: 0 });
    expect(encodeBackoff(record!.backoff)).toBe(encodeBackoff(DEFAULT_JOB_DEFAULTS.backoff));

    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(job).toMatchObject({ id, maxAttempts: DEFAULT_JOB_DEFAULTS.maxAttempts });
    // the claim wrote the lane score into the row: the job can go back in its place from here
    expect(await redis.raw.hget(k.job(id), 'o')).toBe('1');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a result is `r` and progress `pg`, each JSON text written only when there is one', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const plain = await queue.add('plain');
    const reported = await queue.add('reported');
    const [a, b] = (await leases(queue).claim(2, 30_000)).jobs;
    expect([a!.id, b!.id]).toEqual([plain.id, reported.id]);
    await leases(queue).progress([b!], { step: 2 });
    await leases(queue).complete([a!, { id: b!.id, token: b!.token, result: '[1,"two"]' }]);
    // a handler that returned nothing and reported nothing: the row of a completed job, no more
    expect(Object.keys(await redis.raw.hgetall(k.job(plain.id))).sort()).toEqual(['a', 'c', 'd', 'f', 'o', 's', 't']);
    expect(await redis.raw.hgetall(k.job(reported.id))).toMatchObject({ s: 'completed', r: '[1,"two"]', pg: '{"step":2}' });
    expect(await queue.getJob(reported.id)).toMatchObject({ result: [1, 'two'], progress: { step: 2 } });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('the defaults spelled out are left out too; anything else is written', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const same = await queue.add('same', { maxAttempts: 3, backoff: DEFAULT_JOB_DEFAULTS.backoff });
    const other = await queue.add('other', { maxAttempts: 4, backoff: 500 });
    expect(await redis.raw.hmget(k.job(same.id), 'm', 'b')).toEqual([null, null]);
    expect(await redis.raw.hmget(k.job(other.id), 'm', 'b')).toEqual(['4', 'f,500,3600000,0']);
    expect(await queue.getJob(other.id)).toMatchObject({
      maxAttempts: 4,
      backoff: { type: 'fixed', delayMs: 500, maxDelayMs: 3_600_000, jitter: 0 },
    });
  });

  it('a queue with defaults of its own writes them into every row', async () => {
    const queue = redis.queue<string>({ defaults: { maxAttempts: 5, backoff: { type: 'fixed', delayMs: 200 } } });
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    expect(await redis.raw.hmget(k.job(id), 'm', 'b')).toEqual(['5', 'f,200,3600000,0']);
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(job!.maxAttempts).toBe(5);
  });

  it('an absent m allows the default attempts: dead at the third failure, listed with the defaults', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('x');
    const outcomes: string[] = [];
    for (let i = 0; i < DEFAULT_JOB_DEFAULTS.maxAttempts; i++) {
      const [job] = (await leases(queue).claim(1, 30_000)).jobs;
      expect(job!.id).toBe(id);
      outcomes.push(...(await leases(queue).retry([{ id, token: job!.token, error: `boom ${i}`, delayMs: 0 }])));
    }
    expect(outcomes).toEqual(['pending', 'pending', 'dead']);
    const [dead] = await queue.listDead();
    expect(dead).toMatchObject({ id, state: 'dead', attempt: 3, maxAttempts: 3, attemptsStarted: 3 });
    expect(encodeBackoff(dead!.backoff)).toBe(encodeBackoff(DEFAULT_JOB_DEFAULTS.backoff));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("an absent m also bounds a reaped job's attempts", async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('x');
    for (let i = 0; i < DEFAULT_JOB_DEFAULTS.maxAttempts; i++) {
      expect((await leases(queue).claim(1, 20)).jobs.map((j) => j.id)).toEqual([id]);
      await sleep(30);
      const reaped = await leases(queue).reap();
      expect(reaped).toEqual(i < 2 ? { requeued: 1, buried: 0 } : { requeued: 0, buried: 1 });
    }
    expect((await queue.getJob(id))!.state).toBe('dead');
  });

  it('an absent b backs off by the default spec: exponential from 1 s, jitter up to 20%', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    const t0 = await redis.serverNow();
    expect(await leases(queue).retry([{ id, token: job!.token, error: 'boom' }])).toEqual(['scheduled']);
    const t1 = await redis.serverNow();
    const due = Number(await redis.raw.zscore(k.key('scheduled'), id));
    expect(due).toBeGreaterThanOrEqual(t0 + 800);
    expect(due).toBeLessThanOrEqual(t1 + 1000);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a scheduled row keeps its order, and promotion puts it in its lane at that score', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const { id } = await queue.add('later', { delayMs: 30, group: 'g', priority: 2 });
    const order = await redis.raw.hget(k.job(id), 'o');
    expect(Number(order)).toBe(2 * ORDER_SPAN + 1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    await sleep(40);
    expect((await leases(queue).promote()).promoted).toBe(1);
    expect(await laneOrder(redis.raw, k, id, 'g')).toBe(order);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a retried, released, reaped or reprocessed job goes back ahead of later arrivals', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const first = await queue.add('first', { group: 'g' });
    await queue.addBulk([{ payload: 'second', group: 'g' }, { payload: 'third', group: 'g' }]);
    const order = await laneOrder(redis.raw, k, first.id, 'g');
    const head = async (): Promise<string[]> => redis.raw.zrange(k.lane('g'), 0, '0');
    const claimFirst = async (leaseMs = 30_000): Promise<number> => {
      const [job] = (await leases(queue).claim(1, leaseMs)).jobs;
      expect(job!.id).toBe(first.id);
      expect(await redis.raw.hget(k.job(first.id), 'o')).toBe(order);
      return job!.token;
    };

    let token = await claimFirst();
    expect(await leases(queue).retry([{ id: first.id, token, error: 'once', delayMs: 0 }])).toEqual(['pending']);
    expect(await head()).toEqual([first.id]);
    expect(await laneOrder(redis.raw, k, first.id, 'g')).toBe(order);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    token = await claimFirst();
    expect(await leases(queue).release([{ id: first.id, token }])).toEqual(['released']);
    expect(await head()).toEqual([first.id]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    await claimFirst(20);
    await sleep(30);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    expect(await head()).toEqual([first.id]);
    expect(await laneOrder(redis.raw, k, first.id, 'g')).toBe(order);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    token = await claimFirst();
    expect(await leases(queue).fail([{ id: first.id, token, error: 'for good' }])).toEqual(['dead']);
    await queue.reprocess(first.id);
    expect(await head()).toEqual([first.id]);
    expect(await laneOrder(redis.raw, k, first.id, 'g')).toBe(order);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const second = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(second.id).toBe(first.id);
    await leases(queue).release([{ id: second.id, token: second.token }]);
    await queue.moveToGroup(first.id, null);
    expect(await laneOrder(redis.raw, k, first.id)).toBe(order);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a job moved before its first claim keeps its order from the lane score', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const early = await queue.add('early', { group: 'A', priority: 1 });
    const late = await queue.add('late', { group: 'B', priority: 1 });
    await queue.moveToGroup(early.id, 'B');
    expect(await redis.raw.zrange(k.lane('B'), 0, '-1', 'WITHSCORES')).toEqual([
      early.id,
      String(ORDER_SPAN + 1),
      late.id,
      String(ORDER_SPAN + 2),
    ]);
    expect(await redis.raw.hget(k.job(early.id), 'o')).toBeNull();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('the checker names a row whose order is missing or wrong', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const a = await queue.add('a', { group: 'g' });
    const b = await queue.add('b', { group: 'g' });
    const later = await queue.add('later', { delayMs: 60_000 });
    const urgent = await queue.add('urgent', { group: 'g', priority: 1 });
    const d = await queue.add('d', { group: 'g' });
    const [held] = (await leases(queue).claim(1, 30_000)).jobs;
    await leases(queue).release([{ id: held!.id, token: held!.token }]);
    expect(held!.id).toBe(a.id);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const expectFlag = flagChecker(redis.raw, queue.name);
    // a job claimed before must carry its order
    await expectFlag(
      () => redis.raw.hdel(k.job(a.id), 'o'),
      () => redis.raw.hset(k.job(a.id), 'o', '1'),
      new RegExp(`${a.id}: claimable and claimed before .* has no order`),
    );
    // the row's order and the lane score disagree
    await expectFlag(
      () => redis.raw.hset(k.job(a.id), 'o', '7'),
      () => redis.raw.hset(k.job(a.id), 'o', '1'),
      new RegExp(`${a.id}: claimable with score 1 but its row's order is "7"`),
    );
    // a lane score of another priority than the row's (a zset member without `o` is checked too)
    const urgentOrder = ORDER_SPAN + 4;
    expect(await redis.raw.zscore(k.lane('g'), urgent.id)).toBe(String(urgentOrder));
    expect(await redis.raw.hget(k.job(urgent.id), 'o')).toBeNull();
    await expectFlag(
      () => redis.raw.hset(k.job(urgent.id), 'p', '3'),
      () => redis.raw.hset(k.job(urgent.id), 'p', '1'),
      new RegExp(`${urgent.id}: claimable with score ${urgentOrder}: order ${urgentOrder} does not belong to priority 3`),
    );
    // an arrivals list holds only fresh jobs at priority 0, each with its order, in rising order
    expect(await redis.raw.lrange(k.fifo('g'), 0, '-1')).toEqual([b.id, d.id]);
    await expectFlag(
      () => redis.raw.hset(k.job(b.id), 'p', '3'),
      () => redis.raw.hdel(k.job(b.id), 'p'),
      new RegExp(`${b.id}: in fifo:g but has priority 3`),
    );
    await expectFlag(
      () => redis.raw.hdel(k.job(b.id), 'o'),
      () => redis.raw.hset(k.job(b.id), 'o', '2'),
      new RegExp(`${b.id}: in fifo:g but its row has no order`),
    );
    await expectFlag(
      () => redis.raw.hset(k.job(b.id), 't', '9'),
      () => redis.raw.hdel(k.job(b.id), 't'),
      new RegExp(`${b.id}: in fifo:g but claimed before`),
    );
    await expectFlag(
      () => redis.raw.hset(k.job(b.id), 'o', '6'),
      () => redis.raw.hset(k.job(b.id), 'o', '2'),
      new RegExp(`fifo g: ${b.id} \\(order 6\\) before ${d.id} \\(order 5\\)`),
    );
    // a scheduled row without its order
    await expectFlag(
      () => redis.raw.hdel(k.job(later.id), 'o'),
      () => redis.raw.hset(k.job(later.id), 'o', '3'),
      new RegExp(`${later.id}: scheduled but its row has no order`),
    );
  });

  describe('the trace context (`x`)', () => {
    const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

    it('is written only when the enqueue carries one, and a claim hands it out', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const bare = await queue.add('bare');
      const traced = await queue.add('traced', { traceparent: TP });
      const later = await queue.add('later', { traceparent: TP, delayMs: 60_000, priority: 3, group: 'g' });
      // no span and no header: nothing beyond what the row needs (the suites run with
      // @opentelemetry/api installed and no tracer provider registered)
      expect(await redis.raw.hget(k.job(bare.id), 'x')).toBeNull();
      expect(await redis.raw.hget(k.job(traced.id), 'x')).toBe(TP);
      expect(await redis.raw.hget(k.job(later.id), 'x')).toBe(TP);
      // a malformed header is ignored, as W3C says: nothing stored
      const junk = await queue.add('junk', { traceparent: 'not-a-traceparent' });
      expect(await redis.raw.hget(k.job(junk.id), 'x')).toBeNull();
      expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

      const jobs = (await leases(queue).claim(3, 30_000)).jobs;
      expect(jobs.map((j) => [j.id, j.traceparent])).toEqual([
        [bare.id, undefined],
        [traced.id, TP],
        [junk.id, undefined],
      ]);
    });

    it('every job of a bulk enqueue carries it; a claim sent again hands it out again', async () => {
      const queue = redis.queue<number>();
      const k = keysOf(queue);
      const results = await queue.addBulk([{ payload: 1 }, { payload: 2, group: 'g'}], { traceparent: TP });
      for (const { id } of results) expect(await redis.raw.hget(k.job(id), 'x')).toBe(TP);
      const gateway = scriptsOf(queue);
      const first = await gateway.run(claimOp(2, 30_000, 'c:again'));
      const repeat = await gateway.run(claimOp(2, 30_000, 'c:again'));
      expect(first.jobs.map((j) => j.traceparent)).toEqual([TP, TP]);
      expect(repeat.jobs.map((j) => [j.id, j.token, j.traceparent])).toEqual(first.jobs.map((j) => [j.id, j.token, j.traceparent]));
      expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    });

    it('enqueue refuses a malformed one with EMQARG and writes nothing', async () => {
      const queue = redis.queue<string>();
      await queue.add('first');
      const gateway = scriptsOf(queue);
      const job = encodeJob('x', undefined, DEFAULT_JOB_DEFAULTS, 1024);
      const before = await snapshotKeys(redis.raw, `emq:{${queue.name}}:*`);
      for (const traceparent of ['garbage', TP.toUpperCase(), `${TP}-extra`]) {
        const refused = gateway.run(enqueueOp([job], { key: '', ttlMs: 0, callerKey: false, traceparent }));
        await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(refused).rejects.toMatchObject({ code: 'EMQARG' });
      }
      expect(await snapshotKeys(redis.raw, `emq:{${queue.name}}:*`)).toEqual(before);
    });

    it('the checker names a row whose traceparent is malformed', async () => {
      const queue = redis.queue<string>();
      const k = keysOf(queue);
      const { id } = await queue.add('traced', { traceparent: TP });
      const expectFlag = flagChecker(redis.raw, queue.name);
      for (const bad of ['junk', TP.replace('-01', '-1'), `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`]) {
        await expectFlag(
          () => redis.raw.hset(k.job(id), 'x', bad),
          () => redis.raw.hset(k.job(id), 'x', TP),
          new RegExp(`${id}: its row's traceparent .* is not a W3C traceparent`),
        );
      }
    });
  });
});
