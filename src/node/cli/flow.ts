import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from '../../errors.js';
import { type FlowJob, Flows } from '../../flows/flows.js';
import { type Commands, printJson } from './command.js';
import type { CommandContext } from './command-context.js';
import { parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the flow command, for `emq --help`. */
export const FLOW_USAGE = `  emq flow <json-file>
      Writes a flow from the file (- reads stdin): the root job {queue, payload, id?, group?,
      priority?, maxAttempts?, backoff?, children?}, each child a job of any queue with its own
      children, delayMs or runAt (a leaf only) and onFailure (fail-parent, ignore or remove). A
      parent waits until its children have finished. A job without an id gets <parent id>.<index>,
      so the same file again is duplicates. Prints the tree as written, one JSON line of {queue,
      id, state, children}; a file or tree it cannot take: exit 2, one line, nothing written.`;

/** All of stdin, as text. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The flow command by name, resolving to its exit code: a thin call of `Flows.add`, printing the
 * tree `POST /v1/flows` answers. A file that cannot be read or is not JSON is bad input (exit 2,
 * one line), as is a tree `Flows.add` refuses, in its words, naming the path
 * (`children[2].queue: ...`); either way before any write.
 *
 * @example
 * const commands = { ...flowCommands(commandContext()) };
 * await commands.flow(['report.json']); // prints {"queue", "id", "state", "children"}
 */
export function flowCommands(cli: CommandContext): Commands {
  return {
    async flow(args) {
      const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
      if (positionals.length !== 1) throw new UsageError('flow takes one JSON file (- for stdin)');
      const file = positionals[0]!;
      const from = file === '-' ? 'stdin' : file;
      let text: string;
      try {
        text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
      } catch (error) {
        throw new InvalidArgumentError(`cannot read ${from}: ${(error as Error).message}`);
      }
      let tree: unknown;
      try {
        tree = JSON.parse(text);
      } catch (error) {
        throw new InvalidArgumentError(`${from} is not JSON: ${(error as Error).message}`);
      }
      // Flows.add checks every node before it writes anything
      const options = cli.durability();
      const written = await cli.withTransport((transport) => new Flows(transport, options).add(tree as FlowJob));
      printJson(written);
      return 0;
    },
  };
}
