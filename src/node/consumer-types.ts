/**
 * What a user of the parked consumers (Consumer, BatchConsumer) sees of them besides the classes:
 * the options both take, the hooks they call (and how: a throw is ignored), and the errors they
 * throw into a job's signal. Kept apart from the loop so the public vocabulary reads in one place
 * and the loop's parts (settle batcher, prefetch, lease timers) share it without importing the loop.
 */

import type { Job } from '../job.js';

/**
 * What a consumer tells about the jobs it runs. A hook that throws is ignored.
 *
 * @example
 * new Consumer(transport, 'mail', handler, {
 *   hooks: { onDead: (job, { error }) => console.error(`${job.id} is dead: ${error}`) },
 * });
 */
export interface ConsumerHooks<Payload> {
  onStarted?(job: Job<Payload>): void;
  onCompleted?(job: Job<Payload>, info: { durationMs: number }): void;
  /** A failed attempt that will run again: `outcome` says whether now or after a delay. */
  onRetried?(job: Job<Payload>, info: { durationMs: number; error: string; outcome: 'pending' | 'scheduled' }): void;
  onDead?(job: Job<Payload>, info: { durationMs: number; error: string }): void;
  /** The consumer lost the job's lease (it was reaped or removed): its result was not recorded. */
  onFenced?(job: Job<Payload>): void;
  /** Redis trouble or a failed settle: the consumer backs off and goes on. */
  onError?(error: unknown): void;
}

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
  readonly hooks?: ConsumerHooks<Payload>;
}

/**
 * Calls one hook if it is set. A hook that throws is ignored: it must never stop the loop, nor
 * keep a settle from being recorded.
 *
 * @example
 * fireHook(hooks, 'onStarted', job);
 */
export function fireHook<Payload, K extends keyof ConsumerHooks<Payload>>(
  hooks: ConsumerHooks<Payload>,
  name: K,
  ...args: Parameters<NonNullable<ConsumerHooks<Payload>[K]>>
): void {
  try {
    (hooks[name] as ((...a: typeof args) => void) | undefined)?.(...args);
  } catch {
    // a hook must never stop the loop
  }
}

/**
 * Thrown into a held job's signal when its lease is lost.
 *
 * @example
 * if (signal.reason instanceof LeaseLostError) return; // another consumer runs it now
 */
export class LeaseLostError extends Error {
  constructor(readonly jobId: string) {
    super(`the lease of ${jobId} was lost (reaped or removed): stop working on it`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Thrown into held jobs' signals when stop() runs out of time.
 *
 * @example
 * if (signal.reason instanceof ConsumerStoppedError) await saveProgress();
 */
export class ConsumerStoppedError extends Error {
  constructor() {
    super('the consumer stopped before the job finished');
    this.name = 'ConsumerStoppedError';
  }
}
