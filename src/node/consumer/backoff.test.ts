import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.js';

describe('backoffMs', () => {
  it('waits 100 ms doubling to 5 s, each wait jittered between half and all of it', () => {
    const bounds = [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000];
    bounds.forEach((base, failures) => {
      for (let i = 0; i < 200; i++) {
        const ms = backoffMs(failures);
        expect(ms).toBeGreaterThanOrEqual(base / 2);
        expect(ms).toBeLessThanOrEqual(base);
      }
    });
    expect(backoffMs(1_000)).toBeLessThanOrEqual(5_000); // no overflow after a long outage
  });

  it('spreads consumers that failed together', () => {
    const waits = new Set(Array.from({ length: 50 }, () => backoffMs(3)));
    expect(waits.size).toBeGreaterThan(40);
  });
});
