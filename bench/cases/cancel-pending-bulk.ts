import { scripts } from '../../src/generated/scripts.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { bullQueue, echoQueue } from '../lib/impls.js';
import { round } from '../lib/stats.js';

const PER_ADD = 1_000;

/**
 * `cancel-pending-bulk`: a backlog of pending jobs (no consumer), ended in bulk by one awaited
 * call; from just before the call to its answer: jobs_per_s, commands_per_job and the Redis CPU
 * figures (INFO over the window / jobs), round_trips_per_job. Both sides' events as they run by
 * default (echomq's stream on: a `cancelled` event a job; BullMQ writes its own).
 *
 * echomq: `queue.cancelJobs({ state: 'pending', reason })`, which walks the pending list 500 at a
 * time and cancels each page in one call: every job leaves its lane and ends `cancelled`, its
 * row kept with the reason (listable, counted, cleanable).
 *
 * bullmq (6.7) has no cancelled state, and a waiting job cannot be failed without being taken by
 * a worker, so its equivalent is removing the jobs. Compared: `queue.clean(0, n, 'wait')`, the
 * cheapest call that takes jobs of one state up to a limit, job by job (each checked and deleted
 * with its keys, the ids returned), as `cancelJobs` takes a state and a limit. `queue.drain()` is
 * cheaper still but not per job: it empties the whole queue's waiting and prioritized jobs (and
 * delayed, if asked), with no state, no limit and no ids back; its figures ride on BullMQ's line
 * (`drain_*`, the same backlog added again) for scale and are not the anchor.
 */
export const cancelPendingBulk: BenchCase = {
  name: 'cancel-pending-bulk',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 10_000, quick: 2_000, smoke: 200 });
    const name = benchQueueName('cancel-bulk');
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      try {
        for (let from = 0; from < n; from += PER_ADD) await queue.addBulk(Array.from({ length: Math.min(PER_ADD, n - from) }, (_, i) => ({ payload: { i: from + i } })));
        // every script cached, as on a Redis that served queues before: no NOSCRIPT in the window
        for (const script of Object.values(scripts)) await ctx.admin.script('LOAD', script.lua);
        const requests0 = transport.requests;
        const meter = await startMeter(ctx);
        const done = await queue.cancelJobs({ state: 'pending', reason: 'bench' });
        const m = await meter.stop();
        if (done.cancelled !== n) throw new Error(`bench: cancelJobs cancelled ${done.cancelled} of ${n} pending jobs`);
        const left = (await queue.stats()).counts;
        if (left.pending !== 0 || left.cancelled !== n) throw new Error(`bench: after cancelJobs ${left.pending} pending, ${left.cancelled} cancelled`);
        return { n, jobs_per_s: round(n / (m.ms / 1000), 0), ...redisCostPerJob(m, n), round_trips_per_job: round((transport.requests - requests0) / n, 4) };
      } finally {
        await transport.close();
      }
    }
    const queue = bullQueue(ctx, name);
    try {
      const fill = async (): Promise<void> => {
        for (let from = 0; from < n; from += PER_ADD) await queue.addBulk(Array.from({ length: Math.min(PER_ADD, n - from) }, (_, i) => ({ name: 'job', data: { i: from + i } })));
      };
      // warm: the clean and drain scripts loaded by a first call each (on one job), not in the window
      await queue.add('warm', {});
      await queue.clean(0, 1, 'wait');
      await queue.add('warm', {});
      await queue.drain();
      await fill();
      const meter = await startMeter(ctx);
      const removed = await queue.clean(0, n, 'wait');
      const m = await meter.stop();
      if (removed.length !== n) throw new Error(`bench: BullMQ's clean removed ${removed.length} of ${n} waiting jobs`);
      await fill();
      const drainMeter = await startMeter(ctx);
      await queue.drain();
      const d = await drainMeter.stop();
      if ((await queue.getWaitingCount()) !== 0) throw new Error("bench: BullMQ's drain left waiting jobs");
      return {
        n,
        jobs_per_s: round(n / (m.ms / 1000), 0),
        ...redisCostPerJob(m, n),
        round_trips_per_job: round(m.writes / n, 4),
        drain_jobs_per_s: round(n / (d.ms / 1000), 0),
        drain_commands_per_job: round(d.commands / n),
        drain_redis_us_per_job: round(d.redisUs / n),
      };
    } finally {
      await queue.close();
    }
  },
};
