import { scripts } from '../generated/scripts.js';
import type { RateLimit } from '../queue/rate-limits.js';
import type { ScriptOp } from './op.js';

/** What stands for the queue in set-rate.lua's ARGV: not a valid group name. */
const QUEUE_ENTRY = '!';

/** Sets (or with null lifts) the rate limit of `group`, or of the queue when `group` is null (lua/set-rate.lua). */
export function setRateOp(group: string | null, rate: RateLimit | null): ScriptOp<void> {
  return { script: scripts.setRate, args: [group ?? QUEUE_ENTRY, rate?.limit ?? -1, rate?.periodMs ?? 0], read: () => undefined };
}
