import { type BenchCase, sized } from '../lib/context.js';
import { drain } from '../lib/drain.js';

/**
 * `process-c100-events`: `process-c100`'s work (20,000 ungrouped no-op jobs, one consumer with 100
 * slots) with echomq's events stream on, at its defaults (a cap of 10,000 entries, results up to
 * 1024 bytes in `completed`); BullMQ beside it as in `process-c100` (it writes its events stream
 * in either case).
 */
export const processC100Events: BenchCase = {
  name: 'process-c100-events',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) => drain(ctx, impl, { n: sized(ctx, { full: 20_000, quick: 2_000, smoke: 200 }), groups: 0, concurrency: 100 }),
};
