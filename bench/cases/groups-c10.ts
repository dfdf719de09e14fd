import { type BenchCase, sized } from '../lib/context.js';
import { drain } from '../lib/drain.js';

/** `groups-c10`: 100 groups x 200 no-op jobs (one active per group), one consumer with 10 slot(s). */
export const groupsC10: BenchCase = {
  name: 'groups-c10',
  impls: ['echomq', 'groupmq'],
  run: (ctx, impl) => drain(ctx, impl, { n: sized(ctx, { full: 20_000, quick: 2_000, smoke: 200 }), groups: 100, concurrency: 10 }),
};
