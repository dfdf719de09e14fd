import { describe, expect, it } from 'vitest';
import type { Handler, Queue } from '../../src/index.js';
import { runHandler } from '../../src/handler.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/**
 * The keyspace checker's (q), durable steps (test/step-invariants.ts), can fail: each way of
 * breaking the steps' keys is reported.
 */
describe('the keyspace checker’s durable steps', () => {
  const redis = useRedis();

  /** One job of `queue` run by `handler` once and settled. */
  async function runOnce(queue: Queue<null>, handler: Handler<null>): Promise<string> {
    const { id } = await queue.add(null);
    const l = leases(queue);
    const [job] = (await l.claim(1, 30_000)).jobs;
    const outcome = await runHandler(handler, job!, { controller: new AbortController(), steps: l.steps });
    await l.round({ finished: [{ job: job!, outcome }], leaseMs: 30_000 });
    return id;
  }

  const waits: Handler<null> = async (_, { step }) => {
    await step.run('a', () => 1);
    await step.waitForEvent('w', { event: 'e', match: { k: 1 }, timeoutMs: 60_000 });
  };
  const sleeps: Handler<null> = async (_, { step }) => {
    await step.sleep('s', 60_000);
  };

  it('reports a steps hash gone, a waiter lost, a sleeper out of its index, a malformed record, and meta st missing', async () => {
    const queue = redis.queue<null>();
    const k = keysOf(queue);
    const waiting = await runOnce(queue, waits);
    const asleep = await runOnce(queue, sleeps);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const row = await redis.raw.hgetall(k.job(waiting));
    const check = async (): Promise<string[]> => checkInvariants(redis.raw, queue.name);

    const steps = `${k.prefix}steps:${waiting}`;
    const saved = await redis.raw.hgetall(steps);
    await redis.raw.del(steps);
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('has steps (sn) but no steps hash')]));
    await redis.raw.hset(steps, saved);

    await redis.raw.zrem(row.wk!, waiting);
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('awaiting but not among its wait')]));
    await redis.raw.zadd(row.wk!, Date.now(), waiting);

    await redis.raw.zrem(`${k.prefix}sleeping`, asleep);
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('asleep but not among the sleepers')]));
    await redis.raw.zadd(`${k.prefix}sleeping`, (await redis.raw.zscore(k.key('scheduled'), asleep))!, asleep);

    await redis.raw.hset(steps, '1', JSON.stringify({ n: 'a', k: 'run', s: 'sleeping' }));
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('a run, is "sleeping"')]));
    await redis.raw.hset(steps, saved);

    await redis.raw.zrem(`${k.prefix}awaiting`, waiting);
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining(`${waiting}: in no set`)]));
    await redis.raw.zadd(`${k.prefix}awaiting`, '+inf', waiting);
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('its wait times out at inf')]));
    await redis.raw.zadd(`${k.prefix}awaiting`, JSON.parse(saved['2']!).u, waiting);

    await redis.raw.hdel(k.key('meta'), 'st');
    expect(await check()).toEqual(expect.arrayContaining([expect.stringContaining('meta st is null')]));
    await redis.raw.hset(k.key('meta'), 'st', '1');
    expect(await check()).toEqual([]);
  });
});
