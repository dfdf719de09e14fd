import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Deletes scheduler `id`: true when there was one (lua/remove-scheduler.lua). */
export function removeSchedulerOp(id: string): ScriptOp<boolean> {
  return { script: scripts.removeScheduler, args: [id], read: (reply) => asNumber(reply, 'removeScheduler') === 1 };
}
