import { randomBytes } from 'node:crypto';
import { boundedBeat } from '../../src/serverless/bounded-beat.js';
import { scripts } from '../../src/generated/scripts.js';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { Leases } from '../../src/lease/leases.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { Queue } from '../../src/queue/queue.js';
import { type BenchCase, type BenchContext, benchQueueName, sized } from '../lib/context.js';

/**
 * The edge cases (echomq only), over @upstash/redis through the Upstash-REST bridge, which counts
 * the HTTP requests (each one a Cloudflare subrequest and an Upstash request). They run the code
 * the Worker runs on Node: workerd would add nothing to the count.
 * - `edge-busy`: the bounded beat draining a backlog.
 * - `edge-idle`: a scheduled event of a Worker serving three queues with nothing to claim.
 * - `edge-enqueue`: jobs enqueued through the Worker's API, which drains them after the enqueue:
 *   one at a time (an enqueue every 20 ms) and in a burst (all at once), requests per job counting
 *   the enqueue itself.
 * - `edge-delayed`: the same with each job delayed by 500 ms: one at a time (each due 20 ms after
 *   the one before) and in a burst (all due together).
 */
async function onBridge<T>(ctx: BenchContext, work: (transport: UpstashTransport, env: WorkerEnv, requests: () => number) => Promise<T>): Promise<T> {
  const token = randomBytes(12).toString('hex');
  const bridge = await startBridge({ redisUrl: ctx.url, token });
  try {
    const transport = UpstashTransport.connect({ url: bridge.url, token });
    // every script cached, as a Redis that served a Worker before has them: a first EVALSHA that
    // Redis answers NOSCRIPT, then the EVAL, is not a job's cost (the Worker's own first calls, to
    // the registry and to register its queue, still count)
    for (const script of Object.values(scripts)) await ctx.admin.script('LOAD', script.lua);
    const warm = new Queue(transport, benchQueueName('edge-warm'));
    await warm.stats();
    await new Leases(warm).beat({ n: 0, leaseMs: 1000 });
    const env: WorkerEnv = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'bench', EMQ_DRAIN_ON_ENQUEUE_MS: '1000' };
    bridge.reset();
    return await work(transport, env, () => bridge.stats().requests);
  } finally {
    await bridge.close();
  }
}

/** A Worker on `queues` with no-op handlers, and the waitUntil promises of its requests. */
function worker(queues: readonly string[]): { fetch: (path: string, body?: unknown) => Promise<Response>; scheduled: () => Promise<void>; settled: () => Promise<void>; env: (env: WorkerEnv) => void } {
  const w = createWorker({ handlers: Object.fromEntries(queues.map((q) => [q, () => {}])), log: () => {} });
  const pending: Array<Promise<unknown>> = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
  let env: WorkerEnv = {};
  return {
    env: (e) => void (env = e),
    fetch: async (path, body) =>
      w.fetch(
        new Request(`http://edge${path}`, { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
        env,
        ctx,
      ),
    scheduled: () => w.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctx),
    settled: async () => {
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Enqueues `n` jobs through the Worker's API (`gapMs` apart, or all at once when null) and waits for its drains. */
async function enqueueThrough(ctx: BenchContext, n: number, gapMs: number | null, delayMs = 0): Promise<Record<string, number>> {
  return onBridge(ctx, async (transport, env, requests) => {
    const name = benchQueueName('edge-api');
    const w = worker([name]);
    w.env(env);
    const queue = new Queue(transport, name);
    const before = requests();
    const t0 = performance.now();
    const body = (i: number) => ({ payload: i, ...(delayMs > 0 ? { delayMs } : {}) });
    if (gapMs === null) await Promise.all(Array.from({ length: n }, (_, i) => w.fetch(`/v1/queues/${name}/jobs`, body(i))));
    else {
      for (let i = 0; i < n; i++) {
        await w.fetch(`/v1/queues/${name}/jobs`, body(i));
        await sleep(gapMs);
      }
    }
    await w.settled();
    const ms = performance.now() - t0;
    // what the Worker spent, read before the bench's own look at the queue
    const spent = requests() - before;
    const { counts } = await queue.stats();
    return { requests_per_job: spent / n, completed: counts.completed, jobs: n, ms: Math.round(ms) };
  });
}

export const edgeBusy: BenchCase = {
  name: 'edge-busy',
  impls: ['echomq'],
  async run(ctx) {
    const n = sized(ctx, { full: 4000, quick: 400, smoke: 40 });
    return onBridge(ctx, async (transport, _env, requests) => {
      const queue = new Queue<number>(transport, benchQueueName('edge'));
      for (let i = 0; i < n; i += 1000) {
        await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: i + j })));
      }
      const before = requests();
      const t0 = performance.now();
      let done = 0;
      while (done < n) {
        const summary = await boundedBeat(queue, () => {}, { deadline: Date.now() + 50_000, batchSize: 20, concurrency: 10 });
        done += summary.completed;
        if (summary.claimed === 0) break;
      }
      const ms = performance.now() - t0;
      return { jobs_per_s: (done / ms) * 1000, requests_per_job: (requests() - before) / done, jobs: done };
    });
  },
};

export const edgeIdle: BenchCase = {
  name: 'edge-idle',
  impls: ['echomq'],
  async run(ctx) {
    const events = sized(ctx, { full: 50, quick: 10, smoke: 3 });
    return onBridge(ctx, async (transport, env, requests) => {
      const names = [1, 2, 3].map(() => benchQueueName('edge-idle'));
      // something scheduled an hour out, nothing claimable
      for (const name of names) await new Queue(transport, name).add(1, { delayMs: 3_600_000 });
      const w = worker(names);
      w.env(env);
      await w.scheduled(); // the first event of an isolate may load the scripts
      const before = requests();
      for (let i = 0; i < events; i++) await w.scheduled();
      return { requests_per_event: (requests() - before) / events, queues: names.length, events };
    });
  },
};

export const edgeEnqueue: BenchCase = {
  name: 'edge-enqueue',
  impls: ['echomq'],
  async run(ctx) {
    const n = sized(ctx, { full: 50, quick: 20, smoke: 3 });
    const single = await enqueueThrough(ctx, n, 20);
    const burst = await enqueueThrough(ctx, n * 4, null);
    return {
      requests_per_job: single.requests_per_job!,
      burst_requests_per_job: burst.requests_per_job!,
      // jobs the drains after the enqueues did not run (left to the next scheduled event)
      left_behind: n * 5 - single.completed! - burst.completed!,
      jobs: n * 5,
    };
  },
};

export const edgeDelayed: BenchCase = {
  name: 'edge-delayed',
  impls: ['echomq'],
  async run(ctx) {
    const n = sized(ctx, { full: 50, quick: 20, smoke: 3 });
    const single = await enqueueThrough(ctx, n, 20, 500);
    const burst = await enqueueThrough(ctx, n * 4, null, 500);
    return {
      requests_per_job: single.requests_per_job!,
      burst_requests_per_job: burst.requests_per_job!,
      // jobs the drains after the enqueues did not run (left to the next scheduled event)
      left_behind: n * 5 - single.completed! - burst.completed!,
      jobs: n * 5,
    };
  },
};
