import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FlowFanoutSpec, measureFlowFanout } from '../../bench/cases/flow-fanout.js';
import type { BenchContext, Figures } from '../../bench/lib/context.js';
import { cleanup } from '../../bench/lib/redis-stats.js';
import { ignoreSocketsOf, installSocketCounter } from '../../bench/lib/round-trips.js';

/**
 * The flow-fanout case runs end to end on the test Redis, small (6 flows of 1 parent and 2 x 3
 * children, 4 slots per queue), for both implementations: every parent runs after its children
 * and sees all their results. The speed is bench/'s to measure, on a Redis of its own.
 */
describe('bench: the flow-fanout case', () => {
  const url = inject('redisUrl');
  const admin = new Redis(url);
  const { hostname, port } = new URL(url);
  // BullMQ's round trips are socket writes to this Redis, as in a bench run
  installSocketCounter(Number(port));
  const ctx: BenchContext = { url, host: hostname, port: Number(port), admin, quick: true, benchDir: 'bench' };
  const spec: FlowFanoutSpec = { flows: 6, childrenPerQueue: 3, concurrency: 4, inFlight: 3, timeoutMs: 20_000 };

  beforeAll(async () => {
    await admin.ping();
    ignoreSocketsOf(admin);
  });

  afterAll(async () => {
    await cleanup(admin, false, 'flow');
    admin.disconnect();
  });

  const check = (figures: Figures): void => {
    expect(figures).toMatchObject({ flows: 6, jobs: 42, bad_joins: 0 });
    for (const name of ['flows_per_s', 'jobs_per_s', 'adds_ms', 'commands_per_job', 'round_trips_per_job', 'release_p50_ms', 'release_p95_ms']) {
      expect(figures[name], name).toBeGreaterThan(0);
    }
  };

  it('echomq: every parent released once its children are done, joining all their results', async () => {
    check(await measureFlowFanout(ctx, 'echomq', spec));
  });

  it('bullmq: the same trees through FlowProducer', async () => {
    check(await measureFlowFanout(ctx, 'bullmq', spec));
  });
});
