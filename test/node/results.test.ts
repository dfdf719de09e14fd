import { afterEach, describe, expect, inject, it } from 'vitest';
import type { HandlerContext } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { BatchConsumer, type BatchHandler, type BatchOutcome, Consumer, type ConsumerOptions, LeaseLostError } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, sleep, until, useRedis } from '../helpers.js';

/** What the parked consumers do with a handler's resolved value (its result) and its progress reports. */
describe('results and progress on the Node consumers', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const running: Array<{ stop(ms?: number): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  function consume<P>(queue: Queue<P>, handler: (job: Job<P>, context: HandlerContext) => unknown, options: ConsumerOptions<P> = {}): Consumer<P> {
    const consumer = new Consumer<P>(IoredisTransport.connect(url), queue, handler, { beatMs: 10_000, ...options, ownsTransport: true });
    running.push(consumer);
    return consumer.start();
  }

  function consumeBatches<P>(queue: Queue<P>, handler: BatchHandler<P>, batchSize: number): BatchConsumer<P> {
    const consumer = new BatchConsumer<P>(IoredisTransport.connect(url), queue, handler, { batchSize, beatMs: 10_000, ownsTransport: true });
    running.push(consumer);
    return consumer.start();
  }

  it('a Consumer stores what its handler resolves with as the job’s result, and nothing for nothing', async () => {
    const queue = redis.queue<number>();
    const ids = (await queue.addBulk([1, 2, 3, 4].map((payload) => ({ payload })))).map((r) => r.id);
    consume(queue, async (job) => {
      if (job.payload === 1) return { doubled: 2, note: 'héllo ✓' };
      if (job.payload === 2) return 'two';
      if (job.payload === 3) return 0;
      return undefined;
    });
    await until(async () => (await queue.stats()).counts.completed === 4);
    const results = await Promise.all(ids.map(async (id) => (await queue.getJob(id))!.result));
    expect(results).toEqual([{ doubled: 2, note: 'héllo ✓' }, 'two', 0, undefined]);
    expect(await redis.raw.hexists(keysOf(queue).job(ids[3]!), 'r')).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a result over maxResultBytes or one JSON cannot carry fails the job for good, attempts left or not, saying why', async () => {
    const queue = redis.queue<string>({ maxResultBytes: 64 });
    const dead: string[] = [];
    const { id: big } = await queue.add('big', { maxAttempts: 5 });
    const { id: bigint } = await queue.add('bigint', { maxAttempts: 5 });
    const { id: fits } = await queue.add('fits', { maxAttempts: 5 });
    let runs = 0;
    consume(
      queue,
      async (job) => {
        runs++;
        if (job.payload === 'big') return 'x'.repeat(100);
        if (job.payload === 'bigint') return { id: 10n };
        return 'x'.repeat(62);
      },
      { hooks: { onDead: (job, { error }) => dead.push(`${job.id}: ${error}`) } },
    );
    await until(async () => (await queue.stats()).counts.dead === 2 && (await queue.stats()).counts.completed === 1);
    expect(runs).toBe(3);
    const tooLarge =
      "PayloadTooLargeError (EMQTOOLARGE): the handler's result is 102 bytes of JSON, over maxResultBytes (64); failed for good: running the job again would redo its work";
    expect(await queue.getJob(big)).toMatchObject({ state: 'dead', attempt: 1, error: tooLarge, result: undefined });
    expect(await queue.getJob(bigint)).toMatchObject({
      state: 'dead',
      attempt: 1,
      error: expect.stringMatching(/^PayloadError \(EMQPAYLOAD\): the handler's result is not JSON-serialisable: .*BigInt.*; failed for good/),
    });
    expect((await queue.getJob(fits))!.result).toBe('x'.repeat(62));
    expect(dead).toHaveLength(2);
    expect(dead).toContain(`${big}: ${tooLarge}`);
    expect(dead.find((line) => line.startsWith(bigint))).toContain(`${bigint}: PayloadError (EMQPAYLOAD)`);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("a consumer's own maxResultBytes takes the place of its queue's", async () => {
    const queue = redis.queue<number>();
    const { id } = await queue.add(1);
    consume(queue, () => 'x'.repeat(20), { maxResultBytes: 10 });
    await until(async () => (await queue.stats()).counts.dead === 1);
    expect((await queue.getJob(id))!.error).toContain('over maxResultBytes (10)');
  });

  it('context.progress writes while the job runs: getJob sees each report, the last one stays', async () => {
    const queue = redis.queue<number>();
    const { id } = await queue.add(1);
    const seen: unknown[] = [];
    let step!: () => void;
    const answers: boolean[] = [];
    consume(queue, async (_job, { progress }) => {
      for (const value of [10, { stage: 'resize', done: 0.5 }, 100]) {
        answers.push(await progress(value));
        await new Promise<void>((resolve) => (step = resolve));
      }
      return 'done';
    });
    for (let i = 0; i < 3; i++) {
      await until(() => answers.length === i + 1);
      seen.push((await queue.getJob(id))!.progress);
      step();
    }
    await until(async () => (await queue.stats()).counts.completed === 1);
    expect(answers).toEqual([true, true, true]);
    expect(seen).toEqual([10, { stage: 'resize', done: 0.5 }, 100]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'completed', result: 'done', progress: 100 });
  });

  it('a reaped holder’s progress writes nothing: it resolves false and the run is aborted as fenced', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const { id } = await queue.add(1, { maxAttempts: 5 });
    let go!: () => void;
    const answers: boolean[] = [];
    let reason: unknown;
    // a lease that is never renewed in time, so another holder can take the job over
    consume(
      queue,
      async (_job, { progress, signal }) => {
        answers.push(await progress(10));
        await new Promise<void>((resolve) => (go = resolve));
        answers.push(await progress(90));
        reason = signal.reason;
      },
      { leaseMs: 100, renewMs: 60_000, prefetch: 0 },
    );
    await until(() => answers.length === 1);
    await sleep(150);
    // reaped here, or by the consumer's own timer at the lease's end
    await leases(queue).reap();
    const [current] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(current!.id).toBe(id);
    await leases(queue).progress([current!], 42);
    go();
    await until(() => answers.length === 2);
    expect(answers).toEqual([true, false]);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(await redis.raw.hget(k.job(id), 'pg')).toBe('42');
    expect(await queue.getJob(id)).toMatchObject({ state: 'active', attempt: 2 });
  });

  it('a BatchConsumer gives one result per job with { completed: result }; its progress goes to every job of the batch', async () => {
    const queue = redis.queue<number>({ maxResultBytes: 32 });
    const ids = (await queue.addBulk([1, 2, 3, 4].map((payload) => ({ payload })))).map((r) => r.id);
    const answers: boolean[] = [];
    let batches = 0;
    consumeBatches(
      queue,
      async (jobs, { progress }) => {
        batches++;
        answers.push(await progress({ batchOf: jobs.length }));
        return jobs.map((job): BatchOutcome => {
          if (job.payload === 1) return { completed: { doubled: 2 } };
          if (job.payload === 2) return 'completed';
          if (job.payload === 3) return { completed: 'x'.repeat(40) };
          return { completed: undefined };
        });
      },
      4,
    );
    await until(async () => {
      const { counts } = await queue.stats();
      return counts.completed === 3 && counts.dead === 1;
    });
    expect(batches).toBe(1);
    expect(answers).toEqual([true]);
    const records = await Promise.all(ids.map(async (id) => (await queue.getJob(id))!));
    expect(records.map((r) => [r.state, r.result, r.progress])).toEqual([
      ['completed', { doubled: 2 }, { batchOf: 4 }],
      ['completed', undefined, { batchOf: 4 }],
      ['dead', undefined, { batchOf: 4 }],
      ['completed', undefined, { batchOf: 4 }],
    ]);
    expect(records[2]!.error).toContain("PayloadTooLargeError (EMQTOOLARGE): the handler's result is 42 bytes of JSON, over maxResultBytes (32)");
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
