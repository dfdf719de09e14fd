import { Consumer } from '../../src/node/consumer/index.js';
import type { BulkJob } from '../../src/queue/options.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Measured, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { echoQueue } from '../lib/impls.js';
import { latch, round, sleep } from '../lib/stats.js';

/**
 * `expiry-sweep` (echomq only: BullMQ has no expiry, so there is no anchor): a backlog of `n` jobs
 * of which half (every other one) expired before any consumer started (`expireAfterMs: 1`, then
 * 50 ms), the other half plain; one Consumer at 100 slots, no-op handler, events off (as
 * process-c100 runs). From the consumer's start to the last live job's completion: the claims
 * bury the expired half first (dead, EMQEXPIRED, at most 1000 a call, claiming nothing in a call
 * that took 1000), then run the live half. The same round runs the baseline, the live half alone
 * (`n / 2` plain jobs, a queue where no job had an expiry), on a queue of its own, after a
 * warm-up drain of up to 1,000 jobs, half expired (not measured), so neither window runs cold.
 *
 * Figures: `ms` and `base_ms` (consumer start to last completion); `sweep_ratio` = ms / base_ms,
 * the cost the expired half adds to running the live half (1 = none); `live_jobs_per_s` and
 * `base_jobs_per_s`; `commands_per_job` and the Redis CPU figures over the window / `n` (every job
 * ended, completed or dead), `base_commands_per_job` and `base_redis_us_per_job` / `n / 2`;
 * `commands_per_expired_job` and `redis_us_per_expired_job`: what the window cost beyond the
 * baseline's, / the expired jobs; `expired_cost_ratio`: that Redis CPU over a live job's in the
 * baseline (`base_redis_us_per_job`), what an expired job costs against one run to completion
 * (it runs no handler: the goal is <= 1). After the window the case checks that every expired job
 * is dead (and none in the baseline).
 */
const CONCURRENCY = 100;
const PER_ADD = 1_000;
/** The longest a drain may take before the case fails rather than hang. */
const LIMIT_MS = 120_000;

/** Enqueues `jobs`, drains them with one consumer; the window from its start to the `live`-th completion. */
async function drainWindow(ctx: BenchContext, label: string, jobs: ReadonlyArray<BulkJob<number>>, live: number): Promise<{ m: Measured; dead: number; completed: number }> {
  const name = benchQueueName(label);
  const { transport, queue } = echoQueue<number>(ctx, name);
  try {
    await queue.setEvents({ maxLen: 0 });
    for (let from = 0; from < jobs.length; from += PER_ADD) await queue.addBulk(jobs.slice(from, from + PER_ADD));
    await sleep(50); // every expiring job past its expiry
    const done = latch<void>();
    let completed = 0;
    const consumer = new Consumer<number>(transport, queue, () => {}, {
      concurrency: CONCURRENCY,
      hooks: {
        onCompleted: () => {
          if (++completed === live) done.resolve();
        },
        onError: (error) => console.error('echomq consumer error:', error),
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`bench: ${label}: ${completed} of ${live} live jobs completed within ${LIMIT_MS} ms`)), LIMIT_MS)));
    const meter = await startMeter(ctx);
    consumer.start();
    try {
      await Promise.race([done.promise, limit]);
    } finally {
      clearTimeout(timer);
    }
    const m = await meter.stop();
    await consumer.stop();
    const counts = (await queue.stats()).counts;
    return { m, dead: counts.dead, completed };
  } finally {
    await transport.close();
  }
}

export const expirySweep: BenchCase = {
  name: 'expiry-sweep',
  impls: ['echomq'],
  async run(ctx: BenchContext): Promise<Figures> {
    const n = sized(ctx, { full: 10_000, quick: 2_000, smoke: 200 });
    const live = n / 2;
    const expired = n - live;
    // warm: the process's consumer path compiled and the scripts loaded before either window
    await drainWindow(ctx, 'expiry-warm', Array.from({ length: Math.min(live, 1_000) }, (_, i) => ({ payload: i, ...(i % 2 === 1 ? { expireAfterMs: 1 } : {}) })), Math.ceil(Math.min(live, 1_000) / 2));
    const base = await drainWindow(ctx, 'expiry-base', Array.from({ length: live }, (_, i) => ({ payload: i })), live);
    const sweep = await drainWindow(ctx, 'expiry-sweep', Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { payload: i } : { payload: i, expireAfterMs: 1 })), live);
    if (sweep.dead !== expired) throw new Error(`bench: ${sweep.dead} of ${expired} expired jobs dead`);
    if (base.dead !== 0) throw new Error(`bench: ${base.dead} jobs dead in the baseline`);
    const expiredUs = (sweep.m.redisUs - base.m.redisUs) / expired;
    const baseUs = base.m.redisUs / live;
    return {
      n,
      expired,
      ms: round(sweep.m.ms, 1),
      base_ms: round(base.m.ms, 1),
      sweep_ratio: round(sweep.m.ms / base.m.ms),
      live_jobs_per_s: round(live / (sweep.m.ms / 1000), 0),
      base_jobs_per_s: round(live / (base.m.ms / 1000), 0),
      ...redisCostPerJob(sweep.m, n),
      base_commands_per_job: round(base.m.commands / live),
      base_redis_us_per_job: round(base.m.redisUs / live),
      commands_per_expired_job: round((sweep.m.commands - base.m.commands) / expired),
      redis_us_per_expired_job: round(expiredUs),
      expired_cost_ratio: baseUs > 0 ? round(expiredUs / baseUs) : null,
    };
  },
};
