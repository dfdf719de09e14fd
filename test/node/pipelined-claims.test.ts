import { afterEach, describe, expect, inject, it } from 'vitest';
import { BatchConsumer } from '../../src/node/consumer/index.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { AUTO_PREFETCH_MAX } from '../../src/node/consumer/prefetch.js';
import { keyspace } from '../../src/keyspace.js';
import type { Reply, ScriptCall } from '../../src/transport.js';
import { checkInvariants } from '../invariants.js';
import { leaseCount, sleep, until, useRedis } from '../helpers.js';

/**
 * A busy parked consumer keeps a second settle-and-claim in flight behind the first, so Redis runs
 * one while this process runs the other's jobs. These pin that it does, that the jobs in hand stay
 * within the slots and prefetch all the same, that a batch handler still gets whole batches, and
 * that stop() with two requests in flight records every settle and loses no job.
 */
describe('pipelined settle-and-claim', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const stoppers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await Promise.all(stoppers.splice(0).map((stop) => stop()));
  });

  /** A real ioredis transport that also counts its script calls in flight (the most at once). */
  class CountingTransport extends IoredisTransport {
    inFlight = 0;
    peak = 0;
    sent = 0;
    override async evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
      this.sent++;
      this.peak = Math.max(this.peak, ++this.inFlight);
      try {
        return await super.evalsha(calls);
      } finally {
        this.inFlight--;
      }
    }
  }

  const counting = (): CountingTransport => {
    const base = IoredisTransport.connect(url);
    return new CountingTransport(base.redis, { owned: true });
  };

  it('sends a second request while the first is in flight, within its slots and prefetch, and parks once drained', async () => {
    const queue = redis.queue<number>();
    const transport = counting();
    const k = keyspace(queue.name);
    let leases = 0;
    const ran = new Map<number, number>();
    const consumer = new Consumer<number>(transport, queue.name, (job) => {
      ran.set(job.payload, (ran.get(job.payload) ?? 0) + 1);
    }, { concurrency: 20, beatMs: 10_000, ownsTransport: true }).start();
    stoppers.push(() => consumer.stop(1_000));
    const sampler = setInterval(() => void leaseCount(redis.raw, k).then((n) => (leases = Math.max(leases, n))), 1);
    try {
      await queue.addBulk(Array.from({ length: 3000 }, (_, i) => ({ payload: i })));
      await until(async () => (await queue.stats()).counts.completed === 3000, 20_000);
    } finally {
      clearInterval(sampler);
    }
    expect(transport.peak).toBeGreaterThanOrEqual(2);
    // drained, it parks on the doorbell: no more script calls (its beat is 10 s away)
    await sleep(100);
    const sent = transport.sent;
    await sleep(400);
    expect(transport.sent).toBe(sent);
    // 'auto' lets the slots' count wait beside the slots, up to AUTO_PREFETCH_MAX
    expect(leases).toBeLessThanOrEqual(20 + Math.max(20, AUTO_PREFETCH_MAX));
    expect(ran.size).toBe(3000);
    expect([...ran.values()].every((n) => n === 1)).toBe(true);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('still hands a batch handler whole batches when its claims are split', async () => {
    const queue = redis.queue<number>();
    const sizes: number[] = [];
    // long batches: nothing is prefetched, so all the consumer may hold is one batch per slot
    const transport = IoredisTransport.connect(url);
    const consumer = new BatchConsumer<number>(transport, queue.name, async (jobs) => {
      sizes.push(jobs.length);
      await sleep(30);
    }, { batchSize: 5, concurrency: 1, beatMs: 10_000 });
    stoppers.push(async () => {
      await consumer.stop(1_000);
      await transport.close();
    });
    await queue.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: i })));
    consumer.start();
    await until(async () => (await queue.stats()).counts.completed === 30, 10_000);
    expect(sizes).toEqual([5, 5, 5, 5, 5, 5]);
  });

  it('stops with requests in flight: every settle recorded, no job lost, invariants clean', async () => {
    const queue = redis.queue<number>();
    const total = 4000;
    const ran = new Set<number>();
    let completed = 0;
    const options = { concurrency: 50, beatMs: 10_000, leaseMs: 1_000, ownsTransport: true };
    const first = new Consumer<number>(counting(), queue.name, (job) => {
      ran.add(job.payload);
    }, { ...options, hooks: { onCompleted: () => completed++ } });
    await queue.addBulk(Array.from({ length: total }, (_, i) => ({ payload: i })));
    first.start();
    await until(() => completed >= 500, 10_000);
    // a long stop timeout: a settle left unresolved would hold stop() past the test's timeout
    await first.stop(60_000);
    const recorded = (await queue.stats()).counts.completed;
    // what the handlers finished and the hooks heard of was recorded, nothing more
    expect(recorded).toBe(completed);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // the rest (jobs a request in flight claimed are reaped when their 1 s leases lapse) runs on
    const second = new Consumer<number>(IoredisTransport.connect(url), queue.name, (job) => {
      ran.add(job.payload);
    }, { ...options, beatMs: 200 }).start();
    stoppers.push(() => second.stop(1_000));
    await until(async () => (await queue.stats()).counts.completed === total, 20_000);
    expect(ran.size).toBe(total);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
