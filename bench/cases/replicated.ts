import { Redis } from 'ioredis';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalRedis, startLocalRedis } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import type { DurabilityOptions } from '../../src/durability.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { ECHO_QUEUE_OPTIONS } from '../lib/impls.js';
import { CountingTransport } from '../lib/round-trips.js';
import { latch, quantile, round, sleep } from '../lib/stats.js';

/** The two settings compared, in the order each round runs them. */
const MODES = [
  ['ack', { durability: 'acknowledged' }],
  ['repl', { durability: 'replicated' }],
] as const satisfies ReadonlyArray<readonly [string, DurabilityOptions]>;

/**
 * `replicated`: what `durability: 'replicated'` costs (issue 19). The case starts its own Redis
 * and a replica of it (`--replicaof`, on loopback: the WAIT is one more hop to a process on the
 * same 2 cores, the cheapest it gets), then, for each setting in turn, twice (ack, repl, ack,
 * repl; each figure the better of its two, so a noisy moment costs neither side alone):
 * - enqueue: N adds (5,000; 1,000 with --quick), each awaited before the next: `_enqueue_jobs_per_s`,
 *   `_enqueue_p50_ms`, `_enqueue_p99_ms`;
 * - process: N jobs (20,000; 2,000) added in bulk first, drained by one Consumer with 10 slots
 *   and the same durability: `_process_jobs_per_s` from its start to the last completion, and
 *   `_process_round_trips_per_job` (its requests: settles wait longer, so more ride together).
 * `enqueue_cost_x` and `process_cost_x` are ack over repl (2 = the replicated side at half the
 * rate). The bench's own Redis is not used: it has no replica, where every replicated write fails.
 */
export const replicated: BenchCase = {
  name: 'replicated',
  impls: ['echomq'],
  async run(ctx: BenchContext, _impl: Impl): Promise<Figures> {
    const adds = sized(ctx, { full: 5_000, quick: 1_000, smoke: 50 });
    const drained = sized(ctx, { full: 20_000, quick: 2_000, smoke: 100 });
    const { master, replica } = await masterAndReplica();
    try {
      const best: Record<string, number> = {};
      const keep = (name: string, value: number, higherIsBetter: boolean): void => {
        const old = best[name];
        best[name] = old === undefined ? value : higherIsBetter ? Math.max(old, value) : Math.min(old, value);
      };
      for (let pass = 0; pass < 2; pass++) {
        for (const [label, durability] of MODES) {
          const enqueue = await enqueueRun(master.url, durability, adds);
          keep(`${label}_enqueue_jobs_per_s`, enqueue.jobsPerS, true);
          keep(`${label}_enqueue_p50_ms`, enqueue.p50, false);
          keep(`${label}_enqueue_p99_ms`, enqueue.p99, false);
          const processed = await processRun(master.url, durability, drained);
          keep(`${label}_process_jobs_per_s`, processed.jobsPerS, true);
          keep(`${label}_process_round_trips_per_job`, processed.roundTripsPerJob, false);
        }
      }
      return {
        n_enqueue: adds,
        n_process: drained,
        ...Object.fromEntries(Object.entries(best).map(([k, v]) => [k, round(v, k.endsWith('_ms') || k.endsWith('_per_job') ? 3 : 0)])),
        enqueue_cost_x: round(best.ack_enqueue_jobs_per_s! / best.repl_enqueue_jobs_per_s!),
        process_cost_x: round(best.ack_process_jobs_per_s! / best.repl_process_jobs_per_s!),
      };
    } finally {
      await replica.stop();
      await master.stop();
    }
  },
};

/** A private Redis and a replica of it, resolved once the replica has synced. */
async function masterAndReplica(): Promise<{ master: LocalRedis; replica: LocalRedis }> {
  // a REDIS_URL of the caller's is neither: both are private servers
  const { REDIS_URL: _ignored, ...env } = process.env;
  const master = await startLocalRedis({ env, install: false });
  const port = new URL(master.url).port;
  const replica = await startLocalRedis({ env, install: false, args: ['--replicaof', '127.0.0.1', port] });
  const probe = new Redis(replica.url);
  try {
    const deadline = Date.now() + 30_000;
    while (!/master_link_status:up/.test(await probe.info('replication'))) {
      if (Date.now() > deadline) throw new Error('the replica did not sync within 30 s');
      await sleep(50);
    }
  } finally {
    probe.disconnect();
  }
  // the first sync waits repl-diskless-sync-delay on the master: over by now
  return { master, replica };
}

/** `n` adds awaited one by one: the rate and the latency of one. */
async function enqueueRun(url: string, durability: DurabilityOptions, n: number): Promise<{ jobsPerS: number; p50: number; p99: number }> {
  const transport = IoredisTransport.connect(url);
  const queue = new Queue<{ i: number }>(transport, benchQueueName('repl-enq'), { ...ECHO_QUEUE_OPTIONS, ...durability });
  try {
    await queue.add({ i: -1 }); // scripts loaded and the connection up before timing
    const times: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await queue.add({ i });
      times.push(performance.now() - t);
    }
    const ms = performance.now() - t0;
    await queue.obliterate({ force: true });
    return { jobsPerS: n / (ms / 1000), p50: quantile(times, 0.5)!, p99: quantile(times, 0.99)! };
  } finally {
    await transport.close();
  }
}

/** `n` jobs added in bulk, then drained by one Consumer (10 slots) with `durability`: jobs a second, and its requests per job. */
async function processRun(url: string, durability: DurabilityOptions, n: number): Promise<{ jobsPerS: number; roundTripsPerJob: number }> {
  const name = benchQueueName('repl-drain');
  const producer = IoredisTransport.connect(url);
  const queue = new Queue<{ i: number }>(producer, name, ECHO_QUEUE_OPTIONS);
  for (let i = 0; i < n; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: { i: i + j } })));
  const transport = new CountingTransport(IoredisTransport.connect(url));
  await transport.ping();
  const requests0 = transport.requests;
  const done = latch<number>();
  let completed = 0;
  const consumer = new Consumer(transport, new Queue(transport, name, ECHO_QUEUE_OPTIONS), () => {}, {
    ...durability,
    concurrency: 10,
    log: false,
    hooks: {
      onCompleted: () => {
        if (++completed === n) done.resolve(performance.now());
      },
      onError: (error) => console.error('echomq consumer error:', error),
    },
  });
  const t0 = performance.now();
  consumer.start();
  const end = await done.promise;
  await consumer.stop();
  const roundTripsPerJob = (transport.requests - requests0) / n;
  await transport.close();
  await queue.obliterate({ force: true });
  await producer.close();
  return { jobsPerS: n / ((end - t0) / 1000), roundTripsPerJob };
}
