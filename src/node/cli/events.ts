import { type Commands, EXIT, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the events command, for `emq --help`. */
export const EVENTS_USAGE = `  emq events <queue> [--after ID] [--follow]
      Prints the queue's events, one JSON line each, oldest first, after entry id ID (default 0:
      all the stream keeps); --follow then waits for more (parked on XREAD BLOCK) until SIGTERM
      or SIGINT. A partitioned queue has a stream a partition: without --follow they are printed
      one partition after the other; with it, interleaved as they come.`;

/**
 * The events command by name, resolving to its exit code: the pages of `readEvents` of each
 * stream, or with --follow the `events` subscription until SIGTERM or SIGINT.
 *
 * @example
 * const commands = { ...eventsCommands(commandContext()) };
 * await commands.events(['mail', '--after', '0']); // one JSON line per event
 */
export function eventsCommands(cli: CommandContext): Commands {
  return {
    async events(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { after: { type: 'string' }, follow: { type: 'boolean' } },
      });
      const [queueName, ...extra] = positionals;
      if (!queueName || extra.length > 0) throw new UsageError('events takes one queue name');
      const after = values.after ?? '0';
      return cli.withQueue(queueName, async (queue) => {
        if (!values.follow) {
          // a partitioned queue's streams one after the other, each from `after` (an entry id is a time)
          for (const part of queue.parts) {
            for (let from = after; ; ) {
              const page = await part.readEvents({ after: from, limit: 1000 });
              page.events.forEach(printJson);
              if (page.next === from) break;
              from = page.next;
            }
          }
          return EXIT.ok;
        }
        const stop = new AbortController();
        const onSignal = (): void => stop.abort();
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        try {
          for await (const event of queue.events({ after, signal: stop.signal })) printJson(event);
        } finally {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
        }
        return EXIT.ok;
      });
    },
  };
}
