import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';
import type { RateLimit } from '../queue/rate-limits.js';

/** At most `rate.limit` starts of jobs naming concurrency key `key` in any window of `rate.periodMs`; null lifts it. Answers the jobs parked on it that it readmitted (lua/key-rate.lua). */
export function keyRateOp(key: string, rate: RateLimit | null): ScriptOp<number> {
  return { script: scripts.keyRate, args: [key, rate?.limit ?? -1, rate?.periodMs ?? 0], read: (reply) => asNumber(reply, 'keyRate') };
}

/** At most `limit` running jobs naming concurrency key `key`; null lifts it. Answers the jobs parked on it that it readmitted (lua/key-limit.lua). */
export function keyLimitOp(key: string, limit: number | null): ScriptOp<number> {
  return { script: scripts.keyLimit, args: [key, limit ?? -1], read: (reply) => asNumber(reply, 'keyLimit') };
}
