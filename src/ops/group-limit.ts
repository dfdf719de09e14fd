import { scripts } from '../generated/scripts.js';
import type { ScriptOp } from './op.js';

/** At most `limit` of `group`'s jobs active at once; null lifts the limit (lua/group-limit.lua). */
export function groupLimitOp(group: string, limit: number | null): ScriptOp<void> {
  return { script: scripts.groupLimit, args: [group, limit ?? -1], read: () => undefined };
}
