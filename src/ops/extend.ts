import { scripts } from '../generated/scripts.js';
import { asArray, asNumber } from './reply.js';
import { type Held, heldArgs, type ScriptOp } from './op.js';

/**
 * What a renewal answered for one held job: its new lease deadline (ms); `{ cancel }` with the
 * reason when its cancel was asked (renewed: the holder aborts the run, whose settle ends it
 * cancelled, docs/guides/job-controls.md) or its run already ended cancelled (its settle, or the
 * reaper: the holder aborts it all the same); or null when its holder lost it.
 */
export type Renewal =
  | number
  | {
      /** The cancel's reason (null only from a script older than the reason's answer). */
      readonly cancel: string | null;
    }
  | null;

/** The code each_held answers for a run that ended cancelled under its token (lua/includes/each_held.lua). */
const CANCELLED_CODE = 9;

/** Renews held leases for `leaseMs`: per job, what the renewal answered (lua/extend.lua). */
export function extendOp(held: readonly Held[], leaseMs: number): ScriptOp<Renewal[]> {
  return {
    script: scripts.extend,
    args: [leaseMs, ...heldArgs(held)],
    read: (reply) =>
      asArray(reply, 'extend').map((v): Renewal => {
        if (typeof v === 'string' && v.startsWith('x')) return { cancel: v.slice(1) };
        const d = asNumber(v, 'extend');
        if (d === CANCELLED_CODE) return { cancel: null };
        return d > 0 ? d : null;
      }),
  };
}
