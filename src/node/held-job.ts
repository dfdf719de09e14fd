/**
 * A job in a parked consumer's hands, from its claim to its recorded settle: the shapes the loop,
 * its subclasses and its parts (settle batcher, prefetch, lease timers) pass between them. Its
 * `fenced` and `abandoned` flags are what stop a result from being recorded once the lease is not
 * ours any more.
 */

import type { Outcome } from '../handler.js';
import type { Job } from '../job.js';

/**
 * A job this consumer holds a lease on.
 *
 * @example
 * const h: HeldJob<P> = { job, controller: new AbortController(), startedAt: 0, fenced: false, abandoned: false };
 */
export interface HeldJob<Payload> {
  readonly job: Job<Payload>;
  readonly controller: AbortController;
  readonly startedAt: number;
  /** The lease was lost: nothing about this job may be recorded any more. */
  fenced: boolean;
  /** stop() gave up on it: its lease lapses and it is reaped. */
  abandoned: boolean;
}

/**
 * A held job and how its run ended.
 *
 * @example
 * const entry: SettleEntry<P> = { held, outcome: { kind: 'complete' } };
 */
export interface SettleEntry<Payload> {
  readonly held: HeldJob<Payload>;
  readonly outcome: Outcome;
}

/**
 * One settle() call waiting to go out.
 *
 * @example
 * new Promise<void>((resolve) => pending.push({ entries, resolve }));
 */
export interface SettleRequest<Payload> {
  readonly entries: ReadonlyArray<SettleEntry<Payload>>;
  readonly resolve: () => void;
}

/**
 * The lease a held job is recorded under: its id and the fencing token of its claim.
 *
 * @example
 * await queue.extend(live.map(leaseOf), leaseMs);
 */
export const leaseOf = <P>(h: HeldJob<P>): { id: string; token: number } => ({ id: h.job.id, token: h.job.token });
