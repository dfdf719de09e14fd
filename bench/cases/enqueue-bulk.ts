import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { bullQueue, echoQueue } from '../lib/impls.js';
import { round } from '../lib/stats.js';

const PER_CALL = 1_000;

/**
 * `enqueue-bulk`: jobs added 1000 per call, each call awaited before the next. Figures:
 * jobs_per_s, commands_per_job, round_trips_per_job.
 */
export const enqueueBulk: BenchCase = {
  name: 'enqueue-bulk',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const calls = sized(ctx, { full: 50, quick: 5, smoke: 1 });
    const n = calls * PER_CALL;
    const name = benchQueueName('bulk');
    let addBulk: (from: number) => Promise<unknown>;
    let requests = (): number => 0;
    let close: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      addBulk = (from) => queue.addBulk(Array.from({ length: PER_CALL }, (_, i) => ({ payload: { i: from + i } })));
      requests = () => transport.requests;
      close = () => transport.close();
    } else {
      const queue = bullQueue(ctx, name);
      addBulk = (from) => queue.addBulk(Array.from({ length: PER_CALL }, (_, i) => ({ name: 'job', data: { i: from + i } })));
      close = () => queue.close();
    }
    await addBulk(-PER_CALL); // warm: scripts loaded, connection up
    const requests0 = requests();
    const meter = await startMeter(ctx);
    for (let c = 0; c < calls; c++) await addBulk(c * PER_CALL);
    const m = await meter.stop();
    const trips = impl === 'echomq' ? requests() - requests0 : m.writes;
    await close();
    return {
      n,
      jobs_per_s: round(n / (m.ms / 1000), 0),
      ...redisCostPerJob(m, n),
      round_trips_per_job: round(trips / n, 4),
    };
  },
};
