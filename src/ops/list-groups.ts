import { scripts } from '../generated/scripts.js';
import type { GroupInfo, GroupsPage } from '../queue/groups.js';
import { parseRate } from '../queue/rate-limits.js';
import { asArray, asNumber, asString } from './reply.js';
import type { Reply } from '../transport.js';
import type { ScriptOp } from './op.js';

const optional = (value: Reply | undefined, what: string): number | null => {
  const text = asString(value, what);
  return text === '' ? null : Number(text);
};

/**
 * One page of the queue's groups with their numbers, by SSCAN from `cursor` ("0" to start),
 * about `count` a page, only names starting with `prefix` ("" for all): lua/list-groups.lua.
 */
export function listGroupsOp(cursor: string, count: number, prefix: string): ScriptOp<GroupsPage> {
  return {
    script: scripts.listGroups,
    args: [cursor, count, prefix],
    read: (reply) => {
      const [next, rows] = asArray(reply, 'listGroups');
      const cursorNext = asString(next, 'listGroups cursor');
      const groups = asArray(rows, 'listGroups rows').map((entry): GroupInfo => {
        const row = asArray(entry, 'listGroups row');
        return {
          group: asString(row[0], 'group'),
          active: asNumber(row[1], 'group active'),
          limit: optional(row[2], 'group limit'),
          rate: parseRate(asString(row[3], 'group rate')),
          paused: asNumber(row[4], 'group paused') === 1,
          heldUntil: optional(row[5], 'group heldUntil'),
          throttledUntil: optional(row[6], 'group throttledUntil'),
          waiting: asNumber(row[7], 'group lane') + asNumber(row[8], 'group arrivals'),
        };
      });
      return { groups, cursor: cursorNext === '0' ? null : cursorNext };
    },
  };
}
