/**
 * Each BullMQ mapping of the layer on its own, against Redis: state names, ids, count keys,
 * failures per attempt, retention, clean / drain / obliterate, QueueEvents' payloads, flows,
 * schedulers, prefixes, and what throws (writing nothing).
 */
import { describe, expect, it } from 'vitest';
import { FlowProducer, Queue, QueueEvents, UnrecoverableError, UnsupportedBullMQError, Worker, type Job } from '../../src/bullmq/index.js';
import { until, useBullRedis } from './fixture.js';

describe('the BullMQ layer', () => {
  const redis = useBullRedis();
  const { connection } = redis;
  const keysOf = async (name: string): Promise<string[]> => redis.raw.keys(`emq:{*${name}}:*`);

  it('answers BullMQ ids and state names: waiting, prioritized, delayed, active, completed, failed, unknown', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const a = await queue.add('a', 1);
    const b = await queue.add('b', 2, { priority: 5 });
    const c = await queue.add('c', 3, { delay: 60_000 });
    expect([a.id, b.id, c.id]).toEqual(['1', '2', '3']);
    expect(await a.getState()).toBe('waiting');
    expect(await b.getState()).toBe('prioritized');
    expect(await queue.getJobState('3')).toBe('delayed');
    expect(await queue.getJobState('nope')).toBe('unknown');
    expect(await queue.getJob('nope')).toBeUndefined();
    expect(await queue.getJobCounts()).toEqual({ active: 0, completed: 0, delayed: 1, failed: 0, prioritized: 1, waiting: 1, 'waiting-children': 0 });
    expect(await queue.getJobCountByTypes('waiting', 'prioritized', 'delayed')).toBe(3);
    expect(await queue.count()).toBe(3);
    expect((await queue.getJobs(['waiting', 'prioritized'])).map((j) => j.name).sort()).toEqual(['a', 'b']);
    expect((await queue.getDelayed()).map((j) => j.id)).toEqual(['3']);
    // the same jobId again is the same job, nothing written
    const first = await queue.add('x1', 8, { jobId: 'x' });
    const again = await queue.add('x2', 9, { jobId: 'x' });
    expect([first.id, again.id]).toEqual(['x', 'x']);
    expect((await queue.getJob('x'))?.data).toBe(8);
    await queue.remove('x');
    // BullMQ's own checks, with its messages, before any write
    await expect(queue.add('n', 1, { jobId: '7' })).rejects.toThrow('Custom Id cannot be integers');
    await expect(queue.add('n', 1, { priority: 1.5 })).rejects.toThrow('Priority should not be float');
    // an empty jobId is ignored: the job is numbered (echomq's sequence counts every add, custom ids too)
    const numbered = await queue.add('n', 1, { jobId: '' });
    expect(numbered.id).toMatch(/^\d+$/);
    expect(Number(numbered.id)).toBeGreaterThan(3);
    await queue.remove(numbered.id!);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          if (job.name === 'a') await gate;
          if (job.name === 'b') throw new UnrecoverableError('no way');
          return job.data;
        },
        { connection },
      ),
    );
    await until(async () => (await queue.getJobState('1')) === 'active');
    expect(await queue.getActiveCount()).toBe(1);
    release();
    await until(async () => (await queue.getJobState('2')) === 'failed');
    expect(await queue.getJobState('1')).toBe('completed');
    const failed = await queue.getJob('2');
    expect(failed).toMatchObject({ failedReason: 'no way', attemptsMade: 1 });
    expect(failed?.stacktrace[0]).toContain('no way');
    expect(await queue.getFailedCount()).toBe(1);
    expect(await queue.getCompletedCount()).toBe(1);
    await worker.close();
  });

  it('defaults to one attempt (BullMQ), emits failed once per failed attempt, and UnrecoverableError skips the attempts left', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const failed: Array<[string | undefined, number, string]> = [];
    const worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          if (job.name === 'unrecoverable') throw new UnrecoverableError('stop');
          throw new Error(`boom ${job.attemptsMade}`);
        },
        { connection },
      ),
    );
    worker.on('failed', (job, err) => failed.push([job?.id, job?.attemptsMade ?? -1, err.message]));
    await queue.add('once', {});
    await queue.add('thrice', {}, { attempts: 3, backoff: { type: 'exponential', delay: 10 } });
    await queue.add('unrecoverable', {}, { attempts: 5 });
    await until(() => failed.length === 5);
    expect(failed.filter(([id]) => id === '1')).toEqual([['1', 1, 'boom 0']]);
    expect(failed.filter(([id]) => id === '2')).toEqual([
      ['2', 1, 'boom 0'],
      ['2', 2, 'boom 1'],
      ['2', 3, 'boom 2'],
    ]);
    expect(failed.filter(([id]) => id === '3')).toEqual([['3', 1, 'stop']]);
    expect(await queue.getJobCounts('failed')).toEqual({ failed: 3 });
    // the stored backoff is BullMQ's: exponential with no jitter, never capped at an hour
    const row = await redis.raw.hgetall(`emq:{${name}}:job:JOB:2`);
    expect(JSON.stringify(row)).toContain('e,10,9007199254740991,0');
  });

  it("QueueEvents speaks BullMQ's names and payloads, each with its stream id", async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const events = redis.track(new QueueEvents(name, { connection }));
    await events.waitUntilReady();
    const heard: Array<[string, Record<string, unknown>]> = [];
    for (const e of ['added', 'waiting', 'delayed', 'active', 'progress', 'completed', 'failed', 'retries-exhausted', 'removed']) {
      events.on(e, (args: Record<string, unknown>, id: string) => {
        expect(id).toMatch(/^\d+-\d+$/);
        heard.push([e, args]);
      });
    }
    await queue.add('ok', { x: 1 });
    await queue.add('bad', {}, { attempts: 2 });
    await queue.add('later', {}, { delay: 60_000 });
    const worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          await job.updateProgress({ step: 1 });
          if (job.name === 'bad') throw new Error('nope');
          return 'fine';
        },
        { connection },
      ),
    );
    await until(() => heard.some(([e]) => e === 'failed'));
    await worker.close();
    expect(await queue.remove('3')).toBe(1);
    await until(() => heard.some(([e]) => e === 'removed'));
    expect(heard).toContainEqual(['added', { jobId: '1', name: 'ok' }]);
    expect(heard).toContainEqual(['waiting', { jobId: '1' }]);
    expect(heard).toContainEqual(['delayed', expect.objectContaining({ jobId: '3', delay: expect.any(Number) })]);
    expect(heard).toContainEqual(['active', { jobId: '1', prev: 'waiting' }]);
    expect(heard).toContainEqual(['progress', { jobId: '1', data: { step: 1 } }]);
    expect(heard).toContainEqual(['completed', { jobId: '1', returnvalue: 'fine', prev: 'active' }]);
    expect(heard).toContainEqual(['retries-exhausted', { jobId: '2', attemptsMade: '2' }]);
    expect(heard).toContainEqual(['failed', { jobId: '2', failedReason: 'nope', prev: 'active' }]);
    // a failed attempt with attempts left is not BullMQ's `failed` on QueueEvents: only the last
    expect(heard.filter(([e]) => e === 'failed')).toHaveLength(1);
    expect(heard).toContainEqual(['removed', { jobId: '3', prev: 'unknown' }]);
  });

  it('removeOnComplete and removeOnFail: true deletes, a count keeps the newest', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const worker = redis.track(
      new Worker(
        name,
        async (job: Job) => {
          if (job.data.fail) throw new Error('x');
          return 1;
        },
        { connection, autorun: false, removeOnComplete: 2 },
      ),
    );
    const done: string[] = [];
    worker.on('completed', (job) => done.push(job.id!));
    worker.on('failed', (job) => done.push(job!.id!));
    await queue.addBulk([1, 2, 3, 4].map((n) => ({ name: `c${n}`, data: {} })));
    await queue.add('gone', {}, { removeOnComplete: true });
    await queue.add('f', { fail: true }, { removeOnFail: true });
    await queue.add('kept', { fail: true });
    void worker.run();
    await until(() => done.length === 7);
    expect(await queue.getJob('5')).toBeUndefined();
    expect(await queue.getJob('6')).toBeUndefined();
    expect(await queue.getJobState('7')).toBe('failed');
    expect((await queue.getCompleted()).length).toBe(2);
  });

  it('clean, drain (delayed kept unless asked) and obliterate', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    await queue.add('w1', {});
    await queue.add('w2', {}, { priority: 3 });
    await queue.add('d', {}, { delay: 60_000 });
    await queue.drain();
    expect(await queue.getJobCounts('waiting', 'prioritized', 'delayed')).toEqual({ waiting: 0, prioritized: 0, delayed: 1 });
    await queue.drain(true);
    expect(await queue.getDelayedCount()).toBe(0);

    const worker = redis.track(new Worker(name, async (job: Job) => { if (job.name === 'bad') throw new Error('bad'); }, { connection }));
    await queue.addBulk([{ name: 'ok', data: {} }, { name: 'ok', data: {} }, { name: 'bad', data: {} }]);
    await until(async () => (await queue.getJobCountByTypes('completed', 'failed')) === 3);
    expect(await queue.clean(0, 0, 'failed')).toHaveLength(1);
    expect((await queue.clean(0, 1)).length).toBe(1);
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 1, failed: 0 });
    await worker.close();
    await queue.add('w', {});
    await queue.obliterate();
    // echomq leaves its request records (emq:{q}:req:*) to expire on their own (lua/obliterate.lua)
    expect((await keysOf(name)).filter((k) => !k.includes('}:req:'))).toEqual([]);
  });

  it('a Worker made with autorun false waits for run(); pause and resume; close resolves run()', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const worker = redis.track(new Worker(name, async () => 'x', { connection, autorun: false }));
    await queue.add('a', {});
    await new Promise((r) => setTimeout(r, 100));
    expect(await queue.getWaitingCount()).toBe(1);
    expect(worker.isRunning()).toBe(false);
    const running = worker.run();
    await until(async () => (await queue.getCompletedCount()) === 1);
    expect(worker.isRunning()).toBe(true);
    await expect(worker.run()).rejects.toThrow('Worker is already running.');
    await worker.pause();
    expect(worker.isPaused()).toBe(true);
    await queue.add('b', {});
    await new Promise((r) => setTimeout(r, 100));
    expect(await queue.getWaitingCount()).toBe(1);
    worker.resume();
    await until(async () => (await queue.getCompletedCount()) === 2);
    await worker.close();
    await running;
    expect(worker.isRunning()).toBe(false);
  });

  it('a flow: the parent waits-children, runs after them, and reads their values keyed as BullMQ keys them', async () => {
    const parentName = redis.name();
    const childName = redis.name();
    const flows = redis.track(new FlowProducer({ connection }));
    const parents = redis.track(new Queue(parentName, { connection }));
    const { job, children } = await flows.add({
      name: 'sum',
      queueName: parentName,
      children: [1, 2].map((n) => ({ name: 'n', queueName: childName, data: { n } })),
    });
    expect(children).toHaveLength(2);
    expect(children![0]!.job.parentKey).toBe(`bull:${parentName}:${job.id}`);
    expect(await job.getState()).toBe('waiting-children');
    expect(await parents.getWaitingChildrenCount()).toBe(1);
    let values: Record<string, unknown> = {};
    redis.track(new Worker(childName, async (j: Job) => j.data.n * 10, { connection }));
    redis.track(
      new Worker(
        parentName,
        async (j: Job) => {
          values = await j.getChildrenValues();
          return Object.values(values).reduce((a: number, b) => a + (b as number), 0);
        },
        { connection },
      ),
    );
    const events = redis.track(new QueueEvents(parentName, { connection }));
    await events.waitUntilReady();
    expect(await job.waitUntilFinished(events, 10_000)).toBe(30);
    expect(values).toEqual({ [`bull:${childName}:${children![0]!.job.id}`]: 10, [`bull:${childName}:${children![1]!.job.id}`]: 20 });
  });

  it('a scheduler fires its template on every interval; a prefix other than bull names another queue', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    await queue.upsertJobScheduler('tick', { every: 200 }, { name: 'tick', data: { t: 1 } });
    expect(await queue.getJobSchedulers()).toEqual([expect.objectContaining({ key: 'tick', name: 'tick', every: 200, template: { data: { t: 1 }, opts: {} } })]);
    const names: string[] = [];
    redis.track(new Worker(name, async (job: Job) => void names.push(job.name), { connection }));
    await until(() => names.length >= 2);
    expect(await queue.removeJobScheduler('tick')).toBe(true);

    const other = redis.track(new Queue(name, { connection, prefix: 'staging' }));
    await other.add('x', {});
    expect(await redis.raw.exists(`emq:{staging.${name}}:job:JOB:1`)).toBe(1);
    expect(other.qualifiedName).toBe(`staging:${name}`);
  });

  it('what echomq does not do throws UnsupportedBullMQError naming the echomq way, and writes nothing', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    await queue.waitUntilReady();
    const before = await keysOf(name);
    await expect(queue.add('x', {}, { lifo: true })).rejects.toBeInstanceOf(UnsupportedBullMQError);
    await expect(queue.add('x', {}, { backoff: { type: 'custom' } })).rejects.toThrow(/RetryAfterError/);
    await expect(queue.add('x', {}, { deduplication: { id: 'd', extend: true } })).rejects.toBeInstanceOf(UnsupportedBullMQError);
    await expect(queue.add('x', {}, { parent: { id: '1', queue: 'bull:p' } })).rejects.toThrow(/FlowProducer/);
    expect(() => new Worker(name, '/path/to/processor.js', { connection })).toThrow(UnsupportedBullMQError);
    expect(() => new Worker(name, new URL('file:///p.js'), { connection })).toThrow(/sandboxed/);
    const job = await queue.add('x', {});
    await expect(job.log('row')).rejects.toThrow(/own logger/);
    await expect(job.updateProgress(5)).rejects.toBeInstanceOf(UnsupportedBullMQError);
    await expect(job.moveToDelayed(Date.now() + 1000)).rejects.toThrow(/RetryAfterError/);
    expect(before).toEqual([]);
    expect(await queue.getJobCountByTypes('waiting')).toBe(1);
  });

  it('deduplication: one job per id while it is unfinished', async () => {
    const name = redis.name();
    const queue = redis.track(new Queue(name, { connection }));
    const a = await queue.add('x', { v: 1 }, { deduplication: { id: 'k' } });
    const b = await queue.add('x', { v: 2 }, { deduplication: { id: 'k' } });
    expect(b.id).toBe(a.id);
    expect(await queue.getWaitingCount()).toBe(1);
    expect(await queue.getDeduplicationJobId('k')).toBe(a.id);
    expect(await queue.getDeduplicationJobId('none')).toBeNull();
    expect(a.deduplicationId).toBe('k');
  });
});

