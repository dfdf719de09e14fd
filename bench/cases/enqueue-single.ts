import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { enqueueCalls } from '../lib/enqueue-calls.js';
import { bullQueue, echoQueue, floorConnection } from '../lib/impls.js';
import { latencies, round } from '../lib/stats.js';

/** The floor's script: it does nothing, so its call costs only the round trip and the arguments. */
const NO_OP = 'return 0';

/**
 * `enqueue-single`: jobs added one at a time, each awaited before the next. Figures: jobs_per_s,
 * the latency of one add (p50/p99/max), commands_per_job, round_trips_per_job.
 *
 * The `floor` makes the same number of calls, each awaited: an EVALSHA of a no-op script (loaded
 * before timing) with the very KEYS and ARGV echomq's add sends for the same payload (recorded
 * from a Queue that sends nothing, see enqueue-calls.ts), over a connection made as echomq's is.
 */
export const enqueueSingle: BenchCase = {
  name: 'enqueue-single',
  impls: ['echomq', 'bullmq', 'floor'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 10_000, quick: 2_000, smoke: 100 });
    const name = benchQueueName('enq1');
    const payload = (i: number): { i: number } => ({ i });
    const times: number[] = [];
    let add: (i: number) => Promise<unknown>;
    let requests = (): number => 0;
    let close: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      add = (i) => queue.add(payload(i));
      requests = () => transport.requests;
      close = () => transport.close();
    } else if (impl === 'floor') {
      // the calls of add(-1), add(0), ... add(n - 1), as EVALSHA's arguments after the command
      const calls = await enqueueCalls(name, Array.from({ length: n + 1 }, (_, i) => payload(i - 1)));
      const connection = floorConnection(ctx);
      const sha = (await connection.redis.script('LOAD', NO_OP)) as string;
      const argvs = calls.map((c) => [sha, c.keys.length, ...c.keys, ...c.args]);
      add = (i) => connection.redis.call('evalsha', argvs[i + 1]!);
      close = connection.close;
    } else {
      const queue = bullQueue(ctx, name);
      add = (i) => queue.add('job', payload(i));
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
      ...latencies(times, 3),
      ...redisCostPerJob(m, n),
      round_trips_per_job: round(trips / n, 3),
    };
  },
};
