import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KindError, Queue } from '../../src/index.js';
import type { ScriptOp } from '../../src/ops/op.js';
import { Scripts } from '../../src/ops/scripts.js';
import type { EncodedJob } from '../../src/encode.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalRedis, startLocalRedis } from '../../src/node/local-redis.js';
import { keysOf, laneIds, laneSize, queueName, snapshotKeys, useRedis, leases } from '../helpers.js';
import { completeOp } from '../../src/ops/complete.js';
import { enqueueOp } from '../../src/ops/enqueue.js';
import { extendOp } from '../../src/ops/extend.js';
import { failOp } from '../../src/ops/fail.js';
import { getJobOp } from '../../src/ops/get-job.js';
import { moveGroupOp } from '../../src/ops/move-group.js';
import { removeOp } from '../../src/ops/remove.js';
import { reprocessOp } from '../../src/ops/reprocess.js';
import { retryOp } from '../../src/ops/retry.js';


/** A job tuple as enqueue.lua takes it, built by hand (no toJobId on the way). */
const encoded = (id: string, payload = '{}', group = ''): EncodedJob => [id, payload, group, -1, -1, 0, 3, 'f,0,0,0', '', -1, '0', '', '', -1, '', ''];

/**
 * The kind door (invariant 3), on a Redis of its own: with no other suite writing to it, DBSIZE
 * and a snapshot of every key pin "nothing written" exactly.
 */
describe('the kind door (invariant 3): only JOB: ids pass', () => {
  let server: LocalRedis;
  let raw: Redis;
  let transport: IoredisTransport;
  let queue: Queue<unknown>;
  /** The script gateway, to call scripts past Queue's own checks. */
  let gateway: Scripts;
  /** A held job and its token: a valid entry to put beside a bad one in a batch. */
  let held: { id: string; token: number };

  beforeAll(async () => {
    server = await startLocalRedis({ env: { PATH: process.env.PATH } });
    raw = new Redis(server.url, { protocol: 2 });
    transport = IoredisTransport.connect(server.url);
    queue = new Queue(transport, queueName('kind'));
    gateway = new Scripts(transport, queue.name);
    // a queue with something in every state, so a script that got past the door would have
    // plenty to write
    await queue.add({ pending: true }, { id: 'p1' });
    await queue.add({ grouped: true }, { id: 'g1', group: 'g' });
    await queue.add({ later: true }, { id: 's1', delayMs: 600_000 });
    await queue.add({ dead: true }, { id: 'd1' });
    await queue.add({ held: true }, { id: 'h1' });
    const claimed = await leases(queue).claim(2, 600_000);
    const dead = claimed.jobs.find((j) => j.id === 'JOB:p1') ?? claimed.jobs[0]!;
    expect(await leases(queue).fail([{ id: dead.id, token: dead.token, error: 'x' }])).toEqual(['dead']);
    const other = claimed.jobs.find((j) => j.id !== dead.id)!;
    held = { id: other.id, token: other.token };
    expect((await queue.stats()).counts.active).toBe(1);
    expect((await queue.stats()).counts.dead).toBe(1);
  });
  afterAll(async () => {
    await transport.close();
    raw.disconnect();
    await server.stop();
  });

  /** Runs the op, expects a KindError (EMQKIND), and checks that Redis is exactly as before. */
  async function refusedAndUnchanged(op: ScriptOp<unknown>, what: string): Promise<void> {
    const size = await raw.dbsize();
    const before = await snapshotKeys(raw, '*');
    let error: unknown;
    try {
      await gateway.run(op);
    } catch (e) {
      error = e;
    }
    expect(error, what).toBeInstanceOf(KindError);
    expect(error, what).toMatchObject({ code: 'EMQKIND', status: 400 });
    expect(await raw.dbsize(), what).toBe(size);
    expect(await snapshotKeys(raw, '*'), what).toEqual(before);
  }

  const BAD = ['FLOW:1', 'job:1', 'Job:1', '', 'x', 'JOB:', 'JOB', ' JOB:1', 'JOB:' + 'x'.repeat(253)];

  it('enqueue refuses a non-JOB id', async () => {
    // '' is not an id for enqueue: it asks for a fresh JOB:<seq>; every other bad id is refused
    for (const id of BAD.filter((b) => b !== '')) {
      await refusedAndUnchanged(enqueueOp([encoded(id)]), `enqueue ${JSON.stringify(id)}`);
    }
  });

  it('a bulk enqueue with one bad id (the 3rd) writes nothing at all', async () => {
    const jobs = [encoded('JOB:b1'), encoded('', '{"fresh":1}'), encoded('FLOW:1'), encoded('JOB:b4', '{}', 'g')];
    await refusedAndUnchanged(enqueueOp(jobs), 'bulk enqueue');
    expect(await raw.exists(gateway.keys.job('JOB:b1'))).toBe(0);
  });

  it('complete, retry, fail and extend refuse a non-JOB id, even beside a valid held job', async () => {
    const heldRow = await raw.hgetall(gateway.keys.job(held.id));
    const heldLease = await raw.zscore(gateway.keys.key('active'), held.id);
    expect(heldRow.s).toBe('active');
    for (const id of BAD) {
      const what = JSON.stringify(id);
      const bad = { id, token: 1 };
      await refusedAndUnchanged(completeOp([bad], { keepMs: 60_000 }), `complete ${what}`);
      await refusedAndUnchanged(completeOp([held, bad], { keepMs: 60_000, claimN: 5 }), `complete batch ${what}`);
      await refusedAndUnchanged(retryOp([{ ...bad, error: 'e' }]), `retry ${what}`);
      await refusedAndUnchanged(
        retryOp([{ ...held, error: 'e', delayMs: 0 }, { ...bad, error: 'e' }]),
        `retry batch ${what}`,
      );
      await refusedAndUnchanged(failOp([{ ...bad, error: 'e' }]), `fail ${what}`);
      await refusedAndUnchanged(failOp([{ ...held, error: 'e' }, { ...bad, error: 'e' }]), `fail batch ${what}`);
      await refusedAndUnchanged(extendOp([bad], 1_000), `extend ${what}`);
      await refusedAndUnchanged(extendOp([held, bad], 1_000), `extend batch ${what}`);
    }
    // the held job was never touched
    expect(await raw.hgetall(gateway.keys.job(held.id))).toEqual(heldRow);
    expect(await raw.zscore(gateway.keys.key('active'), held.id)).toBe(heldLease);
  });

  it('remove, reprocess, moveGroup and getJob refuse a non-JOB id', async () => {
    for (const id of BAD) {
      const what = JSON.stringify(id);
      await refusedAndUnchanged(removeOp(id), `remove ${what}`);
      await refusedAndUnchanged(reprocessOp(id), `reprocess ${what}`);
      await refusedAndUnchanged(moveGroupOp(id, 'g2'), `moveGroup ${what}`);
      await refusedAndUnchanged(moveGroupOp(id, ''), `moveGroup to none ${what}`);
      await refusedAndUnchanged(getJobOp(id), `getJob ${what}`);
    }
  });

  it('a row planted under a non-JOB id is still behind the door', async () => {
    // even when a key exists for the id, the scripts refuse to name it
    const stray = gateway.keys.job('FLOW:1');
    await raw.hset(stray, 's', 'dead', 'a', '1', 'd', '{}');
    await raw.zadd(gateway.keys.key('dead'), 1, 'FLOW:1');
    try {
      await refusedAndUnchanged(reprocessOp('FLOW:1'), 'reprocess planted');
      await refusedAndUnchanged(removeOp('FLOW:1'), 'remove planted');
      await refusedAndUnchanged(getJobOp('FLOW:1'), 'getJob planted');
      await refusedAndUnchanged(enqueueOp([encoded('FLOW:1')]), 'enqueue planted');
    } finally {
      await raw.del(stray);
      await raw.zrem(gateway.keys.key('dead'), 'FLOW:1');
    }
  });

  it('JOB: ids still pass the door', async () => {
    expect(await gateway.run(getJobOp('JOB:none'))).toBeNull();
    expect(await gateway.run(removeOp('JOB:none'))).toEqual({ value: false, outbox: [] });
    expect(await gateway.run(reprocessOp('JOB:none'))).toEqual({ value: 0, outbox: [] });
    expect(await gateway.run(extendOp([{ id: 'JOB:none', token: 1 }], 1_000))).toEqual([null]);
  });
});

