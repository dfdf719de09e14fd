import { CANCELLABLE_STATES, type CancelJobsOptions, checkCancelJobs, DEFAULT_CANCEL_REASON, MAX_CANCEL_REASON, reasonOf } from '../../queue/cancels.js';
import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the cancel command, for `emq --help`. */
export const CANCEL_USAGE = `  emq cancel <queue> <id> [--reason TEXT]
      Cancels a job that has not finished: one not running ends cancelled at once and never
      runs; a running one is told (its handler's signal aborts) and ends cancelled at its
      settle. Prints {"id", "state"}, state cancelled or cancelling; the same cancel again
      answers as the first. A completed or dead job, or none, is a refusal (exit 2).
  emq cancel <queue> --state <${CANCELLABLE_STATES.join('|')}> [--group G | --ungrouped]
             [--reason TEXT] [--limit N]
      Cancels the jobs of that state (of group G, or the ungrouped ones), at most N; prints
      {"cancelled", "cancelling"}. The reason (1 to ${MAX_CANCEL_REASON} characters, default
      "${DEFAULT_CANCEL_REASON}") is kept on each job.`;

/** The options of a bulk cancel, from the command line; the Queue's own checks run on them before anything connects. */
function bulkOptions(values: { state?: string; group?: string; ungrouped?: boolean; reason?: string; limit?: string }): CancelJobsOptions {
  if (values.group !== undefined && values.ungrouped === true) throw new UsageError('cancel takes --group G or --ungrouped, not both');
  const limit = intOption(values, 'limit');
  const group = values.ungrouped === true ? null : values.group;
  const options = {
    state: values.state as CancelJobsOptions['state'],
    ...(group === undefined ? {} : { group }),
    ...(values.reason === undefined ? {} : { reason: values.reason }),
    ...(limit === undefined ? {} : { limit }),
  };
  // the Queue checks them again; here so bad input never connects
  checkCancelJobs(options);
  return options;
}

/**
 * The cancel command by name, resolving to its exit code: `queue.cancel` for one job, or
 * `queue.cancelJobs` with `--state`, printing what the HTTP routes answer (docs/guides/job-controls.md).
 * Bad input is a usage error (exit 2, one line) before any connection; a job that finished, or
 * none, is the Queue's typed refusal, exit 2 as well.
 *
 * @example
 * await cancelCommands(commandContext()).cancel(['mail', 'JOB:42', '--reason', 'sent by mistake']); // prints {"id", "state"}
 */
export function cancelCommands(cli: CommandContext): Commands {
  return {
    async cancel(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: {
          reason: { type: 'string' },
          state: { type: 'string' },
          group: { type: 'string' },
          ungrouped: { type: 'boolean' },
          limit: { type: 'string' },
        },
      });
      const [name, id, ...extra] = positionals;
      if (!name || extra.length > 0) throw new UsageError('cancel takes <queue> <id>, or <queue> --state STATE');
      if (id !== undefined) {
        if (values.state !== undefined || values.group !== undefined || values.ungrouped !== undefined || values.limit !== undefined) {
          throw new UsageError('cancel takes a job id, or --state STATE with --group, --ungrouped and --limit: not both');
        }
        const options = values.reason === undefined ? {} : { reason: values.reason };
        reasonOf(options);
        printJson(await cli.withQueue(name, (queue) => queue.cancel(id, options)));
        return EXIT.ok;
      }
      if (values.state === undefined) throw new UsageError(`cancel takes <queue> <id>, or <queue> --state <${CANCELLABLE_STATES.join('|')}>`);
      const options = bulkOptions(values);
      printJson(await cli.withQueue(name, (queue) => queue.cancelJobs(options)));
      return EXIT.ok;
    },
  };
}
