#!/usr/bin/env node
// The `emq` executable (package.json "bin"). It always runs: npm links bins as symlinks, so a
// module cannot tell it is the entry point by comparing its own URL with argv[1].
import { EXIT, main } from './cli.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`emq: ${(error as Error).message}\n`);
    process.exit(EXIT.failed);
  },
);
