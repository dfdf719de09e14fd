import { scripts } from '../generated/scripts.js';
import { codes, type Held, heldArgs, type ScriptOp } from './op.js';

/** Renews held leases for `leaseMs`: each job's new deadline, or null when its holder lost it (lua/extend.lua). */
export function extendOp(held: readonly Held[], leaseMs: number): ScriptOp<Array<number | null>> {
  return { script: scripts.extend, args: [leaseMs, ...heldArgs(held)], read: (reply) => codes(reply, 'extend').map((d) => (d > 0 ? d : null)) };
}
