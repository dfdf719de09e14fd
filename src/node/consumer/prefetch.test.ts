import { describe, expect, it } from 'vitest';
import { AUTO_PREFETCH_MAX, Prefetch } from './prefetch.js';

describe('the prefetch policy', () => {
  it("'auto' covers one claim round trip: the slots' count, more while handlers are far shorter than the trip, none for long jobs", () => {
    const sized = (slots: number, handlerMs: number | undefined, roundTripMs: number | undefined): number => {
      const prefetch = new Prefetch('auto', () => slots);
      if (handlerMs !== undefined) prefetch.learn(handlerMs);
      if (roundTripMs !== undefined) prefetch.learnRoundTrip(roundTripMs);
      return prefetch.allowance();
    };
    expect(sized(4, undefined, 0.3)).toBe(0); // nothing known of the handlers yet
    expect(sized(4, 5, undefined)).toBe(4); // no round trip measured yet: the slots
    expect(sized(4, 5, 0.3)).toBe(4); // a slot runs under one job per trip: the slots
    expect(sized(4, 0.1, 0.3)).toBe(12); // 4 slots x 3 jobs per trip
    expect(sized(4, 0.001, 0.3)).toBe(AUTO_PREFETCH_MAX); // capped
    expect(sized(300, 0.001, 0.3)).toBe(300); // the slots' count is the floor
    expect(sized(4, 25, 0.3)).toBe(0); // long jobs: none
    expect(new Prefetch(7, () => 4).allowance()).toBe(7); // a number is fixed
  });

  it("'auto' follows a moving average: one long handler among short ones does not stop it at once", () => {
    const prefetch = new Prefetch('auto', () => 4);
    prefetch.learn(1);
    prefetch.learn(60); // 1 + (60 - 1) * 0.2 = 12.8 ms: still short
    expect(prefetch.allowance()).toBe(4);
    prefetch.learn(60); // 12.8 + (60 - 12.8) * 0.2 = 22.24 ms: long now
    expect(prefetch.allowance()).toBe(0);
  });

  it('0 never prefetches, whatever the handlers take', () => {
    const prefetch = new Prefetch(0, () => 4);
    prefetch.learn(0.01);
    prefetch.learnRoundTrip(1);
    expect(prefetch.allowance()).toBe(0);
  });
});
