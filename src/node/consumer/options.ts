import { InvalidArgumentError } from '../../errors.js';
import type { ConsumerHooks } from './hooks.js';

/**
 * Options every parked consumer takes.
 *
 * @example
 * new Consumer(transport, 'mail', handler, { leaseMs: 60_000, timeoutMs: 10_000 });
 */
export interface ParkedLoopOptions<Payload> {
  /** Lease per claim in ms, renewed while a job runs (default 30,000). */
  readonly leaseMs?: number;
  /**
   * The longest time between beats (reap, promote, claim) in ms (default 5,000): a parked
   * consumer's longest park, and a busy one's period (one of its requests is a beat).
   */
  readonly beatMs?: number;
  /** A handler running longer than this is aborted and retried (ms; default 0 = no timeout). */
  readonly timeoutMs?: number;
  /** How often leases are renewed (default a third of the lease). */
  readonly renewMs?: number;
  /** How long stop() waits for jobs in hand by default (ms; default 10,000). */
  readonly stopTimeoutMs?: number;
  /**
   * How many claimed jobs may wait in hand for a free slot, besides those running, so a slot that
   * frees starts its next job at once while the settle (and the claim behind it) is in flight.
   * Waiting jobs' leases are renewed like running ones'; stop() gives them back uncounted.
   * `'auto'` (default) prefetches while the recent handler durations (a moving average) stay
   * under 20 ms: as many jobs as the slots hold, or, when the slots run more than that during one
   * claim round trip (also a moving average), enough to cover it, at most 64. Once handlers take
   * longer it prefetches none, so a consumer with long jobs never hoards work another consumer
   * could run. A number fixes it (0: never).
   *
   * @example
   * new Consumer(transport, 'thumbs', handler, { concurrency: 10, prefetch: 0 }); // no hoarding
   */
  readonly prefetch?: number | 'auto';
  /** What the consumer tells about the jobs it runs (started, completed, retried, dead, fenced, errors). */
  readonly hooks?: ConsumerHooks<Payload>;
}

/** The options as the loop uses them: defaults filled in, each checked. */
export interface LoopSettings<Payload> {
  readonly leaseMs: number;
  readonly beatMs: number;
  readonly timeoutMs: number;
  readonly renewMs: number;
  readonly stopTimeoutMs: number;
  readonly prefetch: number | 'auto';
  readonly hooks: ConsumerHooks<Payload>;
}

/**
 * Fills in the defaults and checks each option; throws InvalidArgumentError on the first bad one.
 *
 * @example
 * const { leaseMs, beatMs } = settingsOf({ leaseMs: 60_000 });
 */
export function settingsOf<Payload>(options: ParkedLoopOptions<Payload>): LoopSettings<Payload> {
  const leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
  const beatMs = positive('beatMs', options.beatMs ?? 5_000);
  const timeoutMs = options.timeoutMs ?? 0;
  const renewMs = positive('renewMs', options.renewMs ?? Math.max(1, Math.floor(leaseMs / 3)));
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const prefetch = options.prefetch ?? 'auto';
  if (prefetch !== 'auto' && (!Number.isSafeInteger(prefetch) || prefetch < 0)) {
    throw new InvalidArgumentError(`prefetch must be 'auto' or an integer >= 0, got ${String(prefetch)}`);
  }
  return { leaseMs, beatMs, timeoutMs, renewMs, stopTimeoutMs, prefetch, hooks: options.hooks ?? {} };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 1) throw new InvalidArgumentError(`${name} must be a number >= 1, got ${value}`);
  return value;
}