describe('duplicates (invariant 3): an existing id writes nothing', () => {
  const redis = useRedis();

  /** Every key of the queue, the enqueue sequence left out (a duplicate may advance it). */
  async function state(q: Queue<unknown>): Promise<Record<string, unknown>> {
    const k = keysOf(q);
    const snap = await snapshotKeys(redis.raw, `${k.prefix}*`);
    const meta = snap[k.key('meta')] as { value: Record<string, string> } | undefined;
    if (meta) delete meta.value.seq;
    return snap;
  }

  it('adding the same id twice reports a duplicate and changes nothing', async () => {
    const queue = redis.queue<{ v: number }>();
    const k = keysOf(queue);
    expect(await queue.add({ v: 1 }, { id: 'same' })).toEqual({ id: 'JOB:same', state: 'pending' });
    const before = await state(queue);
    expect(await redis.raw.llen(k.key('wake'))).toBe(1);

    // different payload, group, delay, priority, attempts: none of it lands
    expect(await queue.add({ v: 2 }, { id: 'same' })).toEqual({ id: 'JOB:same', state: 'duplicate' });
    expect(await queue.add({ v: 3 }, { id: 'same', group: 'g', priority: 5, maxAttempts: 9 })).toEqual({
      id: 'JOB:same',
      state: 'duplicate',
    });
    expect(await queue.add({ v: 4 }, { id: 'same', delayMs: 10_000 })).toEqual({ id: 'JOB:same', state: 'duplicate' });

    expect(await redis.raw.hget(k.job('JOB:same'), 'd')).toBe('{"v":1}');
    expect(await laneSize(redis.raw, k)).toBe(1);
    expect(await redis.raw.llen(k.key('wake'))).toBe(1);
    expect(await laneSize(redis.raw, k, 'g')).toBe(0);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await state(queue)).toEqual(before);
  });

  it('a duplicate of a job in any state writes nothing', async () => {
    const queue = redis.queue<string>();
    await queue.add('s', { id: 'sched', delayMs: 600_000 });
    await queue.add('a', { id: 'act' });
    await queue.add('d', { id: 'dead' });
    await queue.add('c', { id: 'done' });
    const jobs = (await leases(queue).claim(3, 600_000)).jobs;
    const byId = new Map(jobs.map((j) => [j.id, j]));
    expect(await leases(queue).fail([{ id: 'JOB:dead', token: byId.get('JOB:dead')!.token, error: 'x' }])).toEqual(['dead']);
    expect((await leases(queue).complete([{ id: 'JOB:done', token: byId.get('JOB:done')!.token }])).completed).toEqual([true]);

    const before = await state(queue);
    const again = await queue.addBulk(
      ['sched', 'act', 'dead', 'done'].map((id) => ({ payload: 'new', id, group: 'g' })),
    );
    expect(again.map((r) => r.state)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
    expect(await state(queue)).toEqual(before);
  });

  it('a bulk with the same id twice admits it once', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const results = await queue.addBulk([
      { payload: 1, id: 'twice' },
      { payload: 2 },
      { payload: 3, id: 'twice', group: 'g' },
    ]);
    expect(results).toEqual([
      { id: 'JOB:twice', state: 'pending' },
      { id: expect.stringMatching(/^JOB:\d+$/) as unknown as string, state: 'pending' },
      { id: 'JOB:twice', state: 'duplicate' },
    ]);
    expect(await redis.raw.hget(k.job('JOB:twice'), 'd')).toBe('1');
    expect(await redis.raw.hget(k.job('JOB:twice'), 'g')).toBeNull();
    expect(await laneIds(redis.raw, k)).toEqual(['JOB:twice', results[1]!.id]);
    expect(await laneSize(redis.raw, k, 'g')).toBe(0);
    // one enqueue, one token
    expect(await redis.raw.lrange(k.key('wake'), 0, '-1')).toEqual(['1']);
    const claimed = await leases(queue).claim(10, 30_000);
    expect(claimed.jobs.map((j) => j.payload)).toEqual([1, 2]);
  });

  it("'42' and 'JOB:42' name the same job", async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    expect(await queue.add('first', { id: '42' })).toEqual({ id: 'JOB:42', state: 'pending' });
    expect(await queue.add('second', { id: 'JOB:42' })).toEqual({ id: 'JOB:42', state: 'duplicate' });
    expect(await queue.add('third', { id: '42' })).toEqual({ id: 'JOB:42', state: 'duplicate' });
    expect(await redis.raw.keys(`${k.prefix}job:*`)).toEqual([k.job('JOB:42')]);
    expect((await queue.getJob('42'))?.payload).toBe('first');
    expect((await queue.getJob('JOB:42'))?.payload).toBe('first');
    // and the reverse order of spelling
    expect(await queue.add('a', { id: 'JOB:7' })).toEqual({ id: 'JOB:7', state: 'pending' });
    expect(await queue.add('b', { id: '7' })).toEqual({ id: 'JOB:7', state: 'duplicate' });
    expect(await laneSize(redis.raw, k)).toBe(2);
  });

  it('within one bulk, a given id and the id the sequence makes for another job are told apart', async () => {
    // a fresh queue's sequence hands out JOB:1, JOB:2, ... to the jobs of its first bulk
    const queue = redis.queue<string>();
    expect(await queue.addBulk([{ payload: 'made' }, { payload: 'given', id: '1' }])).toEqual([
      { id: 'JOB:1', state: 'pending' },
      { id: 'JOB:1', state: 'duplicate' },
    ]);
    expect((await queue.getJob('1'))?.payload).toBe('made');

    // the other way round: a given id takes the one the sequence would make for a later job
    const other = redis.queue<string>();
    const results = await other.addBulk([{ payload: 'given', id: '2' }, { payload: 'made' }]);
    expect(results[0]).toEqual({ id: 'JOB:2', state: 'pending' });
    expect(results[1]!.state).toBe('pending');
    expect(results[1]!.id).not.toBe('JOB:2');
    expect((await other.getJob('2'))?.payload).toBe('given');
    expect((await other.getJob(results[1]!.id))?.payload).toBe('made');
    expect((await other.stats()).counts.pending).toBe(2);
  });

  it('a generated id never collides with a given one', async () => {
    const queue = redis.queue<string>();
    // take the ids the sequence would hand out next
    await queue.add('given 1', { id: '1' });
    await queue.add('given 3', { id: '3' });
    const fresh = await queue.addBulk([{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    const ids = fresh.map((r) => r.id);
    expect(fresh.every((r) => r.state === 'pending')).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain('JOB:1');
    expect(ids).not.toContain('JOB:3');
    expect((await queue.getJob('1'))?.payload).toBe('given 1');
    expect((await queue.getJob('3'))?.payload).toBe('given 3');
    expect((await queue.stats()).counts.pending).toBe(5);
  });
});
