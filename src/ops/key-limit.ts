import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** At most `limit` running jobs naming concurrency key `key`; null lifts it. Answers the jobs parked on it that it readmitted (lua/key-limit.lua). */
export function keyLimitOp(key: string, limit: number | null): ScriptOp<number> {
  return { script: scripts.keyLimit, args: [key, limit ?? -1], read: (reply) => asNumber(reply, 'keyLimit') };
}
