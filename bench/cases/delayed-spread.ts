import { type BenchCase, sized } from '../lib/context.js';
import { delayedLateness } from '../lib/delayed.js';

/** `delayed-spread`: 2000 jobs added over a second (100 batches, 10 ms apart), each due 200 ms after it was added. 100 slots. */
export const delayedSpread: BenchCase = {
  name: 'delayed-spread',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) =>
    delayedLateness(ctx, impl, { n: sized(ctx, { full: 2_000, quick: 500, smoke: 100 }), dueInMs: 200, ticks: 100, everyMs: 10, concurrency: 100 }),
};
