/** 'auto' prefetch holds jobs back only while handlers take less than this on average (ms). */
const AUTO_PREFETCH_BELOW_MS = 20;

/**
 * The most jobs 'auto' lets wait to cover a round trip, beyond the slots' own count: with
 * handlers far shorter than a round trip, one slot could run dozens of jobs while one settle is
 * in flight, and what waits in hand is work no other consumer can take meanwhile. The allowance
 * itself is one round trip's worth of the slots' work (see allowance), so what waits is never
 * longer a wait than that for anyone; this count bounds it only when handlers take next to no
 * time (and the memory it holds). At 64, 10 slots of no-op handlers held 74 jobs for a round trip
 * in which they could run hundreds: 78-88k jobs a second drained, 112-116k at 256
 * (bench/drain-cost.ts --concurrency 10).
 */
export const AUTO_PREFETCH_MAX = 256;

/** Weight of the newest sample in the moving averages. */
const SMOOTHING = 0.2;

/**
 * A parked consumer's adaptive prefetch policy: how many claimed jobs may wait in hand for a free
 * slot (ParkedLoopOptions.prefetch). With short jobs a slot that frees starts its next job at once
 * instead of one settle-and-claim round trip later; with long jobs ('auto' learns that from a
 * moving average of handler durations) nothing waits, so a consumer never hoards work another
 * could run. It decides only: the waiting jobs themselves are the JobsInHand's.
 *
 * @example
 * const prefetch = new Prefetch('auto', () => concurrency);
 * const room = concurrency - held + prefetch.allowance() - waiting;
 */
export class Prefetch {
  /** Moving average of handler durations in ms (undefined until one finished). */
  private recentMs: number | undefined;
  /** Moving average of the loop's claim round trips in ms (undefined until one came back). */
  private roundTripMs: number | undefined;

  /**
   * `setting` is the option, checked (settingsOf); `autoSize` says how many jobs 'auto' lets wait
   * while handlers are short (the jobs the slots hold).
   */
  constructor(
    private readonly setting: number | 'auto',
    private readonly autoSize: () => number,
  ) {}

  /**
   * How many claimed jobs may wait now (see ParkedLoopOptions.prefetch). 'auto', while handlers
   * are short: the jobs the slots hold, or, when more than that run in one claim round trip (the
   * slots' count times round trip over handler time), that many, up to AUTO_PREFETCH_MAX. So the
   * jobs in hand cover the round trip and no more.
   */
  allowance(): number {
    if (this.setting !== 'auto') return this.setting;
    const handlerMs = this.recentMs;
    if (handlerMs === undefined || handlerMs >= AUTO_PREFETCH_BELOW_MS) return 0;
    const slots = this.autoSize();
    if (this.roundTripMs === undefined) return slots;
    const perRoundTrip = Math.ceil((slots * this.roundTripMs) / Math.max(handlerMs, 0.001));
    return Math.max(slots, Math.min(perRoundTrip, AUTO_PREFETCH_MAX));
  }

  /** A handler ended after `ms`: the moving average that decides 'auto' learns it. */
  learn(ms: number): void {
    this.recentMs = average(this.recentMs, ms);
  }

  /** A claim (or settle-and-claim) came back after `ms`: 'auto' sizes the wait to cover it. */
  learnRoundTrip(ms: number): void {
    this.roundTripMs = average(this.roundTripMs, ms);
  }
}

const average = (mean: number | undefined, sample: number): number =>
  mean === undefined ? sample : mean + (sample - mean) * SMOOTHING;
