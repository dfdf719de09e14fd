import { type BenchCase, sized } from '../lib/context.js';
import { delayedLateness } from '../lib/delayed.js';

/** `delayed-burst`: 2000 jobs added at once, all due 200 ms later; lateness = start - due. 100 slots. */
export const delayedBurst: BenchCase = {
  name: 'delayed-burst',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) =>
    delayedLateness(ctx, impl, { n: sized(ctx, { full: 2_000, quick: 500, smoke: 50 }), dueInMs: 200, ticks: 1, everyMs: 0, concurrency: 100 }),
};
