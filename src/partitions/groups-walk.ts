import { InvalidArgumentError, shown } from '../errors.js';
import { checkGroupsOptions, type GroupInfo, type GroupsOptions, type GroupsPage, isScanCursor } from '../queue/groups.js';
import { sortedByName } from './combine.js';

/** What the walk reads of each partition: its own page of groups. */
interface GroupsOf {
  groups(options: GroupsOptions): Promise<GroupsPage>;
}

/** A composite cursor as its partition and that partition's SSCAN cursor; absent: the start. */
function cursorOf(cursor: string | undefined, partitions: number): [number, string] {
  if (cursor === undefined) return [0, '0'];
  const match = /^(\d{1,4}):(\d{1,20})$/.exec(cursor);
  const part = match ? Number(match[1]) : -1;
  if (!match || part >= partitions || !isScanCursor(match[2]!)) {
    throw new InvalidArgumentError(`cursor must be the cursor a page of groups answered (<partition>:<cursor>, partition below ${partitions}), got ${shown(cursor)}`);
  }
  return [part, match[2]!];
}

/**
 * One page of the groups of every partition, partition after partition: the cursor is
 * `<partition>:<cursor of its walk>`, null once the last partition's walk is done. A page short of
 * `limit` goes on into the next partitions (a round trip each) until it is full or the last is
 * done, so it may hold groups of several partitions, sorted by name. A group lives in one
 * partition, so it comes from one walk only. A cursor that is not one a page answered is an
 * InvalidArgumentError, before any Redis call.
 *
 * @example
 * const first = await groupsWalk(queue.parts, { limit: 50 }); // e.g. cursor "1:0"
 */
export async function groupsWalk(parts: readonly GroupsOf[], options: GroupsOptions): Promise<GroupsPage> {
  const { cursor, limit, prefix } = checkGroupsOptions(options, false);
  let [part, at] = cursorOf(options.cursor === undefined ? undefined : cursor, parts.length);
  const groups: GroupInfo[] = [];
  for (;;) {
    const page = await parts[part]!.groups({ cursor: at, limit: limit - groups.length, prefix });
    groups.push(...page.groups);
    if (page.cursor !== null) at = page.cursor;
    else if (part + 1 < parts.length) [part, at] = [part + 1, '0'];
    else return { groups: sortedByName(groups), cursor: null };
    if (groups.length >= limit) return { groups: sortedByName(groups), cursor: `${part}:${at}` };
  }
}
