import { afterEach, describe, expect, inject, it } from 'vitest';
import { UnrecoverableError } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { BatchConsumer, type BatchHandler } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Queue } from '../../src/queue.js';
import { until, useRedis } from '../helpers.js';


describe('the batch consumer', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const running: Array<BatchConsumer<never>> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  function consume<P>(queue: Queue<P>, handler: BatchHandler<P>, batchSize: number): BatchConsumer<P> {
    const consumer = new BatchConsumer<P>(IoredisTransport.connect(url), queue.name, handler, { batchSize, beatMs: 10_000 });
    running.push(consumer as unknown as BatchConsumer<never>);
    return consumer.start();
  }

  it('hands up to batchSize jobs to one call', async () => {
    const queue = redis.queue<number>();
    const sizes: number[] = [];
    await queue.addBulk(Array.from({ length: 23 }, (_, i) => ({ payload: i })));
    consume(queue, (jobs) => {
      sizes.push(jobs.length);
    }, 10);
    await until(async () => (await queue.stats()).counts.completed === 23);
    expect(Math.max(...sizes)).toBe(10);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(23);
  });

  it('settles each job on its own from the entries the handler returns', async () => {
    const queue = redis.queue<string>();
    const ids = (await queue.addBulk(['ok', 'retry', 'dead'].map((payload) => ({ payload, maxAttempts: 2, backoff: 60_000 })))).map(
      (r) => r.id,
    );
    const seen: Array<Job<string>> = [];
    consume(queue, (jobs) => {
      seen.push(...jobs);
      return jobs.map((j) => (j.payload === 'ok' ? undefined : j.payload === 'retry' ? new Error('later') : new UnrecoverableError('never')));
    }, 5);
    await until(async () => (await queue.stats()).counts.dead === 1);
    expect(await queue.getJob(ids[0]!)).toMatchObject({ state: 'completed' });
    expect(await queue.getJob(ids[1]!)).toMatchObject({ state: 'scheduled', error: expect.stringMatching(/^Error: later/) });
    expect(await queue.getJob(ids[2]!)).toMatchObject({ state: 'dead', error: expect.stringMatching(/^UnrecoverableError: never/) });
    expect(seen).toHaveLength(3);
  });

  it('retries the whole batch when the handler throws, and keeps going', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload, backoff: 0 })));
    let calls = 0;
    consume(queue, () => {
      calls++;
      if (calls === 1) throw new Error('the database is down');
    }, 10);
    await until(async () => (await queue.stats()).counts.completed === 3);
    const records = await Promise.all(['JOB:1', 'JOB:2', 'JOB:3'].map((id) => queue.getJob(id)));
    expect(records.map((r) => r?.attempt)).toEqual([2, 2, 2]);
  });
});
