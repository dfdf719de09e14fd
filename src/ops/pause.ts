import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Pauses the queue: true, or false when it was paused already (lua/pause.lua). */
export function pauseOp(): ScriptOp<boolean> {
  return { script: scripts.pause, args: [], read: (reply) => asNumber(reply, 'pause') === 1 };
}
