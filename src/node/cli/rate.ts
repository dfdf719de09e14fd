import { checkHoldMs, checkRateLimit, MAX_RATE_MS } from '../../queue/rate-limits.js';
import { type Commands, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the rate-limit commands, for `emq --help`. */
export const RATE_USAGE = `  emq rate <queue> [--group G] (--limit N --period-ms MS | --off)
      Sets the queue's rate limit, or with --group the group's: at most N job starts in any
      window of MS ms (1 to ${MAX_RATE_MS}, on Redis's clock); --off lifts it. Prints {"queue",
      "rate"} ({"queue", "group", "rate"} with --group), rate null when lifted.
  emq hold <queue> [--group G] --ms MS
      No job of group G (without --group: the ungrouped jobs) starts for MS ms; the other groups
      keep flowing, and a longer hold it has is kept. Prints {"queue", "group", "heldUntil"}
      (group null for the ungrouped jobs; heldUntil in epoch ms, Redis's clock).`;

/**
 * The rate-limit commands (`rate`, `hold`) by name, each resolving to its exit code: thin calls of
 * `setRateLimit`, `setGroupRateLimit` and `holdGroup`, printing what the HTTP routes answer. Bad
 * input is a usage error (exit 2, one line) before any connection: the options here, the values
 * by the Queue's own checks, in their words.
 *
 * @example
 * const commands = { ...rateCommands(commandContext()) };
 * await commands.rate(['mail', '--group', 'stripe', '--limit', '50', '--period-ms', '1000']); // prints {"queue", "group", "rate"}
 */
export function rateCommands(cli: CommandContext): Commands {
  return {
    async rate(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { group: { type: 'string' }, limit: { type: 'string' }, 'period-ms': { type: 'string' }, off: { type: 'boolean' } },
      });
      if (positionals.length !== 1) throw new UsageError('rate takes <queue>, with --limit N --period-ms MS or --off');
      const name = positionals[0]!;
      const limit = intOption(values, 'limit');
      const periodMs = intOption(values, 'period-ms');
      const given = limit !== undefined || periodMs !== undefined;
      if (values.off === true && given) throw new UsageError('rate takes --limit N --period-ms MS, or --off: not both');
      if (values.off !== true && (limit === undefined || periodMs === undefined)) {
        throw new UsageError(given ? 'rate takes --limit N and --period-ms MS together' : 'rate takes --limit N --period-ms MS, or --off');
      }
      // the Queue checks it again; here so bad input never connects
      const rate = checkRateLimit(values.off === true ? null : { limit, periodMs });
      const group = values.group;
      if (group === undefined) {
        await cli.withQueue(name, (queue) => queue.setRateLimit(rate));
        printJson({ queue: name, rate });
      } else {
        await cli.withQueue(name, (queue) => queue.setGroupRateLimit(group, rate));
        printJson({ queue: name, group, rate });
      }
      return 0;
    },

    async hold(args) {
      const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { group: { type: 'string' }, ms: { type: 'string' } } });
      if (positionals.length !== 1) throw new UsageError('hold takes <queue>, with --ms MS');
      const name = positionals[0]!;
      const raw = intOption(values, 'ms');
      if (raw === undefined) throw new UsageError('hold takes --ms MS: how long to hold');
      const ms = checkHoldMs(raw);
      const group = values.group ?? null;
      const heldUntil = await cli.withQueue(name, (queue) => queue.holdGroup(group, ms));
      printJson({ queue: name, group, heldUntil });
      return 0;
    },
  };
}
