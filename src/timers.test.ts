import { afterEach, describe, expect, it } from 'vitest';
import { setTimerCap, sleep, startInterval, startTimer, TIMER_CAP_MS } from './timers.js';

/** Records the delays handed to setTimeout while `during` runs. */
async function delaysOf(during: () => Promise<void>): Promise<number[]> {
  const real = globalThis.setTimeout;
  const delays: number[] = [];
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return real(fn, ms);
  }) as typeof setTimeout;
  try {
    await during();
  } finally {
    globalThis.setTimeout = real;
  }
  return delays;
}

describe('timers', () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  it('a delay past the cap waits the cap at a time and fires once its whole delay has passed', async () => {
    restore = setTimerCap(40);
    let firedAt = 0;
    const startedAt = performance.now();
    const delays = await delaysOf(
      () =>
        new Promise<void>((resolve) => {
          startTimer(() => {
            firedAt = performance.now();
            resolve();
          }, 150);
        }),
    );
    expect(firedAt - startedAt).toBeGreaterThanOrEqual(149);
    // four stretches on time; a loaded machine's late timers leave fewer, never one
    expect(delays.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...delays)).toBeLessThanOrEqual(40);
  });

  it('never hands setTimeout more than 2^31-1 ms, and a cancelled long timer never fires', async () => {
    let fired = false;
    const delays = await delaysOf(async () => {
      const timer = startTimer(() => (fired = true), 30 * 86_400_000);
      timer.cancel();
    });
    expect(delays).toEqual([TIMER_CAP_MS]);
    expect(fired).toBe(false);
  });

  it('Infinity never fires and arms nothing; NaN and negative delays fire on the next turn', async () => {
    const delays = await delaysOf(async () => {
      startTimer(() => expect.fail('fired'), Infinity);
      await new Promise<void>((resolve) => startTimer(resolve, Number.NaN));
      await new Promise<void>((resolve) => startTimer(resolve, -5));
    });
    expect(delays).toEqual([0, 0]);
  });

  it('sleep ends at once when its signal aborts, and an interval past the cap re-arms', async () => {
    const stop = new AbortController();
    const startedAt = performance.now();
    const slept = sleep(60_000, { signal: stop.signal });
    stop.abort();
    await slept;
    expect(performance.now() - startedAt).toBeLessThan(50);
    await sleep(10, { signal: AbortSignal.abort() });

    restore = setTimerCap(20);
    let ticks = 0;
    const interval = startInterval(() => ticks++, 50);
    await sleep(180);
    interval.cancel();
    expect(ticks).toBeGreaterThanOrEqual(2);
    expect(ticks).toBeLessThanOrEqual(4);
    const after = ticks;
    await sleep(80);
    expect(ticks).toBe(after);
  });

  it('refuses a cap that is not an integer from 1 to 2^31-1', () => {
    expect(() => setTimerCap(0)).toThrow(RangeError);
    expect(() => setTimerCap(TIMER_CAP_MS + 1)).toThrow(RangeError);
  });
});
