import { scripts } from '../generated/scripts.js';
import type { RateLimitsRead } from '../queue/rate-limits.js';
import { asArray, asNumber, asString } from './reply.js';
import type { ScriptOp } from './op.js';

/** The rate limits, holds and throttled entries (at most `limit` of those, earliest first): lua/rate-limits.lua. */
export function rateLimitsOp(limit: number): ScriptOp<RateLimitsRead> {
  return {
    script: scripts.rateLimits,
    args: [limit],
    read: (reply) => {
      const [now, queue, groups, throttled] = asArray(reply, 'rateLimits');
      const pairs = asArray(groups, 'rate limits').map((v) => asString(v, 'rate limit'));
      const rows = asArray(throttled, 'throttled').map((v) => asString(v, 'throttled'));
      const entries: Array<RateLimitsRead['throttled'][number]> = [];
      for (let i = 0; i + 2 < rows.length; i += 3) {
        entries.push({ entry: rows[i]!, until: Number(rows[i + 1]), heldUntil: rows[i + 2] === '' ? null : Number(rows[i + 2]) });
      }
      const groupRates: Array<[string, string]> = [];
      for (let i = 0; i + 1 < pairs.length; i += 2) groupRates.push([pairs[i]!, pairs[i + 1]!]);
      return { now: asNumber(now, 'now'), queue: asString(queue, 'queue rate'), groups: groupRates, throttled: entries };
    },
  };
}
