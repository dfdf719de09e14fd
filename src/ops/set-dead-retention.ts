import { scripts } from '../generated/scripts.js';
import type { DeadRetention } from '../job.js';
import { readRetention } from './dead-retention.js';
import type { ScriptOp } from './op.js';

/** Stores the retention of dead jobs (null: no limit of that kind) and answers it (lua/set-dead-retention.lua). */
export function setDeadRetentionOp(maxAgeMs: number | null, maxCount: number | null): ScriptOp<DeadRetention> {
  return { script: scripts.setDeadRetention, args: [maxAgeMs ?? -1, maxCount ?? -1], read: (reply) => readRetention(reply, 'setDeadRetention') };
}
