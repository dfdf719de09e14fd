import { checkGroupsOptions, type GroupInfo, GROUPS_PAGE } from '../../queue/groups.js';
import { type Commands, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the groups command, for `emq --help`. */
export const GROUPS_USAGE = `  emq groups <queue> [--prefix P] [--limit N] [--json]
      Lists the queue's groups (every group that ever had a job), sorted by name: active jobs,
      limit, rate limit, paused, hold and throttle ends, jobs waiting. Walks every page; --limit N
      stops after N groups. --prefix: only names starting with P. A table, or with --json one
      JSON line per group, {"group", "active", "limit", "rate", "paused", "heldUntil",
      "throttledUntil", "waiting"} as GET /v1/queues/:queue/groups answers them.`;

/** The columns of the table, each with how it shows a group's value. */
const COLUMNS: ReadonlyArray<[string, (g: GroupInfo) => string]> = [
  ['GROUP', (g) => g.group],
  ['ACTIVE', (g) => String(g.active)],
  ['LIMIT', (g) => (g.limit === null ? '-' : String(g.limit))],
  ['RATE', (g) => (g.rate === null ? '-' : `${g.rate.limit}/${g.rate.periodMs}ms`)],
  ['PAUSED', (g) => (g.paused ? 'yes' : 'no')],
  ['HELD-UNTIL', (g) => (g.heldUntil === null ? '-' : new Date(g.heldUntil).toISOString())],
  ['THROTTLED-UNTIL', (g) => (g.throttledUntil === null ? '-' : new Date(g.throttledUntil).toISOString())],
  ['WAITING', (g) => String(g.waiting)],
];

/** `groups` as an aligned table, a header line first. */
function table(groups: readonly GroupInfo[]): string {
  const rows = [COLUMNS.map(([title]) => title), ...groups.map((g) => COLUMNS.map(([, show]) => show(g)))];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/**
 * The groups command by name, resolving to its exit code: a walk of `Queue.groups` (of every
 * partition for a partitioned queue), each group printed once however often the walk met it.
 * A bad limit or prefix is a usage error (exit 2, the Queue's own words) before any connection.
 *
 * @example
 * const commands = { ...groupsCommands(commandContext()) };
 * await commands.groups(['mail', '--prefix', 'tenant-', '--json']); // one JSON line per group
 */
export function groupsCommands(cli: CommandContext): Commands {
  return {
    async groups(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { prefix: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
      });
      if (positionals.length !== 1) throw new UsageError('groups takes <queue>');
      const name = positionals[0]!;
      const most = intOption(values, 'limit');
      // the Queue checks them again; here so bad input never connects
      const { prefix, limit } = checkGroupsOptions({ prefix: values.prefix, ...(most === undefined ? {} : { limit: most }) }, true);
      const wanted = most ?? Number.POSITIVE_INFINITY;
      const found = await cli.withQueue(name, async (queue) => {
        const seen = new Map<string, GroupInfo>();
        let cursor: string | null | undefined;
        do {
          const page = await queue.groups({ prefix, limit: most === undefined ? GROUPS_PAGE.max : limit, ...(cursor ? { cursor } : {}) });
          for (const group of page.groups) seen.set(group.group, group);
          cursor = page.cursor;
        } while (cursor !== null && seen.size < wanted);
        return [...seen.values()];
      });
      const groups = found.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0)).slice(0, wanted);
      if (values.json === true) for (const group of groups) printJson(group);
      else process.stdout.write(`${table(groups)}\n`);
      return 0;
    },
  };
}
