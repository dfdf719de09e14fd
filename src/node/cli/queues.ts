import { queueOverviews } from '../../queue/registry.js';
import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the queues command, for `emq --help`. */
export const QUEUES_USAGE = `  emq queues
      Prints {"queues": [...]}: every queue of the registry (each that has had a job enqueued),
      sorted by name, each {"queue", "paused", "counts", "deadTotal", "retriedTotal",
      "stalledTotal", "firedTotal", "rateLimitedTotal"}, as GET /v1/queues answers; a
      partitioned queue is one row, its partitions summed, with "partitions" (its count).`;

/**
 * The queues command by name, resolving to its exit code: every queue of the registry with its
 * counts, one JSON line (the body of `GET /v1/queues`).
 *
 * @example
 * const commands = { ...queuesCommands(commandContext()) };
 * await commands.queues([]); // prints {"queues": [...]}
 */
export function queuesCommands(cli: CommandContext): Commands {
  return {
    async queues(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length > 0) throw new UsageError('queues takes no arguments');
      return cli.withTransport(async (transport) => {
        printJson({ queues: await queueOverviews(transport) });
        return EXIT.ok;
      });
    },
  };
}
