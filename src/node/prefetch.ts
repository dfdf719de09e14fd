import { InvalidArgumentError } from '../errors.js';
import type { Job } from '../job.js';
import { type ConsumerHooks, fireHook } from './consumer-types.js';
import type { HeldJob } from './held-job.js';

/** 'auto' prefetch holds jobs back only while handlers take less than this on average (ms). */
const AUTO_PREFETCH_BELOW_MS = 20;

/**
 * The most jobs 'auto' lets wait to cover a round trip, beyond the slots' own count: with
 * handlers far shorter than a round trip, one slot could run dozens of jobs while one settle is
 * in flight, and what waits in hand is work no other consumer can take meanwhile.
 */
export const AUTO_PREFETCH_MAX = 64;

/** Weight of the newest sample in the moving averages. */
const SMOOTHING = 0.2;

/**
 * A parked consumer's adaptive prefetch: claimed jobs waiting in hand for a free slot, oldest
 * first, and the policy that says how many may wait (ParkedLoopOptions.prefetch). With short jobs
 * a slot that frees starts its next job at once instead of one settle-and-claim round trip later;
 * with long jobs ('auto' learns that from a moving average of handler durations) nothing waits,
 * so a consumer never hoards work another could run. It holds jobs only: the loop claims them,
 * starts them and gives them back; the lease timers renew their leases like running ones'.
 *
 * @example
 * const prefetch = new Prefetch<P>('auto', () => concurrency, hooks);
 * const room = concurrency - held.size + prefetch.allowance() - prefetch.size;
 */
export class Prefetch<Payload> {
  /** Claimed jobs waiting for a free slot, oldest first (the lease timers renew them too). */
  readonly waiting: Array<HeldJob<Payload>> = [];
  private readonly setting: number | 'auto';
  /** Moving average of handler durations in ms (undefined until one finished). */
  private recentMs: number | undefined;
  /** Moving average of the loop's claim round trips in ms (undefined until one came back). */
  private roundTripMs: number | undefined;

  /**
   * `setting` is the option as given; `autoSize` says how many jobs 'auto' lets wait while
   * handlers are short (the jobs the slots hold).
   */
  constructor(
    setting: number | 'auto' | undefined,
    private readonly autoSize: () => number,
    private readonly hooks: ConsumerHooks<Payload>,
  ) {
    const prefetch = setting ?? 'auto';
    if (prefetch !== 'auto' && (!Number.isSafeInteger(prefetch) || prefetch < 0)) {
      throw new InvalidArgumentError(`prefetch must be 'auto' or an integer >= 0, got ${String(prefetch)}`);
    }
    this.setting = prefetch;
  }

  /** How many jobs are waiting. */
  get size(): number {
    return this.waiting.length;
  }

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

  /** A claimed job joins the wait, with the controller its run will use. */
  add(job: Job<Payload>, controller: AbortController): void {
    this.waiting.push({ job, controller, startedAt: 0, fenced: false, abandoned: false });
  }

  /** Drops the waiting jobs whose lease was lost: they never run (onFenced tells). True if any. */
  dropFenced(): boolean {
    let dropped = false;
    for (let i = 0; i < this.waiting.length; ) {
      if (this.waiting[i]!.fenced) {
        fireHook(this.hooks, 'onFenced', this.waiting.splice(i, 1)[0]!.job);
        dropped = true;
      } else i++;
    }
    return dropped;
  }

  /** Takes the `n` oldest waiting jobs out, to start them. */
  take(n: number): Array<HeldJob<Payload>> {
    return this.waiting.splice(0, n);
  }

  /** stop(): takes every waiting job out, and returns those whose lease is still ours. */
  drain(): Array<HeldJob<Payload>> {
    return this.waiting.splice(0).filter((h) => !h.fenced);
  }
}

const average = (mean: number | undefined, sample: number): number =>
  mean === undefined ? sample : mean + (sample - mean) * SMOOTHING;
