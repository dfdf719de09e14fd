import { type BenchCase, sized } from '../lib/context.js';
import { drain } from '../lib/drain.js';

/**
 * `process-c100`: 20,000 ungrouped no-op jobs drained by one consumer with 100 slot(s), echomq
 * with its events stream off, so the case measures the state machine as its history did before
 * events existed (`process-c100-events` is the same work with events on).
 */
export const processC100: BenchCase = {
  name: 'process-c100',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) => drain(ctx, impl, { n: sized(ctx, { full: 20_000, quick: 2_000, smoke: 200 }), groups: 0, concurrency: 100, events: false }),
};
