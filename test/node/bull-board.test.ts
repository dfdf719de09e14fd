/**
 * The bull-board adapter (`echomq/bull-board`, issue 36) against the run's redis-server, method by
 * method, as bull-board's handlers call it: counts per status equal `GET /v1/queues`'s cells by
 * the documented mapping, listings by status, each job action, the queue's actions, schedulers,
 * flows, and what throws UnsupportedBoardActionError. No mocks: every call goes through echomq's
 * Queue to Redis.
 */
import { createBullBoard } from '@bull-board/api';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { describe, expect, inject, it } from 'vitest';
import { Flows, queueOverviews } from '../../src/index.js';
import { JobStateError } from '../../src/errors.js';
import { Queue as LayerQueue } from '../../src/bullmq/index.js';
import { type BoardJob, boardCountsOf, EchoMQAdapter, UnsupportedBoardActionError } from '../../src/bull-board/index.js';
import { buryJobs, completeJobs } from '../admin-helpers.js';
import { leases, queueName, useRedis } from '../helpers.js';

const idsOf = (jobs: ReadonlyArray<{ toJSON(): { id?: unknown } }>): unknown[] => jobs.map((j) => j.toJSON().id);

describe('EchoMQAdapter', () => {
  const redis = useRedis();

  /** A queue with jobs in every state bull-board shows: 2 pending (one with a priority), 1 scheduled, 1 active, 2 completed, 2 dead, 1 cancelled. */
  async function populated() {
    const queue = redis.queue<{ n: number }>();
    const completed = await completeJobs(queue, [{ n: 1 }, { n: 2 }]);
    const dead = await buryJobs(queue, [{ n: 3 }, { n: 4 }]);
    await queue.add({ n: 5 });
    const { jobs } = await leases(queue).claim(1, 30_000);
    const active = jobs[0]!.id;
    const cancelled = (await queue.add({ n: 6 })).id;
    await queue.cancel(cancelled, { reason: 'not wanted' });
    const pending = [(await queue.add({ n: 7 })).id, (await queue.add({ n: 8 }, { priority: 5 })).id];
    const scheduled = (await queue.add({ n: 9 }, { delayMs: 60_000 })).id;
    return { queue, adapter: new EchoMQAdapter(queue), completed, dead, active, cancelled, pending, scheduled };
  }

  it("counts each status as the sum of GET /v1/queues' cells it stands for", async () => {
    const { queue, adapter } = await populated();
    const counts = await adapter.getJobCounts();
    expect(counts).toEqual({ active: 1, waiting: 2, 'waiting-children': 0, completed: 2, failed: 3, delayed: 1 });
    const row = (await queueOverviews(redis.transport)).find((q) => q.queue === queue.name)!;
    expect(counts).toEqual({
      active: row.counts.active,
      waiting: row.counts.pending,
      'waiting-children': row.counts.waiting,
      completed: row.counts.completed,
      failed: row.counts.dead + row.counts.cancelled,
      delayed: row.counts.scheduled + row.counts.awaiting,
    });
    expect(boardCountsOf(row.counts)).toEqual(counts);
    expect(adapter.getStatuses()).toEqual(['latest', 'active', 'waiting', 'waiting-children', 'completed', 'failed', 'delayed']);
  });

  it('lists each status in echomq order, ids as given at enqueue, failed as dead then cancelled, and pages across them', async () => {
    const { adapter, dead, cancelled, pending, scheduled, active, completed } = await populated();
    const bare = (id: string) => id.slice('JOB:'.length);
    // as a claim takes them: priority 0 before priority 5
    expect(idsOf(await adapter.getJobs(['waiting']))).toEqual(pending.map(bare));
    expect(idsOf(await adapter.getJobs(['delayed']))).toEqual([bare(scheduled)]);
    expect(idsOf(await adapter.getJobs(['active']))).toEqual([bare(active)]);
    expect(idsOf(await adapter.getJobs(['completed']))).toEqual(completed.map(bare).reverse());
    const failed = idsOf(await adapter.getJobs(['failed'], 0, 9));
    expect(failed).toEqual([...dead.map(bare).reverse(), bare(cancelled)]);
    expect(idsOf(await adapter.getJobs(['failed'], 1, 2))).toEqual(failed.slice(1, 3));
    expect(idsOf(await adapter.getJobs(['failed'], 2, 2))).toEqual([bare(cancelled)]);
    expect(await adapter.getJobs(['prioritized', 'paused'])).toEqual([]);
    expect((await adapter.getJobs(adapter.getJobStatuses(), 0, 49)).length).toBe(9);
  });

  it("shows a job's fields as bull-board's formatJob reads them, and its status", async () => {
    const { adapter, dead, cancelled, scheduled } = await populated();
    const deadJob = (await adapter.getJob(dead[0]!.slice(4)))!;
    expect(deadJob.toJSON()).toMatchObject({ id: dead[0]!.slice(4), name: '', data: { n: 3 }, attemptsMade: 1, failedReason: 'boom', stacktrace: ['boom'], opts: { attempts: 1 } });
    expect(await deadJob.getState()).toBe('failed');
    expect((await adapter.getJob(cancelled.slice(4)))!.toJSON()).toMatchObject({ failedReason: 'cancelled: not wanted' });
    const delayed = (await adapter.getJob(scheduled.slice(4)))!;
    expect(await delayed.getState()).toBe('delayed');
    expect(delayed.toJSON().delay).toBeGreaterThan(59_000);
    expect(await adapter.getJob('no-such-job')).toBeUndefined();
  });

  it('retries a dead job (reprocess), and refuses a cancelled or completed one before any write', async () => {
    const { queue, adapter, dead, cancelled, completed } = await populated();
    await (await adapter.getJob(dead[0]!.slice(4)))!.retry('failed');
    expect((await queue.getJob(dead[0]!))!.state).toBe('pending');
    const cancelledJob = (await adapter.getJob(cancelled.slice(4)))!;
    await expect(cancelledJob.retry('failed')).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect(cancelledJob.retry('failed')).rejects.toMatchObject({ statusCode: 400, feature: 'Retry on a cancelled job' });
    await expect((await adapter.getJob(completed[0]!.slice(4)))!.retry('completed')).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    expect((await queue.getJob(cancelled))!.state).toBe('cancelled');
    expect(adapter.allowCompletedRetries).toBe(false);
  });

  it('removes a job, but leaves a running one to its consumer', async () => {
    const { queue, adapter, pending, active } = await populated();
    await (await adapter.getJob(pending[0]!.slice(4)))!.remove();
    expect(await queue.getJob(pending[0]!)).toBeNull();
    await expect((await adapter.getJob(active.slice(4)))!.remove()).rejects.toBeInstanceOf(JobStateError);
    expect((await queue.getJob(active))!.state).toBe('active');
  });

  it('edits the data and priority of a job waiting to run', async () => {
    const { queue, adapter, pending } = await populated();
    const job = (await adapter.getJob(pending[0]!.slice(4)))!;
    await job.updateData({ n: 70 });
    await job.changePriority({ priority: 3 });
    expect(await queue.getJob(pending[0]!)).toMatchObject({ payload: { n: 70 }, priority: 3 });
    await expect(job.changePriority({ lifo: true })).rejects.toBeInstanceOf(UnsupportedBoardActionError);
  });

  it('pauses and resumes the queue, as GET /v1/queues reads it', async () => {
    const { queue, adapter } = await populated();
    await adapter.pause();
    expect(await adapter.isPaused()).toBe(true);
    expect((await queueOverviews(redis.transport)).find((q) => q.queue === queue.name)!.paused).toBe(true);
    await adapter.resume();
    expect(await adapter.isPaused()).toBe(false);
  });

  it('cleans completed and failed by echomq clean, waiting one by one, refuses active; empties by drain', async () => {
    const { queue, adapter } = await populated();
    await adapter.clean('completed', 0);
    await adapter.clean('failed', 0);
    await expect(adapter.clean('active', 0)).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    expect(await adapter.getJobCounts()).toMatchObject({ failed: 0, waiting: 2, active: 1, delayed: 1 });
    expect(await queue.getJobs('completed')).toEqual([]);
    await adapter.clean('wait', 60_000);
    expect((await adapter.getJobCounts()).waiting).toBe(2);
    await adapter.clean('wait', 0);
    expect((await adapter.getJobCounts()).waiting).toBe(0);
    await adapter.empty();
    expect(await adapter.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, active: 1 });
  });

  it('throws UnsupportedBoardActionError for what echomq does not do', async () => {
    const { adapter, scheduled, dead } = await populated();
    await expect(adapter.promoteAll()).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect((await adapter.getJob(scheduled.slice(4)))!.promote()).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect(adapter.getJobLogs(dead[0]!.slice(4))).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect(adapter.setGlobalConcurrency(3)).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect(adapter.releaseActiveRateLimit()).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    expect(await adapter.getGlobalConcurrency()).toBeNull();
  });

  it("adds a job: the data as an echomq queue's payload, a name refused; BullMQ's name and options on an echomq/bullmq Queue", async () => {
    const queue = redis.queue();
    const adapter = new EchoMQAdapter(queue);
    const added = await adapter.addJob('', { to: 'a' }, { delay: 60_000, attempts: 2 });
    expect(await added.getState()).toBe('delayed');
    expect(await queue.getJob(`JOB:${added.toJSON().id}`)).toMatchObject({ payload: { to: 'a' }, maxAttempts: 2, state: 'scheduled' });
    await expect(adapter.addJob('welcome', {}, {})).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    await expect(adapter.addJob('', {}, { lifo: true } as never)).rejects.toBeInstanceOf(UnsupportedBoardActionError);
    expect((await adapter.getJobCounts()).delayed).toBe(1);

    const layer = new LayerQueue(queueName('bb-layer'), { connection: { url: inject('redisUrl') } });
    try {
      const onLayer = new EchoMQAdapter(layer);
      const job = (await onLayer.addJob('welcome', { to: 'b' }, { attempts: 3 })) as BoardJob;
      expect(job.toJSON()).toMatchObject({ name: 'welcome', data: { to: 'b' }, opts: { attempts: 3 } });
      expect((await layer.getJob(String(job.toJSON().id)))!.name).toBe('welcome');
      expect(onLayer.getName()).toBe(layer.emq.name);
    } finally {
      await layer.obliterate({ force: true });
      await layer.close();
    }
  });

  it('shows, edits, runs and removes schedulers', async () => {
    const queue = redis.queue();
    const adapter = new EchoMQAdapter(queue);
    await queue.upsertScheduler('nightly', { cron: '0 3 * * *', tz: 'Europe/Berlin' }, { payload: { kind: 'report' }, maxAttempts: 2 });
    expect(await adapter.getJobSchedulersCount()).toBe(1);
    const [shown] = await adapter.getJobSchedulers();
    expect(shown).toMatchObject({ id: 'nightly', name: 'nightly', pattern: '0 3 * * *', tz: 'Europe/Berlin', iterationCount: 0, template: { data: { kind: 'report' }, opts: { attempts: 2 } } });
    expect(shown!.next).toBeGreaterThan(Date.now());
    expect(await adapter.updateJobScheduler('nightly', { every: 3_600_000 })).toBe('updated');
    expect(await queue.getScheduler('nightly')).toMatchObject({ every: 3_600_000, job: { payload: { kind: 'report' }, maxAttempts: 2 } });
    expect(await adapter.updateJobScheduler('nightly', { pattern: 'not a cron' })).toBe('invalid-schedule');
    expect(await adapter.updateJobScheduler('none', { every: 1000 })).toBe('not-found');
    const run = await adapter.runJobSchedulerNow('nightly');
    expect(run).not.toBe('not-found');
    expect((run as BoardJob).toJSON()).toMatchObject({ data: { kind: 'report' }, opts: { attempts: 2 } });
    expect(await adapter.removeJobScheduler('nightly')).toBe(true);
    expect(await adapter.getJobSchedulersCount()).toBe(0);
  });

  it("reads a flow's tree across queues, and each child's parent as bull-board follows it", async () => {
    const parentQueue = redis.queue();
    const childQueue = redis.queue();
    const tree = await new Flows(redis.transport).add({
      queue: parentQueue.name,
      payload: { kind: 'parent' },
      children: [
        { queue: childQueue.name, payload: { kind: 'a' } },
        { queue: childQueue.name, payload: { kind: 'b' } },
      ],
    });
    const parents = new EchoMQAdapter(parentQueue);
    const children = new EchoMQAdapter(childQueue);
    expect((await parents.getJobCounts())['waiting-children']).toBe(1);
    const child = (await children.getJob(tree.children[0]!.id.slice(4)))!;
    expect(child.toJSON().opts.parent).toEqual({ id: tree.id.slice(4), queue: parentQueue.name });
    expect(child.toJSON().parentKey).toBe(`${parentQueue.name}:${tree.id.slice(4)}`);
    const flow = await (await parents.getFlowProducer()).getFlow({ queueName: parentQueue.name, id: tree.id.slice(4), depth: 3 });
    expect(flow!.job.toJSON()).toMatchObject({ id: tree.id.slice(4), data: { kind: 'parent' } });
    expect(flow!.children!.map((c) => c.job.toJSON().data)).toEqual([{ kind: 'a' }, { kind: 'b' }]);
    expect(flow!.children!.every((c) => c.job.queueName === childQueue.name)).toBe(true);
    const parentJob = (await parents.getJob(tree.id.slice(4)))!;
    expect(await parentJob.getState()).toBe('waiting-children');
    expect(await parentJob.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, failed: 0, ignored: 0 });
  });

  it("answers the Redis panel's INFO, the rate limit, the last hour's metrics, and obliterates", async () => {
    const { queue, adapter } = await populated();
    expect(await adapter.getRedisInfo()).toMatch(/redis_version:/);
    expect(await adapter.getConfiguredRateLimit()).toBeNull();
    await adapter.setConfiguredRateLimit({ max: 10, duration: 1000 });
    expect(await adapter.getConfiguredRateLimit()).toEqual({ max: 10, duration: 1000 });
    await adapter.removeConfiguredRateLimit();
    expect(await queue.rateLimits()).toMatchObject({ queue: null });
    const completed = await adapter.getMetrics('completed');
    expect(completed.data).toHaveLength(60);
    expect(completed.data[0]).toBe(2);
    expect((await adapter.getMetrics('failed')).count).toBe(2);
    await adapter.obliterate({ force: true });
    expect(await queue.getJobs('dead')).toEqual([]);
  });

  it("answers bull-board's own routes, every body valid by bull-board's schemas", async () => {
    const { queue, adapter, active, dead, cancelled } = await populated();
    const serverAdapter = new HonoAdapter(serveStatic).setBasePath('/board');
    // validateResponses: bull-board checks each body against the schema its route declares (500 if not)
    createBullBoard({ queues: [adapter], serverAdapter, options: { validateResponses: true } });
    const board = serverAdapter.registerPlugin();
    const q = encodeURIComponent(queue.name);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await board.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });
      const text = await res.text();
      return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, any>) };
    };

    const listed = await call('GET', `/api/queues?activeQueue=${q}&status=failed&page=1&jobsPerPage=10`);
    expect(listed.status).toBe(200);
    expect(listed.body!.queues[0]).toMatchObject({ name: queue.name, type: 'bullmq', isPaused: false, counts: { failed: 3, waiting: 2, active: 1, delayed: 1, completed: 2 } });
    expect(listed.body!.queues[0].jobs.map((j: { id: string }) => j.id)).toEqual([...dead.map((id) => id.slice(4)).reverse(), cancelled.slice(4)]);
    expect((await call('GET', `/api/queues/${q}/${dead[0]!.slice(4)}`)).body).toMatchObject({ status: 'failed', job: { failedReason: 'boom' } });
    expect((await call('GET', `/api/queues/${q}/${dead[0]!.slice(4)}/flow`)).status).toBe(200);
    expect((await call('GET', '/api/redis/stats')).status).toBe(200);
    expect((await call('GET', `/api/queues/${q}/metrics`)).status).toBe(200);
    expect((await call('GET', '/api/job-schedulers')).status).toBe(200);

    // a running job is left to its consumer: the board's 409
    expect((await call('PUT', `/api/queues/${q}/${active.slice(4)}/clean`)).status).toBe(409);
    // Retry all: every dead job is reprocessed, then the cancelled one refuses, said in the body
    const retried = await call('PUT', `/api/queues/${q}/retry/failed`);
    expect(retried.status).toBe(400);
    expect(JSON.stringify(retried.body)).toContain('echomq does not support Retry on a cancelled job');
    expect((await queue.stats()).counts).toMatchObject({ dead: 0, cancelled: 1, pending: 4 });
    expect((await call('PUT', `/api/queues/${q}/promote`)).status).toBe(400);
    const added = await call('POST', `/api/queues/${q}/add`, { name: '', data: { n: 99 }, options: { attempts: 2 } });
    expect(added).toMatchObject({ status: 200, body: { status: 'waiting', job: { data: { n: 99 } } } });
    expect((await call('POST', `/api/queues/${q}/add`, { name: 'named', data: {} })).status).toBe(400);
    expect((await call('PUT', `/api/queues/${q}/pause`)).status).toBe(200);
    expect((await queue.stats()).paused).toBe(true);
  });
});
