import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ClusterSpec, measureCluster, plainQueues, VARIANTS, type Variant } from '../../bench/cases/cluster.js';
import type { BenchContext, Figures } from '../../bench/lib/context.js';
import { cleanup } from '../../bench/lib/redis-stats.js';

/**
 * The cluster case runs end to end, small (4 queues x 20 jobs, 2 slots per queue), on the test
 * Redis and on a local cluster of three masters it starts and stops itself, for both
 * implementations: every job completes on both, each master's share of the commands adds up, and
 * a third variant is one entry more in the list (the hook "partitioned (8)" will use). The
 * speed is bench/'s to measure.
 */
describe('bench: the cluster case', () => {
  const url = inject('redisUrl');
  const admin = new Redis(url);
  const { hostname, port } = new URL(url);
  const ctx: BenchContext = { url, host: hostname, port: Number(port), admin, quick: true, benchDir: 'bench' };
  const spec: ClusterSpec = { queues: 4, jobsPerQueue: 20, concurrency: 2, bulk: 8, timeoutMs: 20_000 };
  // a third variant, echomq only: what a partitioned variant will look like in the list
  const variants: readonly Variant[] = [
    ...VARIANTS,
    { name: 'extra', on: 'cluster', make: (impl, ...rest) => (impl === 'echomq' ? plainQueues(impl, ...rest) : undefined) },
  ];

  beforeAll(async () => {
    await admin.ping();
  });

  afterAll(async () => {
    await cleanup(admin, false, 'cluster');
    admin.disconnect();
  });

  const check = (figures: Figures, names: readonly string[]): void => {
    expect(figures).toMatchObject({ jobs: 80, queues: 4 });
    for (const name of names) {
      for (const figure of ['jobs_per_s', 'enqueue_jobs_per_s', 'commands_per_job', 'redis_us_per_job']) {
        expect(figures[`${name}_${figure}`], `${name}_${figure}`).toBeGreaterThan(0);
      }
    }
    for (const name of names.filter((n) => n !== 'one')) {
      const shares = [1, 2, 3].map((m) => figures[`${name}_share_m${m}`] as number);
      expect(shares[0]).toBeGreaterThanOrEqual(shares[1]!);
      expect(shares[1]).toBeGreaterThanOrEqual(shares[2]!);
      expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 2);
      expect(figures[`${name}_model_scale`]).toBeCloseTo(1 / shares[0]!, 1);
    }
  };

  it('echomq: the same queues on one Redis, on the cluster, and in a variant added to the list', async () => {
    const figures = await measureCluster(ctx, 'echomq', spec, variants);
    check(figures, ['one', 'cluster', 'extra']);
  }, 60_000);

  it('bullmq: plainly on one Redis, under the prefix {bull} on the cluster (one master holds it all); no figures for a variant it has not', async () => {
    const figures = await measureCluster(ctx, 'bullmq', spec, variants);
    check(figures, ['one', 'cluster']);
    // the hash tag puts every BullMQ queue on one master (the others see only its connections' setup)
    expect(figures.cluster_share_m1).toBeGreaterThan(0.95);
    expect(Object.keys(figures).some((k) => k.startsWith('extra_'))).toBe(false);
  }, 60_000);
});
