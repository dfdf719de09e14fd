import { scripts } from '../generated/scripts.js';
import { asArray, asNumber } from './reply.js';
import { type AdminRequest, type ScriptOp, strings } from './op.js';

/** One chunk of reprocessDead: up to `n` dead jobs, oldest first, back to their lanes (lua/reprocess-dead.lua). */
export function reprocessDeadOp(n: number, request: AdminRequest): ScriptOp<{ reprocessed: number; more: boolean; outbox: string[] }> {
  return {
    script: scripts.reprocessDead,
    args: [n, request.key, request.ttlMs],
    read: (reply) => {
      const [reprocessed, more, outbox] = asArray(reply, 'reprocessDead');
      return { reprocessed: asNumber(reprocessed, 'reprocessDead'), more: asNumber(more, 'reprocessDead more') === 1, outbox: strings(outbox, 'reprocessDead outbox') };
    },
  };
}
