import { randomBytes } from 'node:crypto';
import { boundedBeat } from '../../src/edge/bounded-beat.js';
import { UpstashTransport } from '../../src/edge/upstash-transport.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { Leases } from '../../src/lease.js';
import { Queue } from '../../src/queue.js';
import { type BenchCase, type BenchContext, benchQueueName } from '../lib/context.js';

/**
 * `edge-busy` and `edge-idle` (echomq only): the edge's bounded beat, the code the Worker's
 * scheduled handler runs, over @upstash/redis through the Upstash-REST bridge, which counts the
 * HTTP requests (each one a Cloudflare subrequest and an Upstash request). Run on Node: workerd
 * would add nothing to the count.
 */
async function onBridge<T>(ctx: BenchContext, work: (queue: Queue<number>, requests: () => number) => Promise<T>): Promise<T> {
  const token = randomBytes(12).toString('hex');
  const bridge = await startBridge({ redisUrl: ctx.url, token });
  try {
    const transport = UpstashTransport.connect({ url: bridge.url, token });
    const queue = new Queue<number>(transport, benchQueueName('edge'));
    await queue.stats(); // scripts cached: a cold EVAL is not the beat's cost
    await new Leases(queue).beat({ n: 0, leaseMs: 1000 });
    bridge.reset();
    return await work(queue, () => bridge.stats().requests);
  } finally {
    await bridge.close();
  }
}

export const edgeBusy: BenchCase = {
  name: 'edge-busy',
  impls: ['echomq'],
  async run(ctx) {
    const n = ctx.quick ? 400 : 4000;
    return onBridge(ctx, async (queue, requests) => {
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
    const beats = ctx.quick ? 10 : 50;
    return onBridge(ctx, async (queue, requests) => {
      await queue.add(1, { delayMs: 3_600_000 }); // something scheduled, nothing claimable
      const before = requests();
      for (let i = 0; i < beats; i++) await boundedBeat(queue, () => {}, { deadline: Date.now() + 50_000 });
      return { requests_per_beat: (requests() - before) / beats, beats };
    });
  },
};
