import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** The ring entry of ungrouped work in hold-group.lua's ARGV: not a valid group name. */
const UNGROUPED_ENTRY = '*';

/** Holds `group` (null: the ungrouped lane) for `ms`; answers the server time it is held until (lua/hold-group.lua). */
export function holdGroupOp(group: string | null, ms: number): ScriptOp<number> {
  return { script: scripts.holdGroup, args: [group ?? UNGROUPED_ENTRY, ms], read: (reply) => asNumber(reply, 'holdGroup') };
}
