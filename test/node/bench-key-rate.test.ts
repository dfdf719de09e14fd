import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { groupFigures, type KeyRateSpec, measureKeyRate } from '../../bench/cases/key-rate.js';
import type { BenchContext, Figures } from '../../bench/lib/context.js';
import { cleanup } from '../../bench/lib/redis-stats.js';

describe('bench: a key’s starts split among its groups', () => {
  const spec = { groups: 4, keys: 2, limit: 4, periodMs: 100, windows: 2 };

  it('counts each group’s starts in the aligned windows from the first start of all', () => {
    const starts = [
      ...[0, 10, 99, 100].map((at) => ({ group: 'g0', at })),
      ...[5, 150, 180].map((at) => ({ group: 'g1', at })),
      ...[50, 120].map((at) => ({ group: 'g2', at })),
      ...[60, 199, 200, 250].map((at) => ({ group: 'g3', at })),
    ];
    // g0 3/1, g1 1/2, g2 1/1, g3 1/1 (200 and 250 are past the second window)
    expect(groupFigures(starts, spec)).toEqual({ group_share: 2, group_window_min: 1, group_window_max: 3 });
  });

  it('counts a group that never started as 0 in every window', () => {
    const starts = [0, 1, 100].map((at) => ({ group: 'g0', at }));
    expect(groupFigures(starts, spec)).toMatchObject({ group_window_min: 0, group_window_max: 2 });
  });
});

/**
 * The key-rate case runs end to end on the test Redis, small (4 groups over 2 keys at 5 per 400
 * ms, 2 windows judged), for both implementations. Only what the scripts guarantee is asserted
 * (no key past its rate in any window of the period, on the claims' server time); the timings
 * are bench/'s to measure, on a Redis of its own.
 */
describe('bench: the key-rate case', () => {
  const url = inject('redisUrl');
  const admin = new Redis(url);
  const { hostname, port } = new URL(url);
  const ctx: BenchContext = { url, host: hostname, port: Number(port), admin, quick: true, benchDir: 'bench' };
  const spec: KeyRateSpec = { groups: 4, keys: 2, limit: 5, periodMs: 400, windows: 2, perKey: 15, concurrency: 5, idleMs: 100 };

  afterAll(async () => {
    await cleanup(admin, false, 'krate');
    admin.disconnect();
  });

  const common = (figures: Figures, limit: number, entries: number): void => {
    expect(figures).toMatchObject({ limit, entries, period_ms: spec.periodMs, windows: spec.windows });
    expect(figures.starts).toBeGreaterThanOrEqual(spec.windows * entries * limit);
    for (const name of ['idle_commands_per_s', 'throttled_ms', 'throttled_rest_ms', 'slack_p50_ms', 'start_sliding_max']) {
      expect(typeof figures[name], name).toBe('number');
    }
    const goals = figures.goals as Record<string, unknown>;
    for (const name of ['windows_in_range', 'sliding_within_limit', 'throttled_quiet']) expect(typeof goals[name], name).toBe('boolean');
  };

  it('echomq: every key at most its rate in any window, on the claims’ server time', async () => {
    const figures = await measureKeyRate(ctx, 'echomq', spec);
    common(figures, spec.limit, spec.keys);
    expect(figures.sliding_max).toBeLessThanOrEqual(spec.limit);
    expect(figures.slack_min_ms).toBeGreaterThanOrEqual(0);
    expect((figures.goals as Record<string, boolean>).sliding_within_limit).toBe(true);
    expect(figures).toMatchObject({ groups: spec.groups, groups_per_key: 2, group_share: 2.5 });
    for (const name of ['group_window_min', 'group_window_max']) expect(typeof figures[name], name).toBe('number');
  });

  it('bullmq: its queue-wide limiter, the same total', async () => {
    const figures = await measureKeyRate(ctx, 'bullmq', spec);
    common(figures, spec.keys * spec.limit, 1);
  });
});
