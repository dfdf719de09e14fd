/** Small numeric helpers for the benchmark figures. */

/** The q-quantile (0..1) of `values` by nearest rank; null for none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * p50, p99 and max of latencies in ms, rounded to `digits` decimals (2: 0.01 ms; 3 where a
 * figure of tens of us is divided by a floor's).
 */
export function latencies(
  values: readonly number[],
  digits = 2,
): { p50_ms: number | null; p99_ms: number | null; max_ms: number | null } {
  return {
    p50_ms: round(quantile(values, 0.5), digits),
    p99_ms: round(quantile(values, 0.99), digits),
    max_ms: round(values.length === 0 ? null : Math.max(...values), digits),
  };
}

/** `value` rounded to `digits` decimals (null stays null). */
export function round(value: number | null, digits = 2): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Wall-clock epoch ms with sub-millisecond resolution (the same clock Redis TIME reads on loopback). */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when `check` holds, polling every `everyMs`; rejects after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 2): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`bench: ${what} did not happen within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A promise with its resolve function outside, for "the N-th completion happened". */
export function latch<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
