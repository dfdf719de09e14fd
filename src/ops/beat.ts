import { scripts } from '../generated/scripts.js';
import { type ClaimResult, readClaim } from './claim.js';
import type { ScriptOp } from './op.js';

/** What one beat does (lua/beat.lua): reap and promote at most the limits, then claim up to `n`. */
export interface BeatArgs {
  readonly reapLimit: number;
  readonly promoteLimit: number;
  readonly n: number;
  readonly leaseMs: number;
  /** The claim's request key ("" for none): the same key again answers the same jobs. */
  readonly requestKey?: string;
}

/** Reaps, promotes, then claims, answering the next due time and lease deadline even when it claimed `n`. */
export function beatOp(options: BeatArgs): ScriptOp<ClaimResult> {
  const { reapLimit, promoteLimit, n, leaseMs, requestKey = '' } = options;
  return { script: scripts.beat, args: [reapLimit, promoteLimit, n, leaseMs, requestKey], read: (reply) => readClaim(reply, leaseMs) };
}
