import { describe, expect, it } from 'vitest';
import { type EnqueueOptions, Queue } from '../../src/index.js';
import { useCountedRedis } from '../counted-redis.js';
import { leases, queueName } from '../helpers.js';

/**
 * What deduplication costs in Redis commands (INFO commandstats on a Redis of its own, as
 * commands-per-job.test.ts counts): a job with a key pays a GET and a SET at enqueue and a GET and a
 * DEL when it completes; a duplicate one GET; a bulk delete one HGET a row once the queue used a
 * key, and nothing per row before.
 */
describe('Redis commands of deduplication', () => {
  const redis = useCountedRedis();
  const commandsOf = (work: () => Promise<unknown>): Promise<number> => redis.commandsOf(work);

  const JOBS = 1000;
  const jobs = (dedupe: (i: number) => EnqueueOptions['dedupe']): Array<{ payload: { i: number }; dedupe?: EnqueueOptions['dedupe'] }> =>
    Array.from({ length: JOBS }, (_, i) => {
      const d = dedupe(i);
      return d === undefined ? { payload: { i } } : { payload: { i }, dedupe: d };
    });

  async function life(queue: Queue, dedupe: (i: number) => EnqueueOptions['dedupe']): Promise<{ enqueue: number; run: number }> {
    await queue.stats(); // scripts cached before counting
    const enqueue = await commandsOf(() => queue.addBulk(jobs(dedupe)));
    const run = await commandsOf(async () => {
      let claimed = await leases(queue).claim(100, 60_000);
      while (claimed.jobs.length > 0) {
        claimed = (await leases(queue).complete(claimed.jobs.map(({ id, token }) => ({ id, token })), { claimN: 100, leaseMs: 60_000 })).claimed!;
      }
    });
    return { enqueue: enqueue / JOBS, run: run / JOBS };
  }

  it('a job with a key: a GET and a SET more at enqueue, a GET and a DEL more at completion', async () => {
    const plain = await life(new Queue(redis.transport, queueName('dd-plain')), () => undefined);
    const keyed = await life(new Queue(redis.transport, queueName('dd-keyed')), (i) => ({ key: `k${i}` }));
    const ttl = await life(new Queue(redis.transport, queueName('dd-ttl')), (i) => ({ key: `k${i}`, ttlMs: 60_000 }));
    expect(keyed.enqueue - plain.enqueue).toBeGreaterThan(1.9);
    expect(keyed.enqueue - plain.enqueue).toBeLessThan(2.1);
    expect(keyed.run - plain.run).toBeGreaterThan(1.9);
    expect(keyed.run - plain.run).toBeLessThan(2.1);
    // a ttl key is left to expire: nothing at completion
    expect(Math.abs(ttl.run - plain.run)).toBeLessThan(0.1);
  });

  it('a duplicate costs one GET; a bulk delete reads each row\'s key only in a queue that used one', async () => {
    const queue = new Queue(redis.transport, queueName('dd-dup'));
    await queue.addBulk(jobs((i) => ({ key: `k${i}` })));
    const duplicates = (await commandsOf(() => queue.addBulk(jobs((i) => ({ key: `k${i}` }))))) / JOBS;
    expect(duplicates).toBeLessThan(1.05);

    const plain = new Queue(redis.transport, queueName('dd-drain-plain'));
    await plain.addBulk(jobs(() => undefined));
    const drainPlain = (await commandsOf(() => plain.drain())) / JOBS;
    const drainKeyed = (await commandsOf(() => queue.drain())) / JOBS;
    expect(drainPlain).toBeLessThan(0.1);
    // HGET, GET, DEL a row
    expect(drainKeyed - drainPlain).toBeGreaterThan(2.9);
    expect(drainKeyed - drainPlain).toBeLessThan(3.1);
  });
});
