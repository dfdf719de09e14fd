import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Resumes `group` (lua/resume-group.lua). */
export function resumeGroupOp(group: string): ScriptOp<boolean> {
  return { script: scripts.resumeGroup, args: [group], read: (reply) => asNumber(reply, 'resumeGroup') === 1 };
}
