import { describe, expect, it } from 'vitest';
import { settingsOf } from './options.js';

describe('settingsOf', () => {
  it('fills in the defaults: a 30 s lease renewed every third, a 5 s beat, no timeout, auto prefetch', () => {
    expect(settingsOf({})).toEqual({ leaseMs: 30_000, beatMs: 5_000, timeoutMs: 0, renewMs: 10_000, stopTimeoutMs: 10_000, prefetch: 'auto', hooks: {}, log: expect.any(Function) });
    expect(settingsOf({ leaseMs: 2 }).renewMs).toBe(1);
  });

  it('refuses a bad option, the first one first', () => {
    expect(() => settingsOf({ leaseMs: 0, prefetch: -1 })).toThrow(/^leaseMs must be a number >= 1, got 0$/);
    expect(() => settingsOf({ beatMs: Number.NaN })).toThrow(/^beatMs/);
    expect(() => settingsOf({ renewMs: 0.5 })).toThrow(/^renewMs/);
    expect(() => settingsOf({ prefetch: 1.5 })).toThrow(/^prefetch must be 'auto' or an integer >= 0, got 1.5$/);
    expect(settingsOf({ prefetch: 0 }).prefetch).toBe(0);
    expect(() => settingsOf({ log: 'stderr' as unknown as false })).toThrow(/^log must be false or a function/);
  });
});
