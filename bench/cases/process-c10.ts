import { type BenchCase, sized } from '../lib/context.js';
import { drain } from '../lib/drain.js';

/** `process-c10`: 20,000 ungrouped no-op jobs drained by one consumer with 10 slot(s). */
export const processC10: BenchCase = {
  name: 'process-c10',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) => drain(ctx, impl, { n: sized(ctx, { full: 20_000, quick: 2_000, smoke: 200 }), groups: 0, concurrency: 10 }),
};
