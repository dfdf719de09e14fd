/**
 * The layer where it keeps BullMQ's semantics over echomq's defaults: a failed flow child leaves its
 * parent waiting (echomq's `onFailure: 'wait'`), a parent failed by its child names the child's
 * BullMQ key, queue.getDependencies pages a parent's children, and a Worker checks its options with
 * BullMQ's messages and takes a new concurrency (docs/guides/bullmq.md, "Differences").
 */
import { describe, expect, it } from 'vitest';
import { FlowProducer, Queue, QueueEvents, Worker, type Job } from '../../src/bullmq/index.js';
import { until, useBullRedis } from './fixture.js';

describe('the BullMQ layer: flows and workers as BullMQ has them', () => {
  const redis = useBullRedis();
  const connection = redis.connection;

  it('a child that fails with no flag leaves its parent in waiting-children; retried, it completes and the parent runs', async () => {
    const parentName = redis.name();
    const childName = redis.name();
    const flows = redis.track(new FlowProducer({ connection }));
    const parents = redis.track(new Queue(parentName, { connection }));
    const children = redis.track(new Queue(childName, { connection }));
    const { job, children: kids } = await flows.add({
      name: 'sum',
      queueName: parentName,
      children: [{ name: 'flaky', queueName: childName, data: { n: 1 } }],
    });
    let failOnce = true;
    redis.track(
      new Worker(
        childName,
        async (j: Job) => {
          if (failOnce) {
            failOnce = false;
            throw new Error('not yet');
          }
          return j.data.n;
        },
        { connection },
      ),
    );
    const ran: string[] = [];
    redis.track(new Worker(parentName, async (j: Job) => void ran.push(j.id!), { connection }));
    const child = kids![0]!.job;
    await until(async () => (await child.getState()) === 'failed');
    // BullMQ's parent neither fails nor runs: it waits for its child to be retried
    expect(await job.getState()).toBe('waiting-children');
    expect(await parents.getJobCounts('failed', 'waiting-children')).toEqual({ failed: 0, 'waiting-children': 1 });
    expect(await children.getFailedCount()).toBe(1);
    expect(ran).toEqual([]);
    await (await children.getJob(child.id!))!.retry();
    const events = redis.track(new QueueEvents(parentName, { connection }));
    await events.waitUntilReady();
    await job.waitUntilFinished(events, 10_000);
    expect(ran).toEqual([job.id]);
    expect(await job.getState()).toBe('completed');
  });

  it('a parent failed by its child (failParentOnFailure) says which, by its BullMQ key', async () => {
    const parentName = redis.name();
    const childName = redis.name();
    const flows = redis.track(new FlowProducer({ connection }));
    const parents = redis.track(new Queue(parentName, { connection }));
    const { job, children } = await flows.add({
      name: 'p',
      queueName: parentName,
      children: [{ name: 'c', queueName: childName, opts: { failParentOnFailure: true } }],
    });
    redis.track(
      new Worker(
        childName,
        async () => {
          throw new Error('boom');
        },
        { connection },
      ),
    );
    await until(async () => (await job.getState()) === 'failed');
    expect((await parents.getJob(job.id!))!.failedReason).toBe(`child bull:${childName}:${children![0]!.job.id} failed`);
  });

  it('queue.getDependencies pages pending and processed children with their jobs', async () => {
    const name = redis.name();
    const flows = redis.track(new FlowProducer({ connection }));
    const queue = redis.track(new Queue(name, { connection }));
    const { job } = await flows.add({
      name: 'p',
      queueName: name,
      children: [1, 2, 3].map((n) => ({ name: `c${n}`, queueName: name, data: { n } })),
    });
    const pending = await queue.getDependencies(job.id!, 'pending', 0, 1);
    expect(pending.total).toBe(3);
    expect(pending.items).toHaveLength(2);
    expect(pending.items[0]!.id).toMatch(new RegExp(`^bull:${name}:`));
    expect(pending.jobs.map((j) => j.name)).toEqual(['c1', 'c2']);
    expect(pending.jobs[0]).toMatchObject({ parentKey: `bull:${name}:${job.id}`, parent: { id: job.id } });
    redis.track(new Worker(name, async (j: Job) => (j.data as { n?: number }).n ?? 0, { connection }));
    await until(async () => (await queue.getDependencies(job.id!, 'processed', 0, -1)).total === 3);
    const processed = await queue.getDependencies(job.id!, 'processed', 0, -1);
    expect(processed.items.map((i) => i.v).sort()).toEqual([1, 2, 3]);
    expect((await queue.getDependencies(job.id!, 'pending', 0, -1)).total).toBe(0);
  });

  it("checks a Worker's options with BullMQ's messages, before opening anything", () => {
    const name = redis.name();
    const noop = async (): Promise<void> => {};
    expect(() => new Worker(name, noop, { connection, concurrency: 0 })).toThrow('concurrency must be a finite number greater than 0');
    expect(() => new Worker(name, noop, { connection, concurrency: Number.NaN })).toThrow('concurrency must be a finite number greater than 0');
    expect(() => new Worker(name, noop, { connection, maxStalledCount: -1 })).toThrow('maxStalledCount must be greater or equal than 0');
    expect(() => new Worker(name, noop, { connection, maxStartedAttempts: -1 })).toThrow('maxStartedAttempts must be greater or equal than 0');
    expect(() => new Worker(name, noop, { connection, stalledInterval: 0 })).toThrow('stalledInterval must be greater than 0');
    expect(() => new Worker(name, noop, { connection, drainDelay: 0 })).toThrow('drainDelay must be greater than 0');
  });

  it('a new concurrency takes effect at once, and never runs more at once than it allows', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    let running = 0;
    const peaks: number[] = [];
    let phase = 0;
    const worker = redis.track(
      new Worker(
        name,
        async () => {
          running++;
          peaks[phase] = Math.max(peaks[phase] ?? 0, running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
        },
        { connection, concurrency: 1, name: 'w1' },
      ),
    );
    let done = 0;
    worker.on('completed', (job: Job) => {
      done++;
      expect(job.processedBy).toBe('w1');
    });
    await queue.addBulk(Array.from({ length: 4 }, (_, i) => ({ name: 'a', data: { i } })));
    await until(() => done === 4);
    phase = 1;
    worker.concurrency = 3;
    expect(worker.concurrency).toBe(3);
    await queue.addBulk(Array.from({ length: 9 }, (_, i) => ({ name: 'b', data: { i } })));
    await until(() => done === 13);
    expect(peaks[0]).toBe(1);
    expect(peaks[1]).toBeGreaterThan(1);
    expect(peaks[1]).toBeLessThanOrEqual(3);
    expect(() => (worker.concurrency = 0)).toThrow('concurrency must be a finite number greater than 0');
  });
});
