#!/usr/bin/env node
// The `emq` executable (package.json "bin"). It always runs: npm links bins as symlinks, so a
// module cannot tell it is the entry point by comparing its own URL with argv[1].
import { EXIT, main } from './cli.js';

/**
 * Exits once what was written has gone out: to a pipe, stdout is asynchronous and takes 64 KiB at
 * a time, so exiting at once would cut a long answer (`emq queues` over many queues) short. An
 * empty write's callback runs after every write before it.
 */
const exit = (code: number): void => {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};

main(process.argv.slice(2)).then(exit, (error: unknown) => {
  process.stderr.write(`emq: ${(error as Error).message}\n`);
  exit(EXIT.failed);
});
