import { scripts } from '../generated/scripts.js';
import { type ScriptOp, strings } from './op.js';
import { asArray, asNumber } from './reply.js';

/** Applies flow children's news (outbox entries of other queues) to their parents in this queue (lua/flow-apply.lua). */
export function flowApplyOp(entries: readonly string[]): ScriptOp<{ applied: number; released: number; outbox: readonly string[] }> {
  return {
    script: scripts.flowApply,
    args: entries,
    read: (reply) => {
      const [applied, released, outbox] = asArray(reply, 'flowApply');
      return { applied: asNumber(applied, 'flowApply'), released: asNumber(released, 'flowApply'), outbox: strings(outbox, 'flowApply outbox') };
    },
  };
}
