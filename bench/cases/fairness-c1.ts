import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { echoQueue, groupQueue, groupWorker } from '../lib/impls.js';
import { quantile, round, until } from '../lib/stats.js';

const SMALL_GROUPS = 10;
const SMALL_JOBS = 5;

/**
 * `fairness-c1`: 2,000 jobs of group `big` enqueued first, then 10 groups of 5 jobs, all before
 * the consumer starts; one slot. small_first_max_pos is the latest start position (1-based) of
 * any small group's first job; small_wait_p99_ms the p99 over the small jobs of start time minus
 * the consumer's start.
 */
export const fairnessC1: BenchCase = {
  name: 'fairness-c1',
  impls: ['echomq', 'groupmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const big = sized(ctx, { full: 2_000, quick: 500, smoke: 50 });
    const small = SMALL_GROUPS * SMALL_JOBS;
    const name = benchQueueName('fair');
    const order: Array<{ group: string; at: number }> = [];
    const seen = (group: string): void => {
      order.push({ group, at: performance.now() });
    };
    const smallStarted = (): number => order.filter((o) => o.group !== 'big').length;
    const smallJobs = Array.from({ length: small }, (_, i) => `s${Math.floor(i / SMALL_JOBS)}`);
    let start: () => void;
    let stop: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      await queue.addBulk(Array.from({ length: big }, (_, i) => ({ payload: { i }, group: 'big' })));
      await queue.addBulk(smallJobs.map((group, i) => ({ payload: { i }, group })));
      const consumer = new Consumer(transport, queue, (job) => seen(job.group ?? ''), { concurrency: 1 });
      start = () => void consumer.start();
      stop = async () => {
        await consumer.stop();
        await transport.close();
      };
    } else {
      const { redis, queue } = groupQueue(ctx, name);
      for (let i = 0; i < big; i++) await queue.add({ groupId: 'big', data: { i } });
      for (const [i, groupId] of smallJobs.entries()) await queue.add({ groupId, data: { i } });
      let worker: ReturnType<typeof groupWorker> | undefined;
      start = () => {
        worker = groupWorker(queue, async (job) => seen(job.groupId), 1);
      };
      stop = async () => {
        await worker?.close();
        await queue.close();
        redis.disconnect();
      };
    }
    const t0 = performance.now();
    start();
    await until(() => smallStarted() === small, 120_000, 'every small job to start', 5);
    await stop();
    const firstPos = new Map<string, number>();
    order.forEach((o, i) => {
      if (o.group !== 'big' && !firstPos.has(o.group)) firstPos.set(o.group, i + 1);
    });
    const waits = order.filter((o) => o.group !== 'big').map((o) => o.at - t0);
    return {
      n: big + small,
      small_first_max_pos: Math.max(...firstPos.values()),
      small_wait_p99_ms: round(quantile(waits, 0.99)),
    };
  },
};
