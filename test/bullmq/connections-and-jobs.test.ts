/**
 * The layer on a connection of the caller's, and the Job's methods and the Worker's controls
 * BullMQ's tests lean on: Job.create / fromId, waitUntilFinished's rejection, retry, updateData,
 * the limiter, rateLimit with RateLimitError, drained.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Job, Queue, QueueEvents, Worker } from '../../src/bullmq/index.js';
import { until, useBullRedis } from './fixture.js';

describe('the BullMQ layer, jobs and workers', () => {
  const redis = useBullRedis();
  const { connection } = redis;

  it('runs on an ioredis connection of the caller, shared by every object, and leaves it open on close', async () => {
    const shared = new Redis({ ...connection, maxRetriesPerRequest: null });
    try {
      const name = redis.name();
      const queue = new Queue(name, { connection: shared });
      const events = new QueueEvents(name, { connection: shared });
      const worker = new Worker(name, async (job: Job) => job.data.n + 1, { connection: shared, concurrency: 2 });
      await events.waitUntilReady();
      const jobs = await Promise.all([1, 2, 3].map((n) => queue.add('inc', { n })));
      expect(await Promise.all(jobs.map((j) => j.waitUntilFinished(events, 5_000)))).toEqual([2, 3, 4]);
      await worker.close();
      await events.close();
      await queue.close();
      expect(shared.status).toBe('ready');
      expect(await shared.ping()).toBe('PONG');
    } finally {
      shared.disconnect();
    }
  });

  it('Job.create and Job.fromId; waitUntilFinished rejects with the failedReason; retry runs a failed job again', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const events = redis.track(new QueueEvents(name, { connection }));
    await events.waitUntilReady();
    const created = await Job.create(queue, 'made', { ok: false }, { timestamp: 1_000 });
    const read = await Job.fromId(queue, created.id!);
    expect(read).toMatchObject({ id: '1', name: 'made', data: { ok: false }, timestamp: 1_000, attemptsMade: 0, progress: 0, returnvalue: null });
    expect(await Job.fromId(queue, '404')).toBeUndefined();
    await read!.updateData({ ok: true, later: false });
    await queue.getJob('1').then((j) => j!.updateData({ ok: false }));

    const worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          if (!job.data.ok) throw new Error('not ok');
          return 'ok';
        },
        { connection },
      ),
    );
    await expect(created.waitUntilFinished(events, 5_000)).rejects.toThrow('not ok');
    expect(await created.isFailed()).toBe(true);
    await worker.pause();
    await created.retry();
    expect(await created.getState()).toBe('waiting');
    await (await queue.getJob('1'))!.updateData({ ok: true });
    worker.resume();
    expect(await created.waitUntilFinished(events, 5_000)).toBe('ok');
    expect(await created.isCompleted()).toBe(true);
  });

  it('a waitUntilFinished with a ttl times out with BullMQ\'s message', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const events = redis.track(new QueueEvents(name, { connection }));
    const job = await queue.add('slow', {});
    await expect(job.waitUntilFinished(events, 100)).rejects.toThrow(/timed out before finishing/);
  });

  it('limiter: at most max starts in any duration, queue-wide', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const starts: number[] = [];
    redis.track(new Worker(name, async () => void starts.push(Date.now()), { connection, concurrency: 10, limiter: { max: 2, duration: 400 } }));
    await queue.addBulk([1, 2, 3, 4, 5].map((n) => ({ name: 'r', data: n })));
    await until(() => starts.length === 5, 5_000);
    for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(390);
    expect(await queue.getGlobalRateLimit()).toEqual({ max: 2, duration: 400 });
  });

  it('rateLimit then RateLimitError gives the job back unspent and holds the queue', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const runs: number[] = [];
    const worker: Worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          runs.push(Date.now());
          if (runs.length === 1) {
            await worker.rateLimit(300);
            throw Worker.RateLimitError();
          }
          return job.attemptsMade;
        },
        { connection },
      ),
    );
    const done: unknown[] = [];
    worker.on('completed', (_job, result) => done.push(result));
    await queue.add('r', {});
    await until(() => done.length === 1, 5_000);
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(290);
    expect(await queue.getRateLimitTtl()).toBe(-2);
    await queue.rateLimit(1_000);
    expect(await queue.getRateLimitTtl()).toBeGreaterThan(800);
    expect((await queue.getJob('1'))?.attemptsMade).toBe(1);
  });

  it('drained: the worker says so once the queue has nothing left to run', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const worker = redis.track(new Worker(name, async () => 'x', { connection, concurrency: 2 }));
    let drained = 0;
    worker.on('drained', () => (drained += 1));
    await queue.addBulk([1, 2, 3].map((n) => ({ name: 'd', data: n })));
    await until(() => drained >= 1);
    expect(await queue.getCompletedCount()).toBe(3);
  });
});

describe('the BullMQ layer, listings', () => {
  const redis = useBullRedis();

  it("getJobs lists in BullMQ's orders: asc oldest first, newest first without; undefined data reads back", async () => {
    const queue = redis.track(new Queue(redis.name(), { connection: redis.connection }));
    await queue.addBulk([1, 2, 3].map((n) => ({ name: `w${n}`, data: n })));
    await queue.add('empty', undefined);
    expect((await queue.getJobs(['waiting'], 0, -1, true)).map((j) => j.id)).toEqual(['1', '2', '3', '4']);
    expect((await queue.getJobs(['waiting'])).map((j) => j.id)).toEqual(['4', '3', '2', '1']);
    expect((await queue.getWaiting(0, 1)).map((j) => j.id)).toEqual(['1', '2']);
    const empty = await queue.getJob('4');
    expect(empty).toMatchObject({ name: 'empty', data: undefined });
  });
});

describe('the BullMQ layer, closing', () => {
  const redis = useBullRedis();

  it('closes a Worker and a QueueEvents that never ran, and an active job is not removed', async () => {
    const name = redis.name();
    const worker = new Worker(name, async () => 1, { connection: redis.connection, autorun: false });
    const events = new QueueEvents(name, { connection: redis.connection, autorun: false });
    await worker.close();
    await events.close();
    expect(worker.isRunning()).toBe(false);

    const queue = redis.track(new Queue(name, { connection: redis.connection }));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    redis.track(new Worker(name, async () => held, { connection: redis.connection }));
    const job = await queue.add('held', {});
    await until(async () => (await job.getState()) === 'active');
    await expect(job.remove()).rejects.toThrow('could not be removed because it is locked by another worker');
    expect(await queue.remove(job.id!)).toBe(0);
    release();
    await until(async () => (await job.getState()) === 'completed');
    await job.remove();
    expect(await job.getState()).toBe('unknown');
  });
});
