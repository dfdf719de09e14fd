import { scripts } from '../generated/scripts.js';
import { codes, nullable, type ScriptOp } from './op.js';

/** Moves up to `limit` due scheduled jobs to be claimed, and answers when the next falls due (lua/promote.lua). */
export function promoteOp(limit: number): ScriptOp<{ promoted: number; nextDueAt: number | null }> {
  return {
    script: scripts.promote,
    args: [limit],
    read: (reply) => {
      const [promoted, next] = codes(reply, 'promote');
      return { promoted: promoted ?? 0, nextDueAt: nullable(next ?? -1) };
    },
  };
}
