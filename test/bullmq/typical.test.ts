/**
 * A typical BullMQ producer and worker, written as a BullMQ user writes them, with only the import
 * swapped: they run unchanged on echomq (issue 36's "done when").
 */
import { describe, expect, it } from 'vitest';
import { Queue, QueueEvents, Worker, type Job } from '../../src/bullmq/index.js';
import { useBullRedis } from './fixture.js';

describe('a typical BullMQ producer and worker, import swapped', () => {
  const redis = useBullRedis();

  it('adds jobs with attempts, backoff, delay, priority and jobId; a worker with concurrency runs them; QueueEvents and waitUntilFinished see them finish; counts add up', async () => {
    const connection = redis.connection;
    const queueName = redis.name();

    // ---- the user's code, as written for BullMQ ----
    const queue = redis.track(new Queue(queueName, { connection, defaultJobOptions: { removeOnFail: false } }));
    const queueEvents = redis.track(new QueueEvents(queueName, { connection }));
    await queueEvents.waitUntilReady();

    const seen: string[] = [];
    const failures: Array<{ id: string | undefined; attemptsMade: number; message: string }> = [];
    let running = 0;
    let maxRunning = 0;
    const worker = redis.track(
      new Worker(
        queueName,
        async (job: Job) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          try {
            await new Promise((r) => setTimeout(r, 30));
            if (job.name === 'flaky' && job.attemptsMade < 2) throw new Error(`flaky ${job.attemptsMade}`);
            await job.updateProgress(100);
            seen.push(job.name);
            return { doubled: job.data.n * 2 };
          } finally {
            running -= 1;
          }
        },
        { connection, concurrency: 3 },
      ),
    );
    const completed: Array<{ id: string | undefined; result: unknown }> = [];
    worker.on('completed', (job, result) => completed.push({ id: job.id, result }));
    worker.on('failed', (job, err) => failures.push({ id: job?.id, attemptsMade: job?.attemptsMade ?? -1, message: err.message }));
    await worker.waitUntilReady();

    const eventsCompleted: Array<{ jobId: string; returnvalue: unknown }> = [];
    queueEvents.on('completed', ({ jobId, returnvalue }) => eventsCompleted.push({ jobId, returnvalue }));

    const plain = await queue.add('plain', { n: 1 });
    const named = await queue.add('named', { n: 2 }, { jobId: 'order-42', priority: 1 });
    const later = await queue.add('later', { n: 3 }, { delay: 300 });
    const flaky = await queue.add('flaky', { n: 4 }, { attempts: 3, backoff: { type: 'fixed', delay: 50 } });
    const bulk = await queue.addBulk([
      { name: 'b1', data: { n: 5 } },
      { name: 'b2', data: { n: 6 } },
      { name: 'b3', data: { n: 7 } },
    ]);

    expect(plain.id).toBe('1');
    expect(named.id).toBe('order-42');
    expect(['waiting', 'delayed', 'active', 'prioritized', 'completed']).toContain(await later.getState());

    const results = await Promise.all([plain, named, later, flaky, ...bulk].map((job) => job.waitUntilFinished(queueEvents, 10_000)));
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ({ doubled: n * 2 })));
    // ---- end of the user's code ----

    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(maxRunning).toBeGreaterThan(1);
    expect(seen.sort()).toEqual(['b1', 'b2', 'b3', 'flaky', 'later', 'named', 'plain']);
    // BullMQ's worker emits `failed` for each failed attempt
    expect(failures).toEqual([
      { id: flaky.id, attemptsMade: 1, message: 'flaky 0' },
      { id: flaky.id, attemptsMade: 2, message: 'flaky 1' },
    ]);
    await expect.poll(() => completed.length).toBe(7);
    expect(completed.find((c) => c.id === 'order-42')?.result).toEqual({ doubled: 4 });
    await expect.poll(() => eventsCompleted.length).toBe(7);
    expect(eventsCompleted.find((e) => e.jobId === '1')?.returnvalue).toEqual({ doubled: 2 });

    const done = await queue.getJob(flaky.id!);
    expect(done).toMatchObject({ id: flaky.id, name: 'flaky', data: { n: 4 }, attemptsMade: 3, returnvalue: { doubled: 8 }, progress: 100, failedReason: 'flaky 1' });
    expect(done?.opts).toMatchObject({ attempts: 3, backoff: { type: 'fixed', delay: 50 } });
    expect(done?.finishedOn).toBeGreaterThan(0);
    expect(await done?.getState()).toBe('completed');

    expect(await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed')).toEqual({ waiting: 0, active: 0, completed: 7, failed: 0, delayed: 0 });
    expect(await queue.getJobCountByTypes('completed')).toBe(7);
    expect(await queue.count()).toBe(0);
  });
});
