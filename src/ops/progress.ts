import { scripts } from '../generated/scripts.js';
import { codes, type Held, heldArgs, type ScriptOp } from './op.js';

/** Writes `progress` (JSON text) into each held job's row: true written, false fenced off (lua/progress.lua). */
export function progressOp(held: readonly Held[], progress: string): ScriptOp<boolean[]> {
  return { script: scripts.progress, args: [progress, ...heldArgs(held)], read: (reply) => codes(reply, 'progress').map((c) => c === 1) };
}
