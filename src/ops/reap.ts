import { scripts } from '../generated/scripts.js';
import { codes, type ScriptOp } from './op.js';

/** Takes back up to `limit` expired leases: requeued, or buried when that was their last attempt (lua/reap.lua). */
export function reapOp(limit: number): ScriptOp<{ requeued: number; buried: number }> {
  return {
    script: scripts.reap,
    args: [limit],
    read: (reply) => {
      const [requeued, buried] = codes(reply, 'reap');
      return { requeued: requeued ?? 0, buried: buried ?? 0 };
    },
  };
}
