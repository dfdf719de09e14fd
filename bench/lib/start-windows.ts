/**
 * How many jobs started in which window, for judging a rate limit ("at most `limit` starts in any
 * window of `period` ms") from the start times a run recorded. Times are ms on one clock; a start
 * at `s` counts in the windows [t, t + period) that hold it, as the scripts count it (a start at s
 * is in the log until s + period).
 */

/** Starts in each aligned window [t0 + k * period, t0 + (k + 1) * period), k = 0 .. windows - 1. */
export function alignedCounts(times: readonly number[], t0: number, period: number, windows: number): number[] {
  const counts = new Array<number>(windows).fill(0);
  for (const t of times) {
    const k = Math.floor((t - t0) / period);
    if (k >= 0 && k < windows) counts[k]! += 1;
  }
  return counts;
}

/** The most starts in any window of `period` ms (half-open: [t, t + period)). */
export function slidingMax(times: readonly number[], period: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[to]! - sorted[from]! >= period) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
}

/**
 * For each start after the first `limit`: how much later it came than the limit allowed, ms. The
 * i-th start may come no earlier than the (i - limit)-th plus the period, so this is its start
 * less that; 0 is a start at the first instant it could, a negative one broke the limit (the
 * window of `period` ending at it holds `limit + 1` starts). Of a saturated entry, the first start
 * of each batch measures its readmission's lateness.
 */
export function slack(times: readonly number[], limit: number, period: number): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = limit; i < sorted.length; i++) out.push(sorted[i]! - sorted[i - limit]! - period);
  return out;
}
