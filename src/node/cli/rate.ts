import { checkHoldMs, checkRateLimit, MAX_RATE_MS } from '../../rate-limits.js';
import type { AdminCli } from './admin.js';
import { parseArgs } from './strict-args.js';

/** The usage lines of the rate-limit commands, for `emq --help`. */
export const RATE_USAGE = `  emq rate <queue> [--group G] (--limit N --period-ms MS | --off)
      Sets the queue's rate limit, or with --group the group's: at most N job starts in any
      window of MS ms (1 to ${MAX_RATE_MS}, on Redis's clock); --off lifts it. Prints {"queue",
      "rate"} ({"queue", "group", "rate"} with --group), rate null when lifted.
  emq hold <queue> [--group G] --ms MS
      No job of group G (without --group: the ungrouped jobs) starts for MS ms; the other groups
      keep flowing, and a longer hold it has is kept. Prints {"queue", "group", "heldUntil"}
      (group null for the ungrouped jobs; heldUntil in epoch ms, Redis's clock).`;

const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

/**
 * The rate-limit commands (`rate`, `hold`) by name, each resolving to its exit code: thin calls of
 * `setRateLimit`, `setGroupRateLimit` and `holdGroup`, printing what the HTTP routes answer. Bad
 * input is a usage error (exit 2, one line) before any connection: the options here, the values
 * by the Queue's own checks, in their words.
 *
 * @example
 * const commands = { ...rateCommands({ withQueue, intOption, usage: (m) => new UsageError(m) }) };
 * await commands.rate(['mail', '--group', 'stripe', '--limit', '50', '--period-ms', '1000']); // prints {"queue", "group", "rate"}
 */
export function rateCommands(cli: AdminCli): Record<string, (args: string[]) => Promise<number>> {
  return {
    async rate(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { group: { type: 'string' }, limit: { type: 'string' }, 'period-ms': { type: 'string' }, off: { type: 'boolean' } },
      });
      if (positionals.length !== 1) throw cli.usage('rate takes <queue>, with --limit N --period-ms MS or --off');
      const name = positionals[0]!;
      const limit = cli.intOption(values, 'limit');
      const periodMs = cli.intOption(values, 'period-ms');
      const given = limit !== undefined || periodMs !== undefined;
      if (values.off === true && given) throw cli.usage('rate takes --limit N --period-ms MS, or --off: not both');
      if (values.off !== true && (limit === undefined || periodMs === undefined)) {
        throw cli.usage(given ? 'rate takes --limit N and --period-ms MS together' : 'rate takes --limit N --period-ms MS, or --off');
      }
      // the Queue checks it again; here so bad input never connects
      const rate = checkRateLimit(values.off === true ? null : { limit, periodMs });
      const group = values.group;
      if (group === undefined) {
        await cli.withQueue(name, (queue) => queue.setRateLimit(rate));
        print({ queue: name, rate });
      } else {
        await cli.withQueue(name, (queue) => queue.setGroupRateLimit(group, rate));
        print({ queue: name, group, rate });
      }
      return 0;
    },

    async hold(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { group: { type: 'string' }, ms: { type: 'string' } } });
      if (positionals.length !== 1) throw cli.usage('hold takes <queue>, with --ms MS');
      const name = positionals[0]!;
      const raw = cli.intOption(values, 'ms');
      if (raw === undefined) throw cli.usage('hold takes --ms MS: how long to hold');
      const ms = checkHoldMs(raw);
      const group = values.group ?? null;
      const heldUntil = await cli.withQueue(name, (queue) => queue.holdGroup(group, ms));
      print({ queue: name, group, heldUntil });
      return 0;
    },
  };
}
