import { scripts } from '../generated/scripts.js';
import { asArray, asNumber, asRecord } from './reply.js';
import type { ScriptOp } from './op.js';

/** A scheduler's row ({} when there is none) and the server's time, read together (lua/get-scheduler.lua). */
export function getSchedulerOp(id: string): ScriptOp<{ now: number; row: Record<string, string> }> {
  return {
    script: scripts.getScheduler,
    args: [id],
    read: (reply) => {
      const [now, row] = asArray(reply, 'getScheduler');
      return { now: asNumber(now, 'now'), row: asRecord(row, 'scheduler row') };
    },
  };
}
