import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Job } from '../../src/job.js';
import type { Queue } from '../../src/queue/queue.js';
import { BatchConsumer } from '../../src/node/consumer/index.js';
import { Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { AUTO_PREFETCH_MAX } from '../../src/node/consumer/prefetch.js';
import { keyspace } from '../../src/keyspace.js';
import { checkInvariants } from '../invariants.js';
import { leaseCount, sleep, until, useRedis } from '../helpers.js';

/**
 * Prefetch: a consumer may hold claimed jobs waiting for a slot besides those running. These pin
 * that the slots still bound the handlers, that 'auto' prefetches only for short jobs, that stop()
 * gives waiting jobs back uncounted, and that two prefetching consumers never run one attempt twice.
 */
describe('prefetch in the parked consumer', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const stoppers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    await Promise.all(stoppers.splice(0).map((stop) => stop()));
  });

  /** A started consumer; its handler records the running count and the leases in Redis. */
  function consume<P>(
    queue: Queue<P>,
    handler: (job: Job<P>) => Promise<void> | void,
    options: ConsumerOptions<P> = {},
  ): { consumer: Consumer<P>; seen: Array<Job<P>>; peak: { running: number; leases: number } } {
    const seen: Array<Job<P>> = [];
    const peak = { running: 0, leases: 0 };
    let running = 0;
    const k = keyspace(queue.name);
    const consumer = new Consumer<P>(
      IoredisTransport.connect(url),
      queue.name,
      async (job) => {
        running++;
        peak.running = Math.max(peak.running, running);
        seen.push(job);
        try {
          peak.leases = Math.max(peak.leases, await leaseCount(redis.raw, k));
          await handler(job);
        } finally {
          running--;
        }
      },
      { beatMs: 10_000, ...options, ownsTransport: true },
    ).start();
    stoppers.push(() => consumer.stop(1_000));
    return { consumer, seen, peak };
  }

  it('with short jobs holds more leases than its slots, yet never runs more handlers than its concurrency', async () => {
    const queue = redis.queue();
    const { peak } = consume(queue, () => {}, { concurrency: 4 });
    await queue.addBulk(Array.from({ length: 600 }, (_, i) => ({ payload: i })));
    await until(async () => (await queue.stats()).counts.completed === 600, 10_000);
    expect(peak.running).toBeLessThanOrEqual(4);
    expect(peak.running).toBeGreaterThan(1);
    expect(peak.leases).toBeGreaterThan(4);
    expect(peak.leases).toBeLessThanOrEqual(4 + AUTO_PREFETCH_MAX);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('with handlers far shorter than a round trip holds enough to cover it, at most its slots plus AUTO_PREFETCH_MAX', async () => {
    const queue = redis.queue();
    // the handler does nothing: one slot runs many jobs while one claim is in flight
    const consumer = new Consumer(IoredisTransport.connect(url), queue.name, () => {}, {
      concurrency: 2,
      beatMs: 10_000,
      ownsTransport: true,
    }).start();
    stoppers.push(() => consumer.stop(1_000));
    let leases = 0;
    const k = keyspace(queue.name);
    const sampler = setInterval(() => void leaseCount(redis.raw, k).then((n) => (leases = Math.max(leases, n))), 1);
    try {
      await queue.addBulk(Array.from({ length: 1000 }, (_, i) => ({ payload: i })));
      await until(async () => (await queue.stats()).counts.completed === 1000, 10_000);
    } finally {
      clearInterval(sampler);
    }
    // more than the slots twice over (the old bound), never past slots + AUTO_PREFETCH_MAX
    expect(leases).toBeGreaterThan(4);
    expect(leases).toBeLessThanOrEqual(2 + AUTO_PREFETCH_MAX);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('with long jobs (50 ms) holds no more leases than its slots', async () => {
    const queue = redis.queue();
    const { peak } = consume(queue, () => sleep(50), { concurrency: 4 });
    await queue.addBulk(Array.from({ length: 24 }, (_, i) => ({ payload: i })));
    await until(async () => (await queue.stats()).counts.completed === 24, 10_000);
    expect(peak.running).toBe(4);
    expect(peak.leases).toBeLessThanOrEqual(4);
  });

  it('prefetch: 0 never holds more leases than its slots, even with short jobs', async () => {
    const queue = redis.queue();
    const { peak } = consume(queue, () => {}, { concurrency: 4, prefetch: 0 });
    await queue.addBulk(Array.from({ length: 300 }, (_, i) => ({ payload: i })));
    await until(async () => (await queue.stats()).counts.completed === 300, 10_000);
    expect(peak.leases).toBeLessThanOrEqual(4);
  });

  it('gives waiting jobs back on stop: pending again, their attempt not counted, invariants clean', async () => {
    const queue = redis.queue();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { consumer, seen } = consume(queue, () => gate, { concurrency: 1, prefetch: 2 });
    const ids = (await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: i })))).map((r) => r.id);
    const k = keyspace(queue.name);
    // Redis holds the third lease a moment before the claim's reply reaches the consumer: wait for both
    await until(async () => seen.length === 1 && consumer.inFlight === 3 && (await leaseCount(redis.raw, k)) === 3);
    expect(consumer.inFlight).toBe(3);

    const stopped = consumer.stop(5_000);
    await sleep(20);
    open();
    await stopped;

    expect(seen).toHaveLength(1);
    expect((await queue.stats()).counts).toMatchObject({ completed: 1, active: 0, pending: 4 });
    for (const id of ids) {
      const job = (await queue.getJob(id))!;
      if (id === seen[0]!.id) expect(job).toMatchObject({ state: 'completed', attempt: 1 });
      else expect(job).toMatchObject({ state: 'pending', attempt: 0 });
    }
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('drops a waiting job whose lease was lost, without running it', async () => {
    const queue = redis.queue();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const fenced: string[] = [];
    const { seen } = consume(queue, () => gate, {
      concurrency: 1,
      prefetch: 1,
      renewMs: 20,
      hooks: { onFenced: (job) => fenced.push(job.id) },
    });
    const [first, second] = (await queue.addBulk([{ payload: 1 }, { payload: 2 }])).map((r) => r.id);
    const k = keyspace(queue.name);
    await until(async () => seen.length === 1 && (await leaseCount(redis.raw, k)) === 2);
    expect(seen[0]!.id).toBe(first);
    await queue.remove(second!);
    await until(() => fenced.includes(second!));
    open();
    await until(async () => (await queue.stats()).counts.completed === 1);
    await sleep(50);
    expect(seen.map((j) => j.id)).toEqual([first]);
  });

  it('shares a queue between two prefetching consumers without running one attempt twice', async () => {
    const queue = redis.queue();
    const a = consume(queue, () => {}, { concurrency: 5 });
    const b = consume(queue, () => {}, { concurrency: 5 });
    await queue.addBulk(Array.from({ length: 1_000 }, (_, i) => ({ payload: i, ...(i % 2 ? { group: `g${i % 7}` } : {}) })));
    await until(async () => (await queue.stats()).counts.completed === 1_000, 15_000);
    const runs = [...a.seen, ...b.seen].map((j) => `${j.id}#${j.token}`);
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs).toHaveLength(1_000);
    expect(a.peak.running).toBeLessThanOrEqual(5);
    expect(b.peak.running).toBeLessThanOrEqual(5);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a prefetching BatchConsumer runs no more batches at once than its concurrency', async () => {
    const queue = redis.queue<number>();
    let running = 0;
    let peak = 0;
    let done = 0;
    const transport = IoredisTransport.connect(url);
    const consumer = new BatchConsumer<number>(
      transport,
      queue.name,
      async (jobs) => {
        running++;
        peak = Math.max(peak, running);
        await Promise.resolve();
        running--;
        done += jobs.length;
      },
      { batchSize: 5, concurrency: 2, prefetch: 10, beatMs: 10_000 },
    ).start();
    stoppers.push(async () => {
      await consumer.stop(1_000);
      await transport.close();
    });
    await queue.addBulk(Array.from({ length: 300 }, (_, i) => ({ payload: i })));
    await until(async () => (await queue.stats()).counts.completed === 300, 10_000);
    expect(done).toBe(300);
    expect(peak).toBeLessThanOrEqual(2);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
