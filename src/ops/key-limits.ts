import { scripts } from '../generated/scripts.js';
import { asArray, asNumber, asString } from './reply.js';
import type { ScriptOp } from './op.js';

/** A concurrency key as `Queue.keyLimits` shows it. */
export interface KeyInfo {
  /** Its name (`org:7`). */
  readonly key: string;
  /** Its limit on running jobs; null for none. */
  readonly limit: number | null;
  /** Jobs naming it that run now. */
  readonly running: number;
  /** Jobs waiting for it: claimed while it was at its limit, parked until it frees a slot. */
  readonly parked: number;
}

/** Every concurrency key the queue's jobs named, sorted, at most `most` (lua/key-limits.lua). */
export function keyLimitsOp(most: number): ScriptOp<KeyInfo[]> {
  return {
    script: scripts.keyLimits,
    args: [most],
    read: (reply) =>
      asArray(reply, 'keyLimits').map((entry) => {
        const [key, limit, running, parked] = asArray(entry, 'keyLimits entry');
        const l = asNumber(limit, 'key limit');
        return { key: asString(key, 'key'), limit: l < 0 ? null : l, running: asNumber(running, 'key running'), parked: asNumber(parked, 'key parked') };
      }),
  };
}
