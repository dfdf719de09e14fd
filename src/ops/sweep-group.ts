import { scripts } from '../generated/scripts.js';
import { codes, type ScriptOp } from './op.js';

/** The counted sweep: recounts `group`'s active jobs and repairs its stored count (lua/sweep-group.lua). */
export function sweepGroupOp(group: string): ScriptOp<{ stored: number; counted: number }> {
  return {
    script: scripts.sweepGroup,
    args: [group],
    read: (reply) => {
      const [stored, counted] = codes(reply, 'sweepGroup');
      return { stored: stored ?? 0, counted: counted ?? 0 };
    },
  };
}
