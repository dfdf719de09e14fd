import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Resumes the queue: true, or false when it was not paused (lua/resume.lua). */
export function resumeOp(): ScriptOp<boolean> {
  return { script: scripts.resume, args: [], read: (reply) => asNumber(reply, 'resume') === 1 };
}
