import { EmqError } from '../../errors.js';
import { adminCommands } from './admin.js';
import { cancelCommands } from './cancel.js';
import { type Commands, EXIT } from './command.js';
import { type CommandContext, commandContext } from './command-context.js';
import { consumeCommands } from './consume.js';
import { enqueueCommands } from './enqueue.js';
import { eventsCommands } from './events.js';
import { flowCommands } from './flow.js';
import { groupsCommands } from './groups.js';
import { initCommands } from './init.js';
import { jobCommands } from './job.js';
import { keysCommands } from './keys.js';
import { queuesCommands } from './queues.js';
import { rateCommands } from './rate.js';
import { scheduleCommands } from './schedule.js';
import { sendEventCommands } from './send-event.js';
import { serverCommands } from './servers.js';
import { statsCommands } from './stats.js';
import { didYouMean, UsageError } from './strict-args.js';
import { USAGE } from './usage.js';

export { EXIT } from './command.js';

/** Every command by name, over the context of one run (the order is the "did you mean" order). */
const commandsOf = (cli: CommandContext): Commands => ({
  ...consumeCommands(cli),
  ...enqueueCommands(cli),
  ...jobCommands(cli),
  ...sendEventCommands(cli),
  ...cancelCommands(cli),
  ...eventsCommands(cli),
  ...statsCommands(cli),
  ...queuesCommands(cli),
  ...serverCommands(cli),
  ...initCommands(),
  ...adminCommands(cli),
  ...scheduleCommands(cli),
  ...rateCommands(cli),
  ...groupsCommands(cli),
  ...keysCommands(cli),
  ...flowCommands(cli),
});

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help' || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return command ? EXIT.ok : EXIT.usage;
  }
  // each run reads its environment afresh (tests call main() in one process)
  const commands = commandsOf(commandContext());
  // own keys only: `emq toString` is an unknown command, not Object.prototype's method
  const run = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (!run) {
    process.stderr.write(`emq: unknown command ${JSON.stringify(command)}${didYouMean(command, Object.keys(commands))}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  try {
    return await run(args);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`emq ${command}: ${error.message}\n(see emq --help)\n`);
      return EXIT.usage;
    }
    if (error instanceof EmqError && error.status < 500) {
      process.stderr.write(`emq ${command}: ${error.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`emq ${command}: ${(error as Error).message ?? String(error)}\n`);
    return EXIT.failed;
  }
}
