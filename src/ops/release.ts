import { scripts } from '../generated/scripts.js';
import { codes, type Held, type ScriptOp } from './op.js';

/** A job to give back, and how long to hold its group after (RateLimitedError). */
export interface ReleaseItem extends Held {
  /** Hold the job's group (or the ungrouped lane) this many ms; absent or 0 for none. */
  readonly holdMs?: number | undefined;
}

/**
 * Gives back held jobs never started: back to their lanes, the claim not counted; one with a
 * `holdMs` also holds its group (or the ungrouped lane) for that long (lua/release.lua).
 */
export function releaseOp(held: readonly ReleaseItem[]): ScriptOp<Array<'released' | 'fenced'>> {
  return {
    script: scripts.release,
    args: held.flatMap((h) => [h.id, h.token, h.holdMs ?? 0]),
    read: (reply) => codes(reply, 'release').map((c) => (c === 1 ? 'released' : 'fenced')),
  };
}