describe('the BullMQ layer, flows', () => {
  const redis = useBullRedis();
  const { connection } = redis;

  it("a child with ignoreDependencyOnFailure lets its parent run; getDependencies and the children's parent keys read as BullMQ's, under a prefix", async () => {
    const parentName = redis.name();
    const childName = redis.name();
    const prefix = 'pre';
    const flows = redis.track(new FlowProducer({ connection, prefix }));
    const { job, children } = await flows.add({
      name: 'join',
      queueName: parentName,
      children: [
        { name: 'ok', queueName: childName, data: { fail: false } },
        { name: 'bad', queueName: childName, data: { fail: true }, opts: { ignoreDependencyOnFailure: true } },
      ],
    });
    const parentKeys: Array<string | undefined> = [];
    redis.track(
      new Worker(
        childName,
        async (j: Job) => {
          parentKeys.push(j.parentKey);
          if (j.data.fail) throw new Error('child broke');
          return 'fine';
        },
        { connection, prefix },
      ),
    );
    let deps: unknown;
    redis.track(new Worker(parentName, async (j: Job) => void (deps = await j.getDependencies()), { connection, prefix }));
    await until(async () => (await job.getState()) === 'completed');
    const [ok, bad] = children!.map((c) => `pre:${childName}:${c.job.id}`);
    expect(parentKeys).toEqual([`pre:${parentName}:${job.id}`, `pre:${parentName}:${job.id}`]);
    expect(deps).toMatchObject({ processed: { [ok!]: 'fine' }, unprocessed: [], failed: [], ignored: { [bad!]: 'child broke' } });
    expect(await job.getDependenciesCount()).toEqual({ processed: 1, unprocessed: 0, failed: 0, ignored: 1 });
    expect(await redis.raw.exists(`emq:{pre.${parentName}}:job:${'JOB:' + job.id}`)).toBe(1);
  });
});
