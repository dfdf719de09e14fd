import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { intOption, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the send-event command, for `emq --help`. */
export const SEND_EVENT_USAGE = `  emq send-event <queue> <event> [<json>] [--id ID] [--keep-ms N]
      Sends an event to the queue's jobs waiting for it (step.waitForEvent): each matching
      waiter resumes once. --id makes a repeat harmless; --keep-ms keeps it for waits that
      begin later (default 600000). Prints {id, resumed}.`;

/** The event's data given on the command line, parsed; text that is not JSON is a usage error. */
function dataArgument(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new UsageError(`the event data is not JSON: ${json}`);
  }
}

/**
 * The send-event command by name, resolving to its exit code: `queue.sendEvent`, its answer
 * printed as JSON (docs/guides/steps.md).
 *
 * @example
 * await sendEventCommands(commandContext())['send-event'](['signup', 'email.verified', '{"userId":42}']);
 */
export function sendEventCommands(cli: CommandContext): Commands {
  return {
    async 'send-event'(args) {
      const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { id: { type: 'string' }, 'keep-ms': { type: 'string' } } });
      const [queueName, event, json, ...extra] = positionals;
      if (!queueName || !event || extra.length > 0) throw new UsageError('send-event takes a queue name, an event name and at most one JSON data argument');
      const data = json === undefined ? null : dataArgument(json);
      const keepMs = intOption(values, 'keep-ms');
      const id = values.id as string | undefined;
      return cli.withQueue(queueName, async (queue) => {
        printJson(await queue.sendEvent(event, data, { ...(id === undefined ? {} : { id }), ...(keepMs === undefined ? {} : { keepMs }) }));
        return EXIT.ok;
      });
    },
  };
}
