import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { bullQueue, echoQueue } from '../lib/impls.js';
import { usedMemory } from '../lib/redis-stats.js';
import { round } from '../lib/stats.js';

/**
 * `memory`: bytes per waiting job, the INFO memory delta over adding N jobs (1000 per call)
 * divided by N. The payload is the same small JSON object for both.
 */
export const memory: BenchCase = {
  name: 'memory',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 20_000, quick: 5_000, smoke: 500 });
    const name = benchQueueName('mem');
    const payload = (i: number): { user: number; kind: string } => ({ user: i, kind: 'welcome-mail' });
    let addBulk: (from: number, count: number) => Promise<unknown>;
    let close: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      addBulk = (from, count) => queue.addBulk(Array.from({ length: count }, (_, i) => ({ payload: payload(from + i) })));
      close = () => transport.close();
    } else {
      const queue = bullQueue(ctx, name);
      addBulk = (from, count) => queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'job', data: payload(from + i) })));
      close = () => queue.close();
    }
    await addBulk(0, 1); // connections and scripts in place before the first reading
    const before = await usedMemory(ctx.admin);
    for (let from = 1; from <= n; from += 1000) await addBulk(from, Math.min(1000, n + 1 - from));
    const after = await usedMemory(ctx.admin);
    await close();
    return { n, bytes_per_job: round((after - before) / n, 0) };
  },
};
