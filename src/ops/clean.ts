import { scripts } from '../generated/scripts.js';
import type { FinishedState } from '../job.js';
import { asArray, asNumber, asString } from './reply.js';
import { type AdminRequest, type ScriptOp, strings } from './op.js';

/** One chunk of a clean: up to `n` finished rows at or before the cutoff (-1: now less `olderThanMs`): lua/clean.lua. */
export function cleanOp(
  state: FinishedState,
  olderThanMs: number,
  cutoff: number,
  n: number,
  request: AdminRequest,
): ScriptOp<{ cutoff: number; more: boolean; ids: string[]; outbox: string[] }> {
  return {
    script: scripts.clean,
    args: [state, olderThanMs, cutoff, n, request.key, request.ttlMs],
    read: (reply) => {
      const [at, more, ids, outbox] = asArray(reply, 'clean');
      return {
        cutoff: asNumber(at, 'clean cutoff'),
        more: asNumber(more, 'clean more') === 1,
        ids: asArray(ids, 'clean ids').map((id) => asString(id, 'id')),
        outbox: strings(outbox, 'clean outbox'),
      };
    },
  };
}
