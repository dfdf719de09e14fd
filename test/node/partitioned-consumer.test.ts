import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Job } from '../../src/job.js';
import { QUEUE_REGISTRY } from '../../src/keyspace.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { PARTITIONS_REGISTRY, partitionOf } from '../../src/partitions/partition-of.js';
import { BatchConsumer, Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { PartitionBell } from '../../src/node/consumer/partition-bell.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { checkInvariants } from '../invariants.js';
import { queueName, sleep, until, useRedis } from '../helpers.js';

/** A job's payload here: its group's name (or none) and its place in its group. */
interface Item {
  readonly group?: string;
  readonly seq: number;
}

/**
 * A Consumer (and a BatchConsumer) over a PartitionedQueue on one Redis: one loop per partition
 * sharing the consumer's slots, woken by the partitions' SPUBLISHed bells on one subscriber
 * connection. The parked cases use a 30 s beat, so only a bell can start their jobs in time.
 */
describe('a consumer of a partitioned queue', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const names: string[] = [];
  const running: Array<{ stop(timeoutMs?: number): Promise<void> }> = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
    for (const name of names.splice(0)) {
      const keys = await redis.raw.keys(`emq:{${name}~*}:*`);
      if (keys.length > 0) await redis.raw.del(...keys);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
      await redis.raw.srem(QUEUE_REGISTRY, name);
    }
  });

  function partitioned<P>(partitions: number): PartitionedQueue<P> {
    const name = queueName('pq');
    names.push(name);
    return new PartitionedQueue<P>(redis.transport, name, { partitions });
  }

  /** A started consumer on a connection of its own. */
  function consume<P>(queue: PartitionedQueue<P>, handler: (job: Job<P>, signal: AbortSignal) => Promise<unknown> | unknown, options: ConsumerOptions<P> = {}): Consumer<P> {
    const consumer = new Consumer<P>(IoredisTransport.connect(url), queue, (job, { signal }) => handler(job, signal), {
      log: false,
      ...options,
      ownsTransport: true,
    }).start();
    running.push(consumer);
    return consumer;
  }

  /** The doorbell hub's connections to the Redis, by the name it gives them. */
  async function subscribers(queue: PartitionedQueue<unknown>): Promise<number> {
    const list = (await redis.raw.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=emq-doorbell:${queue.name} `)).length;
  }

  /** Every partition's keyspace is consistent. */
  async function expectConsistent(queue: PartitionedQueue<unknown>): Promise<void> {
    for (const part of queue.parts) expect(await checkInvariants(redis.raw, part.name), part.name).toEqual([]);
  }

  it('runs every job of many groups once, each group in order (limit 1), on one subscriber connection', async () => {
    const queue = partitioned<Item>(4);
    const groups = Array.from({ length: 24 }, (_, g) => `tenant-${g}`);
    // the groups land on every partition
    expect(new Set(groups.map((g) => partitionOf(g, 4))).size).toBe(4);
    for (const group of groups) await queue.setGroupLimit(group, 1);
    await queue.addBulk(Array.from({ length: 10 }, (_, seq) => groups.map((group) => ({ payload: { group, seq }, group }))).flat());
    const seen: Item[] = [];
    const ids: string[] = [];
    const active = new Map<string, number>();
    let mostInGroup = 0;
    const consumer = consume<Item>(
      queue,
      async (job) => {
        const g = job.payload.group!;
        active.set(g, (active.get(g) ?? 0) + 1);
        mostInGroup = Math.max(mostInGroup, active.get(g)!);
        seen.push(job.payload);
        ids.push(job.id);
        await sleep(Math.random() * 4);
        active.set(g, active.get(g)! - 1);
      },
      { concurrency: 8 },
    );
    await until(async () => (await queue.counts()).completed === 240, 20_000);
    expect(ids).toHaveLength(240);
    expect(new Set(ids).size).toBe(240);
    expect(mostInGroup).toBe(1);
    for (const group of groups) {
      expect(seen.filter((item) => item.group === group).map((item) => item.seq), group).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    expect(await subscribers(queue)).toBe(1);
    await consumer.stop();
    expect(await subscribers(queue)).toBe(0);
    await expectConsistent(queue);
  });

  it('never runs more than a group limit of 2 of a group at once, and uses the limit', async () => {
    const queue = partitioned<Item>(4);
    const groups = Array.from({ length: 6 }, (_, g) => `org-${g}`);
    for (const group of groups) await queue.setGroupLimit(group, 2);
    await queue.addBulk(groups.flatMap((group) => Array.from({ length: 8 }, (_, seq) => ({ payload: { group, seq }, group }))));
    const active = new Map<string, number>();
    const most = new Map<string, number>();
    consume<Item>(
      queue,
      async (job) => {
        const g = job.payload.group!;
        active.set(g, (active.get(g) ?? 0) + 1);
        most.set(g, Math.max(most.get(g) ?? 0, active.get(g)!));
        await sleep(15);
        active.set(g, active.get(g)! - 1);
      },
      { concurrency: 12 },
    );
    await until(async () => (await queue.counts()).completed === 48, 20_000);
    expect(Math.max(...most.values())).toBe(2);
    await expectConsistent(queue);
  });

  it('runs at most `concurrency` handlers across all partitions, and leases no more than that with prefetch 0', async () => {
    const queue = partitioned<Item>(8);
    await queue.addBulk(Array.from({ length: 120 }, (_, seq) => ({ payload: { seq } })));
    // ungrouped jobs go round robin: every partition has some
    for (const part of queue.parts) expect((await part.stats()).counts.pending, part.name).toBe(15);
    let active = 0;
    let most = 0;
    let mostLeased = 0;
    let sampling = true;
    const sample = (async () => {
      while (sampling) {
        mostLeased = Math.max(mostLeased, (await queue.counts()).active);
        await sleep(2);
      }
    })();
    const consumer = consume<Item>(
      queue,
      async () => {
        most = Math.max(most, ++active);
        await sleep(3 + Math.random() * 5);
        active--;
      },
      { concurrency: 3, prefetch: 0 },
    );
    await until(async () => (await queue.counts()).completed === 120, 20_000);
    sampling = false;
    await sample;
    expect(most).toBe(3);
    expect(mostLeased).toBeGreaterThan(0);
    expect(mostLeased).toBeLessThanOrEqual(3);
    expect(consumer.inFlight).toBe(0);
    await expectConsistent(queue);
  });

  it('a BatchConsumer runs at most `concurrency` batches across partitions, each job once', async () => {
    const queue = partitioned<Item>(4);
    await queue.addBulk(Array.from({ length: 80 }, (_, seq) => ({ payload: { seq } })));
    let batches = 0;
    let most = 0;
    let mostLeased = 0;
    const seqs: number[] = [];
    const consumer = new BatchConsumer<Item>(
      IoredisTransport.connect(url),
      queue,
      async (jobs) => {
        most = Math.max(most, ++batches);
        expect(jobs.length).toBeLessThanOrEqual(5);
        for (const job of jobs) seqs.push(job.payload.seq);
        mostLeased = Math.max(mostLeased, (await queue.counts()).active);
        await sleep(5);
        batches--;
      },
      { batchSize: 5, concurrency: 2, prefetch: 0, log: false, ownsTransport: true },
    ).start();
    running.push(consumer);
    await until(async () => (await queue.counts()).completed === 80, 20_000);
    expect(most).toBeLessThanOrEqual(2);
    expect(mostLeased).toBeLessThanOrEqual(10);
    expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    await expectConsistent(queue);
  });

  it('a job enqueued while every loop is parked (30 s beat) starts at once: the partition bell woke it', async () => {
    const queue = partitioned<Item>(4);
    const started = new Map<number, number>();
    consume<Item>(queue, (job) => void started.set(job.payload.seq, performance.now()), { concurrency: 2, beatMs: 30_000 });
    await sleep(300); // parked: the first beats found nothing
    // one at a time, in turn over the partitions: each wakes its own partition's loop
    for (let seq = 0; seq < 8; seq++) {
      const at = performance.now();
      await queue.add({ seq });
      await until(() => started.has(seq), 5_000);
      expect(started.get(seq)! - at, `job ${seq}`).toBeLessThan(1_000);
    }
    // the last handler started: its completion is recorded a settle later
    const counts = async (): Promise<number[]> => Promise.all(queue.parts.map(async (part) => (await part.stats()).counts.completed));
    await until(async () => (await counts()).reduce((a, b) => a + b, 0) === 8, 5_000);
    expect(await counts()).toEqual([2, 2, 2, 2]);
  });

  it('a delayed job (300 ms) enqueued while parked runs on time: the schedule bell re-read its due time', async () => {
    const queue = partitioned<Item>(4);
    let ranAt: number | undefined;
    consume<Item>(queue, () => void (ranAt = performance.now()), { beatMs: 30_000 });
    await sleep(300);
    const at = performance.now();
    await queue.add({ seq: 0 }, { delayMs: 300, group: 'late' });
    await until(() => ranAt !== undefined, 5_000);
    expect(ranAt! - at).toBeGreaterThanOrEqual(290);
    expect(ranAt! - at).toBeLessThan(1_300);
  });

  it('a queue-wide pause stops every partition claiming, and resume starts them again at once', async () => {
    const queue = partitioned<Item>(4);
    const seen: number[] = [];
    consume<Item>(queue, (job) => void seen.push(job.payload.seq), { concurrency: 4, beatMs: 30_000 });
    await sleep(300);
    expect(await queue.pause()).toBe(true);
    await queue.addBulk(Array.from({ length: 8 }, (_, seq) => ({ payload: { seq } })));
    await sleep(400);
    expect(seen).toEqual([]);
    for (const part of queue.parts) expect((await part.stats()).counts.pending, part.name).toBe(2);
    const at = performance.now();
    expect(await queue.resume()).toBe(true);
    await until(() => seen.length === 8, 5_000);
    expect(performance.now() - at).toBeLessThan(2_000);
  });

  it('after its subscriber connection is killed and made again, rings every bell: a job enqueued meanwhile still starts at once', async () => {
    const queue = partitioned<Item>(4);
    const started = new Map<number, number>();
    consume<Item>(queue, (job) => void started.set(job.payload.seq, performance.now()), { beatMs: 30_000 });
    await sleep(300);
    const list = (await redis.raw.client('LIST')) as string;
    const id = / id=(\d+) /.exec(` ${list.split('\n').find((line) => line.includes(` name=emq-doorbell:${queue.name} `))}`)![1]!;
    await redis.raw.client('KILL', 'ID', id);
    // in the gap: its bell's message goes to nobody
    const at = performance.now();
    await queue.add({ seq: 0 });
    await until(() => started.has(0), 5_000);
    expect(started.get(0)! - at).toBeLessThan(3_000);
    await until(async () => (await subscribers(queue)) === 1, 5_000);
    // and subscribed again: the next wakes by its bell
    await sleep(200);
    const next = performance.now();
    await queue.add({ seq: 1 });
    await until(() => started.has(1), 5_000);
    expect(started.get(1)! - next).toBeLessThan(1_000);
  });

  it('stop() gives back the jobs in hand in every partition, uncounted, and closes the subscriber', async () => {
    const queue = partitioned<Item>(4);
    const added = await queue.addBulk(Array.from({ length: 8 }, (_, seq) => ({ payload: { seq } })));
    let started = 0;
    const consumer = consume<Item>(
      queue,
      async (_job, signal) => {
        started++;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
      { concurrency: 4, prefetch: 2 },
    );
    await until(() => started === 4, 5_000);
    // 4 running and 2 prefetched over the 4 partitions, not 2 per partition: 2 of the 8 stay pending
    await until(async () => (await queue.counts()).active === 6, 5_000);
    await sleep(300);
    expect(await queue.counts()).toMatchObject({ active: 6, pending: 2 });
    expect(consumer.inFlight).toBe(6);
    expect(await subscribers(queue)).toBe(1);
    await consumer.stop(100);
    expect(consumer.running).toBe(false);
    expect(consumer.inFlight).toBe(0);
    const counts = await queue.counts();
    expect(counts.active).toBe(0);
    expect(counts.pending).toBe(8);
    for (const { id } of added) expect(await queue.getJob(id), id).toMatchObject({ state: 'pending', attempt: 0, attemptsStarted: 0 });
    expect(await subscribers(queue)).toBe(0);
    await expectConsistent(queue);
  });

  it('Consumer.connect with `partitions` consumes the partitioned queue by its name, and closes all it opened on stop', async () => {
    const queue = partitioned<Item>(4);
    await queue.addBulk(Array.from({ length: 12 }, (_, seq) => ({ payload: { seq } })));
    const seen: number[] = [];
    const consumer = Consumer.connect<Item>(url, queue.name, (job) => void seen.push(job.payload.seq), { partitions: 4, concurrency: 3, log: false }).start();
    running.push(consumer);
    expect(consumer.queue).toBeInstanceOf(PartitionedQueue);
    await until(() => seen.length === 12, 5_000);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    await consumer.stop();
    expect((consumer.queue.transport as IoredisTransport).redis.status).toBe('end');
    expect(await subscribers(queue)).toBe(0);
  });

  it('refuses a PartitionedQueue on a transport the doorbell hub cannot subscribe on', () => {
    const queue = partitioned<Item>(2);
    // a BlockingTransport that is not an IoredisTransport: a partition's bell itself
    const elsewhere = new PartitionBell(redis.transport as IoredisTransport, 'other~0');
    expect(() => new Consumer<Item>(elsewhere, queue, () => {})).toThrow(InvalidArgumentError);
    expect(() => new Consumer<Item>(elsewhere, queue, () => {})).toThrow(/IoredisTransport/);
  });
});
