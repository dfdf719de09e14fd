import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Consumer } from '../../src/node/consumer/index.js';
import type { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { queueName, sleep } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { busiestWindow, StartsLogCopy, windowsOverLimit } from '../rate-windows.js';
import { type ReportingSuite, startReportingSuite } from './reporting-suite.js';
import { reportingWorkerEntry } from './worker-bundle.js';

const BRIDGE_TOKEN = 'bridge-token-for-rate-tests';
const EMQ_TOKEN = 'worker-token-for-rate-tests';
/** The Node consumers' lease: their claims ran at `leaseUntil - LEASE_MS` on the server's clock. */
const LEASE_MS = 30_000;

/**
 * The Worker of this suite: `createWorker` (the shipped Worker's code) serving the queue its
 * `RATE_QUEUE` binding names, its handler reporting every run (id, attempt, lease token) to
 * `REPORT_URL`. Bundled as wrangler deploys it (test/edge/schedulers.test.ts does the same for its
 * own); a scheduled event ends only once its reports are sent.
 */
const ENTRY = reportingWorkerEntry(
  `
    const queue = env.RATE_QUEUE;
    worker = createWorker({
      handlers: { [queue]: async (job) => { await report({ id: job.id, attempt: job.attempt, token: job.token }); } },
      log: () => {},
    });
`,
);


/** A handler run: which runtime, the job and its lease token, and for Node the claim's server time. */
interface Run {
  readonly runtime: string;
  readonly id: string;
  readonly attempt: number;
  readonly token: number;
  readonly startedAt?: number;
}

/**
 * A group's rate limit across runtimes (issue 17, "Tests"): the Worker under miniflare (workerd,
 * over @upstash/redis and the REST bridge) and two Node consumers (ioredis) drain one group's
 * backlog under 10 starts per 500 ms. The start times are the claims' own (each claim's `now`, as
 * the group's starts log records it, copied as the run goes by a poller of its own: see StartsLogCopy), checked whole
 * against every run's lease token and the `active` events, and exact against the Node consumers'
 * own reading of their claims.
 */
describe('a rate limit on the Worker and on Node at once', () => {
  let suite: ReportingSuite;
  let raw: Redis;
  let transport: IoredisTransport;
  const runs: Run[] = [];

  beforeAll(async () => {
    const onReport = (body: unknown): void => void runs.push({ runtime: 'edge', ...(body as Omit<Run, 'runtime'>) });
    suite = await startReportingSuite({ entry: ENTRY, name: 'echomq-rate-test', redisUrl: inject('redisUrl'), bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN, onReport });
    ({ raw, transport } = suite);
  }, 60_000);
  afterAll(async () => {
    await suite?.close();
  });

  it('two Node consumers and the Worker keep one group to 10 starts per 500 ms over 3 s of backlog, each job run once', async () => {
    const RATE = { limit: 10, periodMs: 500 };
    const JOBS = 70;
    const name = queueName('rate-x');
    const queue = new Queue<number>(transport, name);
    const { mf } = await suite.startWorker({ RATE_QUEUE: name, EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '1000', EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    const worker = await mf.getWorker();
    const scheduled = (): Promise<unknown> => worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
    // the Node consumers one job at a time, 150 ms each: about 3 of a window's 10 each, so the
    // Worker's drains (which wake for the group's due time too) take the rest
    const consumers = ['node-a', 'node-b'].map((runtime) =>
      Consumer.connect<number>(
        inject('redisUrl'),
        name,
        async (job) => {
          runs.push({ runtime, id: job.id, attempt: job.attempt, token: job.token, startedAt: job.leaseUntil - LEASE_MS });
          await sleep(150);
        },
        { leaseMs: LEASE_MS, concurrency: 1, prefetch: 0, log: false },
      ),
    );
    const log = new StartsLogCopy(inject('redisUrl'), name, ['g']);
    let stopped: Promise<unknown> | undefined;
    const stopConsumers = (): Promise<unknown> => (stopped ??= Promise.all(consumers.map((c) => c.stop())));
    try {
      await scheduled(); // the isolate loads its scripts first
      await queue.setGroupRateLimit('g', RATE);
      await log.start();
      consumers.forEach((c) => c.start());
      await queue.addBulk(Array.from({ length: JOBS }, (_, i) => ({ payload: i, group: 'g' })));
      const t0 = performance.now();
      // scheduled events of 3 s back to back, as a cron of that period would run them
      while ((await queue.stats()).counts.completed < JOBS && performance.now() - t0 < 30_000) {
        await scheduled();
        await sleep(10);
      }
      const tookMs = performance.now() - t0;
      await stopConsumers();
      await log.stop();

      const mine = runs;
      expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: JOBS, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
      // each job ran once, across the three runtimes
      const perJob = new Map<string, number>();
      for (const r of mine) perJob.set(r.id, (perJob.get(r.id) ?? 0) + 1);
      expect(perJob.size).toBe(JOBS);
      expect([...perJob.values()].every((n) => n === 1), JSON.stringify([...perJob].filter(([, n]) => n > 1))).toBe(true);

      // the copy of the starts log is whole: every run's claim is in it, one start per `active` event
      const logged = log.tokens('g');
      expect(log.failures).toBe(0);
      expect(mine.filter((r) => !logged.has(r.token)).map((r) => `${r.runtime} ${r.id} token ${r.token}`)).toEqual([]);
      const active: Array<{ jobId: string; attempt: number; time: number }> = [];
      for (let after = '0'; ; ) {
        const page = await queue.readEvents({ after, limit: 1000 });
        for (const e of page.events) if (e.event === 'active') active.push({ jobId: e.jobId, attempt: e.attempt, time: e.time });
        if (page.next === after) break;
        after = page.next;
      }
      expect(logged.size).toBe(active.length);
      // and exact: a Node consumer's own reading of its claim's time is the logged one
      for (const r of mine) if (r.startedAt !== undefined) expect(logged.get(r.token), `${r.runtime} ${r.id}`).toBe(r.startedAt);

      const starts = log.times('g');
      expect(windowsOverLimit(starts, RATE)).toEqual([]);
      expect(await checkInvariants(raw, name)).toEqual([]);

      // reported: who ran what, how full the windows were, and how far an event's entry id trails its claim
      const byRuntime: Record<string, number> = {};
      for (const r of mine) byRuntime[r.runtime] = (byRuntime[r.runtime] ?? 0) + 1;
      const eventTime = new Map(active.map((e) => [`${e.jobId}/${e.attempt}`, e.time]));
      const trail = mine.filter((r) => r.startedAt !== undefined).map((r) => eventTime.get(`${r.id}/${r.attempt}`)! - r.startedAt!);
      const byEventIds = windowsOverLimit([...eventTime.values()], RATE).length;
      const first = Math.min(...starts);
      const span = Math.max(...starts) - first;
      console.log(
        `edge + node rate limit: ${JOBS} jobs under ${RATE.limit} per ${RATE.periodMs} ms in ${Math.round(tookMs)} ms; runs ${JSON.stringify(byRuntime)}; ` +
          `first to last start ${span} ms (at the limit: ${(Math.ceil(JOBS / RATE.limit) - 1) * RATE.periodMs} ms), busiest window ${busiestWindow(starts, RATE.periodMs)}; ` +
          `log copied every 20 ms, longest gap ${Math.round(log.longestGapMs)} ms; an active event's entry id after its claim: max ${Math.max(...trail)} ms; ` +
          `windows over the limit if the entry ids were taken as start times: ${byEventIds}`,
      );
    } finally {
      await stopConsumers();
      await log.stop();
      await mf.dispose();
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
  }, 90_000);
});
