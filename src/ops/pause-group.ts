import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Pauses `group`: no more of its jobs start until it is resumed (lua/pause-group.lua). */
export function pauseGroupOp(group: string): ScriptOp<boolean> {
  return { script: scripts.pauseGroup, args: [group], read: (reply) => asNumber(reply, 'pauseGroup') === 1 };
}
