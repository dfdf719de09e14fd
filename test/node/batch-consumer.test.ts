import { afterEach, describe, expect, inject, it } from 'vitest';
import { UnrecoverableError } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { BatchConsumer, type BatchHandler, type BatchOutcome } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, until, useRedis } from '../helpers.js';


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

  it('gives back the jobs of a batch still running when stop() runs out of time, uncounted', async () => {
    const queue = redis.queue<number>();
    const ids = (await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))).map((r) => r.id);
    let calls = 0;
    const consumer = consume(queue, () => {
      calls++;
      return new Promise<never>(() => {}); // ignores its signal
    }, 3);
    await until(() => calls === 1);
    await consumer.stop(100);
    for (const id of ids) expect(await queue.getJob(id)).toMatchObject({ state: 'pending', attempt: 0, attemptsStarted: 0 });
    expect((await queue.stats()).counts).toMatchObject({ pending: 3, active: 0 });
  });

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

  it('settles each job on its own from the outcome the handler returns for it', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const payloads = ['ok', 'retry', 'retry-soon', 'dead'];
    const ids = (await queue.addBulk(payloads.map((payload) => ({ payload, maxAttempts: 2, backoff: 60_000 })))).map((r) => r.id);
    const seen: Array<Job<string>> = [];
    const before = await redis.serverNow();
    consume(queue, (jobs) => {
      seen.push(...jobs);
      return jobs.map((j): BatchOutcome => {
        if (j.payload === 'ok') return 'completed';
        if (j.payload === 'retry') return { retry: new Error('later') };
        if (j.payload === 'retry-soon') return { retry: 'in 30 s', delayMs: 30_000 };
        return { fail: new UnrecoverableError('never') };
      });
    }, 5);
    await until(async () => (await queue.stats()).counts.dead === 1);
    expect(await queue.getJob(ids[0]!)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(await queue.getJob(ids[1]!)).toMatchObject({ state: 'scheduled', attempt: 1, error: expect.stringMatching(/^Error: later/) });
    // its own delay, not the job's backoff of a minute
    expect(await queue.getJob(ids[2]!)).toMatchObject({ state: 'scheduled', attempt: 1, error: 'in 30 s' });
    const due = Number(await redis.raw.zscore(k.key('scheduled'), ids[2]!));
    expect(due - before).toBeGreaterThanOrEqual(30_000);
    expect(due - before).toBeLessThan(35_000);
    expect(await queue.getJob(ids[3]!)).toMatchObject({ state: 'dead', attempt: 1, error: expect.stringMatching(/^UnrecoverableError: never/) });
    expect(seen.map((j) => j.payload)).toEqual(payloads);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('retries every job of a batch whose handler returned the wrong number of outcomes, naming both', async () => {
    const queue = redis.queue<number>();
    const ids = (await queue.addBulk([1, 2, 3].map((payload) => ({ payload, backoff: 60_000 })))).map((r) => r.id);
    const batches: number[] = [];
    consume(queue, (jobs) => {
      batches.push(jobs.length);
      // one short: before, the third job was completed though nobody spoke for it
      return jobs.slice(1).map(() => 'completed');
    }, 5);
    await until(async () => (await queue.stats()).counts.scheduled === 3);
    expect(batches).toEqual([3]);
    for (const id of ids) {
      expect(await queue.getJob(id)).toMatchObject({
        state: 'scheduled',
        attempt: 1,
        error: "InvalidArgumentError (EMQARG): the batch handler returned 2 outcomes for 3 jobs: return one per job, in order ('completed', {completed: result}, {retry: error, delayMs?} or {fail: error}), or nothing to complete them all",
      });
    }
    expect((await queue.stats()).counts).toMatchObject({ completed: 0, pending: 0, active: 0, dead: 0 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('retries only the job whose entry is no outcome, saying which', async () => {
    const queue = redis.queue<number>();
    const ids = (await queue.addBulk([1, 2, 3].map((payload) => ({ payload, backoff: 60_000 })))).map((r) => r.id);
    // a JavaScript caller of the earlier untyped form: undefined completed a job, an Error failed it
    const old = ((jobs: ReadonlyArray<Job<number>>) => jobs.map((j) => (j.payload === 2 ? undefined : 'completed'))) as unknown as BatchHandler<number>;
    consume(queue, old, 5);
    await until(async () => (await queue.stats()).counts.scheduled === 1);
    expect(await queue.getJob(ids[0]!)).toMatchObject({ state: 'completed' });
    expect(await queue.getJob(ids[1]!)).toMatchObject({
      state: 'scheduled',
      error: "InvalidArgumentError (EMQARG): outcome 1 of 3 is undefined, not 'completed', {completed: result}, {retry: error, delayMs?} or {fail: error}",
    });
    expect(await queue.getJob(ids[2]!)).toMatchObject({ state: 'completed' });
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
