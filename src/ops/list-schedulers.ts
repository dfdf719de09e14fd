import { scripts } from '../generated/scripts.js';
import { asArray, asRecord, asString } from './reply.js';
import type { ScriptOp } from './op.js';

/** A page of schedulers' rows, soonest next slot first (lua/list-schedulers.lua). */
export function listSchedulersOp(offset: number, limit: number): ScriptOp<Array<{ id: string; row: Record<string, string> }>> {
  return {
    script: scripts.listSchedulers,
    args: [offset, limit],
    read: (reply) => {
      const flat = asArray(reply, 'listSchedulers');
      const out: Array<{ id: string; row: Record<string, string> }> = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ id: asString(flat[i], 'scheduler id'), row: asRecord(flat[i + 1], 'scheduler row') });
      return out;
    },
  };
}
