import { scripts } from '../generated/scripts.js';
import { codes, type ScriptOp } from './op.js';

/** Applies flow children's news (outbox entries of other queues) to their parents in this queue (lua/flow-apply.lua). */
export function flowApplyOp(entries: readonly string[]): ScriptOp<{ applied: number; released: number }> {
  return {
    script: scripts.flowApply,
    args: entries,
    read: (reply) => {
      const [applied, released] = codes(reply, 'flowApply');
      return { applied: applied ?? 0, released: released ?? 0 };
    },
  };
}
