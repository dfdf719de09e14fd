import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the job command, for `emq --help`. */
export const JOB_USAGE = `  emq job <queue> <id>
      Prints the job (its JobRecord) as JSON; exit 1 when there is no such job.`;

/**
 * The job command by name, resolving to its exit code: `getJob`, printed as JSON.
 *
 * @example
 * const commands = { ...jobCommands(commandContext()) };
 * await commands.job(['mail', 'JOB:42']); // prints the JobRecord
 */
export function jobCommands(cli: CommandContext): Commands {
  return {
    async job(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      const [queueName, id, ...extra] = positionals;
      if (!queueName || !id || extra.length > 0) throw new UsageError('job takes a queue name and a job id');
      return cli.withQueue(queueName, async (queue) => {
        const found = await queue.getJob(id);
        if (!found) {
          process.stderr.write(`emq job: no job ${id} in queue ${queueName}\n`);
          return EXIT.failed;
        }
        printJson(found);
        return EXIT.ok;
      });
    },
  };
}
