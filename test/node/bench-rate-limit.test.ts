import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { measureRateLimit, type RateLimitSpec } from '../../bench/cases/rate-limit.js';
import type { BenchContext, Figures } from '../../bench/lib/context.js';
import { cleanup } from '../../bench/lib/redis-stats.js';
import { alignedCounts, slack, slidingMax } from '../../bench/lib/start-windows.js';

describe('bench: start windows', () => {
  it('counts aligned windows from t0, half-open, and leaves out what is outside them', () => {
    expect(alignedCounts([100, 150, 1099, 1100, 2500, 99], 100, 1000, 2)).toEqual([3, 1]);
  });

  it('finds the most starts in any window of one period, a start at s counting until s + period', () => {
    expect(slidingMax([0, 0, 999, 1000, 1000, 1999], 1000)).toBe(3);
    expect(slidingMax([0, 10, 20], 5)).toBe(1);
    expect(slidingMax([], 1000)).toBe(0);
  });

  it('measures each start against the start `limit` back plus the period', () => {
    expect(slack([0, 1, 1003, 1001], 2, 1000)).toEqual([1, 2]);
    expect(slack([0, 1, 999], 2, 1000)).toEqual([-1]);
  });
});

/**
 * The rate-limit case runs end to end on the test Redis, small (2 groups at 5 per 400 ms, 2
 * windows judged), for both implementations. Only what the scripts guarantee is asserted (no
 * group past its limit in any window of the period, on the server's clock); the timings are
 * bench/'s to measure, on a Redis of its own.
 */
describe('bench: the rate-limit case', () => {
  const url = inject('redisUrl');
  const admin = new Redis(url);
  const { hostname, port } = new URL(url);
  const ctx: BenchContext = { url, host: hostname, port: Number(port), admin, quick: true, benchDir: 'bench' };
  const spec: RateLimitSpec = { groups: 2, limit: 5, periodMs: 400, windows: 2, perGroup: 15, concurrency: 5, idleMs: 100 };

  afterAll(async () => {
    await cleanup(admin, false, 'rate');
    admin.disconnect();
  });

  const common = (figures: Figures, limit: number, entries: number): void => {
    expect(figures).toMatchObject({ limit, entries, period_ms: spec.periodMs, windows: spec.windows });
    expect(figures.starts).toBeGreaterThanOrEqual(spec.windows * entries * limit);
    for (const name of ['idle_commands_per_s', 'throttled_ms', 'slack_p50_ms', 'start_sliding_max']) {
      expect(typeof figures[name], name).toBe('number');
    }
    const goals = figures.goals as Record<string, unknown>;
    for (const name of ['windows_in_range', 'sliding_within_limit', 'throttled_quiet']) expect(typeof goals[name], name).toBe('boolean');
  };

  it('echomq: every group at most its limit in any window, on the claims’ server time', async () => {
    const figures = await measureRateLimit(ctx, 'echomq', spec);
    common(figures, spec.limit, spec.groups);
    expect(figures.sliding_max).toBeLessThanOrEqual(spec.limit);
    expect(figures.slack_min_ms).toBeGreaterThanOrEqual(0);
    expect((figures.goals as Record<string, boolean>).sliding_within_limit).toBe(true);
  });

  it('bullmq: its queue-wide limiter, the same total', async () => {
    const figures = await measureRateLimit(ctx, 'bullmq', spec);
    common(figures, spec.groups * spec.limit, 1);
  });
});
