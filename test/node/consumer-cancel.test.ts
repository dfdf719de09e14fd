import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { JobCancelledError } from '../../src/handler.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { checkInvariants, checkPartitionedQueue } from '../invariants.js';
import { sleep, until, useRedis } from '../helpers.js';

/**
 * Cancel on the parked Node consumer (docs/guides/job-controls.md): a running job's cancel is heard
 * on its queue's cancel channel and aborts its handler's signal with JobCancelledError within
 * milliseconds (not at the next renewal: renewals here are 10 s apart); its settle ends it
 * cancelled whatever the handler returns; a job prefetched and waiting for a slot never starts;
 * the hook onCancelled tells. Over a partitioned queue too.
 */
describe('cancel on the parked consumer', () => {
  const redis = useRedis();
  const running: Array<Consumer<never>> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(2_000)));
  });

  it('tells its first job of a cancel asked as it starts, whether or not the subscription was made yet (renewals 20 s apart)', async () => {
    const queue = redis.queue<{ n: number }>();
    // added first: the consumer's very first claim takes it
    const job = await queue.add({ n: 1 });
    let startedAt = 0;
    let aborted: { reason: unknown; at: number } | undefined;
    const consumer = new Consumer<{ n: number }>(
      IoredisTransport.connect(inject('redisUrl')),
      queue.name,
      async (_job, { signal }) => {
        startedAt = performance.now();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted = { reason: signal.reason, at: performance.now() };
        throw signal.reason;
      },
      { concurrency: 1, ownsTransport: true, beatMs: 10_000, leaseMs: 60_000 },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    // asked the moment the job is in hand: heard on the channel, or told by the renewal the
    // subscription's making asks for (a cancel asked before anyone listened)
    await until(() => startedAt > 0, 5_000);
    await queue.cancel(job.id, { reason: 'at once' });
    await until(() => aborted !== undefined, 3_000);
    expect(aborted!.reason).toBeInstanceOf(JobCancelledError);
    expect(aborted!.at - startedAt).toBeLessThan(2_000);
  });

  it('aborts a running handler within milliseconds, ends it cancelled whatever it returns, and never starts a prefetched one', async () => {
    const queue = redis.queue<{ obey: boolean }>();
    const started: string[] = [];
    const aborted = new Map<string, { reason: unknown; at: number }>();
    const hooked: string[] = [];
    const consumer = new Consumer<{ obey: boolean }>(
      IoredisTransport.connect(inject('redisUrl')),
      queue.name,
      async (job, { signal }) => {
        started.push(job.id);
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted.set(job.id, { reason: signal.reason, at: performance.now() });
        if (job.payload.obey) throw signal.reason;
        // ignores it: returns a result anyway, which is not recorded as a completion
        return 'finished anyway';
      },
      // one slot and a prefetch: the third job waits in hand; renewals far apart, so only the channel can tell in time
      { concurrency: 2, prefetch: 1, ownsTransport: true, beatMs: 10_000, leaseMs: 60_000, hooks: { onCancelled: (job) => hooked.push(job.id) } },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    const obeys = await queue.add({ obey: true });
    const ignores = await queue.add({ obey: false });
    const waits = await queue.add({ obey: true });
    await until(() => started.length === 2 && consumer.inFlight === 3, 5_000);
    const sentAt = performance.now();
    // the prefetched one first: a slot freed by a cancelled run would start it
    expect(await queue.cancel(waits.id, { reason: 'user left' })).toEqual({ id: waits.id, state: 'cancelling' });
    expect(await queue.cancel(obeys.id, { reason: 'user left' })).toEqual({ id: obeys.id, state: 'cancelling' });
    expect(await queue.cancel(ignores.id, { reason: 'user left' })).toEqual({ id: ignores.id, state: 'cancelling' });
    await until(async () => (await Promise.all([obeys.id, ignores.id, waits.id].map((id) => queue.getJob(id)))).every((j) => j?.state === 'cancelled'), 5_000);
    for (const id of [obeys.id, ignores.id]) {
      const seen = aborted.get(id)!;
      expect(seen.reason).toBeInstanceOf(JobCancelledError);
      expect((seen.reason as JobCancelledError).reason).toBe('user left');
      // heard on the channel: well inside the 10 s between renewals
      expect(seen.at - sentAt).toBeLessThan(1_000);
    }
    // the prefetched job was given back, cancelled, never started
    expect(started).toEqual([obeys.id, ignores.id]);
    expect((await queue.getJob(ignores.id))!.result).toBeUndefined();
    expect((await queue.stats()).counts).toMatchObject({ cancelled: 3, completed: 0, dead: 0, active: 0, pending: 0 });
    await until(() => hooked.length === 3, 2_000);
    expect(hooked.sort()).toEqual([obeys.id, ignores.id, waits.id].sort());
    // the consumer goes on: a new job runs
    const next = await queue.add({ obey: true });
    await until(() => started.includes(next.id), 5_000);
    await queue.cancel(next.id);
    await until(async () => (await queue.getJob(next.id))?.state === 'cancelled', 5_000);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('hears the cancel of a partition of a partitioned queue on the same subscriber', async () => {
    const transport = IoredisTransport.connect(inject('redisUrl'));
    const name = `cancel-parts-${Date.now().toString(36)}`;
    const queue = new PartitionedQueue<number>(redis.transport, name, { partitions: 3 });
    const reasons: unknown[] = [];
    const consumer = new Consumer<number>(
      transport,
      queue,
      async (_job, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        reasons.push(signal.reason);
        throw signal.reason;
      },
      { concurrency: 3, ownsTransport: true, beatMs: 10_000, leaseMs: 60_000 },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    try {
      const jobs = await Promise.all([0, 1, 2].map((i) => queue.add(i, { group: `g${i}` })));
      await until(() => consumer.inFlight === 3, 5_000);
      await sleep(50);
      for (const job of jobs) expect((await queue.cancel(job.id)).state).toBe('cancelling');
      await until(() => reasons.length === 3, 2_000);
      expect(reasons.every((r) => r instanceof JobCancelledError)).toBe(true);
      await until(async () => (await queue.stats()).counts.cancelled === 3, 5_000);
      expect(await checkPartitionedQueue(redis.raw, name)).toEqual([]);
    } finally {
      await consumer.stop(2_000);
      await queue.obliterate({ force: true });
    }
  });
});
