import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, startMeter } from '../lib/context.js';
import { bullQueue, echoQueue } from '../lib/impls.js';
import { latencies, round } from '../lib/stats.js';

/**
 * `enqueue-single`: jobs added one at a time, each awaited before the next. Figures: jobs_per_s,
 * the latency of one add (p50/p99/max), commands_per_job, round_trips_per_job.
 */
export const enqueueSingle: BenchCase = {
  name: 'enqueue-single',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = ctx.quick ? 2_000 : 10_000;
    const name = benchQueueName('enq1');
    const times: number[] = [];
    let add: (i: number) => Promise<unknown>;
    let requests = (): number => 0;
    let close: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      add = (i) => queue.add({ i });
      requests = () => transport.requests;
      close = () => transport.close();
    } else {
      const queue = bullQueue(ctx, name);
      add = (i) => queue.add('job', { i });
      close = () => queue.close();
    }
    await add(-1); // scripts loaded and the connection up before counting
    const requests0 = requests();
    const meter = await startMeter(ctx);
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await add(i);
      times.push(performance.now() - t);
    }
    const m = await meter.stop();
    const trips = impl === 'echomq' ? requests() - requests0 : m.writes;
    await close();
    return {
      n,
      jobs_per_s: round(n / (m.ms / 1000), 0),
      ...latencies(times),
      commands_per_job: round(m.commands / n),
      round_trips_per_job: round(trips / n, 3),
    };
  },
};
