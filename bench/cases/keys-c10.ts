import { type BenchCase, sized } from '../lib/context.js';
import { drain } from '../lib/drain.js';
import { round } from '../lib/stats.js';

/**
 * `keys-c10`: the work of `groups-c10` (100 groups of one active job each, one consumer with 10
 * slots, no-op jobs), each job also naming two concurrency keys (`org:<i mod 20>` limited to 5
 * running jobs, `plan:<i mod 2>` unlimited: docs/guides/job-controls.md), run beside the same work
 * with its group alone, in the same process: what two keys a job cost in commands and throughput.
 * No anchor: BullMQ has no groups (they are BullMQ Pro's) and groupmq no keys.
 */
export const keysC10: BenchCase = {
  name: 'keys-c10',
  impls: ['echomq'],
  run: async (ctx, impl) => {
    const n = sized(ctx, { full: 20_000, quick: 2_000, smoke: 200 });
    const oneGroup = await drain(ctx, impl, { n, groups: 100, concurrency: 10 });
    const keyed = await drain(ctx, impl, { n, groups: 100, concurrency: 10, keys: { orgs: 20, orgLimit: 5 } });
    const rate = (f: typeof keyed, name: string): number => (typeof f[name] === 'number' ? (f[name] as number) : Number.NaN);
    return {
      ...keyed,
      jobs_per_s_one_group: oneGroup.jobs_per_s ?? null,
      commands_per_job_one_group: oneGroup.commands_per_job ?? null,
      redis_us_per_job_one_group: oneGroup.redis_us_per_job ?? null,
      keys_throughput_ratio: round(rate(keyed, 'jobs_per_s') / rate(oneGroup, 'jobs_per_s'), 2),
      keys_commands_added: round(rate(keyed, 'commands_per_job') - rate(oneGroup, 'commands_per_job'), 2),
    };
  },
};
