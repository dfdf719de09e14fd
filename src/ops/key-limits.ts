import { scripts } from '../generated/scripts.js';
import { asArray, asNumber, asString } from './reply.js';
import type { ScriptOp } from './op.js';
import { parseRate, type RateLimit } from '../queue/rate-limits.js';

/** A concurrency key as `Queue.keyLimits` shows it. */
export interface KeyInfo {
  /** Its name (`org:7`). */
  readonly key: string;
  /** Its limit on running jobs; null for none. */
  readonly limit: number | null;
  /** Jobs naming it that run now. */
  readonly running: number;
  /** Jobs waiting for it: claimed while it was at its limit or its rate, parked until it has room. */
  readonly parked: number;
  /** Its rate limit (starts of jobs naming it per window); null for none. */
  readonly rate: RateLimit | null;
  /** While its rate keeps parked jobs waiting: when one more may start (server ms); else null. */
  readonly throttledUntil: number | null;
}

/** Every concurrency key the queue's jobs named, sorted, at most `most` (lua/key-limits.lua). */
export function keyLimitsOp(most: number): ScriptOp<KeyInfo[]> {
  return {
    script: scripts.keyLimits,
    args: [most],
    read: (reply) =>
      asArray(reply, 'keyLimits').map((entry) => {
        const [key, limit, running, parked, rate, until] = asArray(entry, 'keyLimits entry');
        const l = asNumber(limit, 'key limit');
        const u = asNumber(until, 'key throttled until');
        return {
          key: asString(key, 'key'),
          limit: l < 0 ? null : l,
          running: asNumber(running, 'key running'),
          parked: asNumber(parked, 'key parked'),
          rate: parseRate(asString(rate, 'key rate')),
          throttledUntil: u < 0 ? null : u,
        };
      }),
  };
}
