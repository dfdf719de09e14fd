import { scripts } from '../generated/scripts.js';
import { asArray } from './reply.js';
import { type ClaimResult, readClaim } from './claim.js';
import { codes, type Held, type ScriptOp, strings } from './op.js';

/** A job to settle by completing it, with its handler's result. */
export interface CompleteItem extends Held {
  /** The handler's result as JSON text, for the row's `r`; absent (or undefined) for none. */
  readonly result?: string | undefined;
}

/** What complete did with a job. */
export type CompleteOutcome = 'completed' | 'cancelled' | 'fenced';

const COMPLETE_OUTCOMES: Record<number, CompleteOutcome> = { 0: 'fenced', 1: 'completed', 9: 'cancelled' };

/** What a complete (lua/complete.lua) answered. */
export interface CompleteResult {
  /**
   * Per held job, in order: `completed`; `cancelled` when its cancel was asked while it ran (the
   * settle ended it cancelled whatever its result: docs/guides/job-controls.md); `fenced` when its
   * lease was lost (nothing changed).
   */
  outcomes: CompleteOutcome[];
  /** What the same call claimed (with `claimN`), else null. */
  claimed: ClaimResult | null;
  /** The flow news it wrote, to relay. */
  outbox: string[];
}

/** Completes held jobs, each with its result ('' for none: complete.lua takes triples), and claims `claimN` after. */
export function completeOp(
  held: readonly CompleteItem[],
  options: { keepMs: number; claimN?: number; leaseMs?: number; requestKey?: string },
): ScriptOp<CompleteResult> {
  const leaseMs = options.leaseMs ?? 30_000;
  const args: Array<string | number> = [options.keepMs, options.claimN ?? 0, leaseMs, options.requestKey ?? ''];
  // pushed, not flatMapped: an array a job less, for every job completed
  for (const h of held) args.push(h.id, h.token, h.result ?? '');
  return {
    script: scripts.complete,
    args,
    read: (reply) => {
      const [done, claimed, outbox] = asArray(reply, 'complete');
      const claimList = asArray(claimed, 'complete claim');
      return {
        outcomes: codes(done ?? [], 'complete').map((c) => COMPLETE_OUTCOMES[c] ?? 'fenced'),
        claimed: claimList.length > 0 ? readClaim(claimList, leaseMs) : null,
        outbox: strings(outbox, 'complete outbox'),
      };
    },
  };
}
