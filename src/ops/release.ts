import { scripts } from '../generated/scripts.js';
import { asArray } from './reply.js';
import { codes, type Held, type ScriptOp, strings, type WithOutbox } from './op.js';

/** A job to give back, and how long to hold its group after (RateLimitedError). */
export interface ReleaseItem extends Held {
  /** Hold the job's group (or the ungrouped lane) this many ms; absent or 0 for none. */
  readonly holdMs?: number | undefined;
}

/**
 * Gives back held jobs never started: back to their lanes, the claim not counted; one with a
 * `holdMs` also holds its group (or the ungrouped lane) for that long (lua/release.lua).
 */
export function releaseOp(held: readonly ReleaseItem[]): ScriptOp<WithOutbox<ReleaseOutcome[]>> {
  return {
    script: scripts.release,
    args: held.flatMap((h) => [h.id, h.token, h.holdMs ?? 0]),
    read: (reply) => {
      const [done, outbox] = asArray(reply, 'release');
      return { value: codes(done ?? [], 'release').map((c) => (c === 1 ? 'released' : c === 9 ? 'cancelled' : 'fenced')), outbox: strings(outbox, 'release outbox') };
    },
  };
}

/**
 * What release did with a job: given back; `cancelled` when its cancel was asked (a job given
 * back ends cancelled, never runs again: docs/guides/job-controls.md); or fenced off.
 */
export type ReleaseOutcome = 'released' | 'cancelled' | 'fenced';
