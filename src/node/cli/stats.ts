import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the stats command, for `emq --help`. */
export const STATS_USAGE = `  emq stats <queue>
      Prints {"queue", "paused", "counts", "rateLimits"}; rateLimits is {"queue", "groups",
      "throttled"}: the limits, and what may not start jobs yet (at its limit, or held) until when.`;

/**
 * The stats command by name, resolving to its exit code: `stats`, one JSON line.
 *
 * @example
 * const commands = { ...statsCommands(commandContext()) };
 * await commands.stats(['mail']); // prints {"queue", "paused", "counts", "rateLimits"}
 */
export function statsCommands(cli: CommandContext): Commands {
  return {
    async stats(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      const [queueName, ...extra] = positionals;
      if (!queueName || extra.length > 0) throw new UsageError('stats takes one queue name');
      return cli.withQueue(queueName, async (queue) => {
        printJson(await queue.stats());
        return EXIT.ok;
      });
    },
  };
}
