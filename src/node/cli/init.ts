import { type Commands, EXIT } from './command.js';
import { initWorker } from './init-worker.js';
import { didYouMean, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the init command, for `emq --help`. */
export const INIT_USAGE = `  emq init worker [--name N] [--force]
      Writes a Cloudflare Worker to start from into the current directory: wrangler.toml (the
      cron beat, minify) and workers/index.ts (one typed queue). Refuses, writing nothing, when
      either file exists (exit 1), unless --force. --name: the Worker's name (default: the
      directory's).`;

/**
 * The init command by name, resolving to its exit code: `initWorker` in the working directory
 * (it needs no Redis).
 *
 * @example
 * await initCommands().init(['worker', '--name', 'mail']); // writes wrangler.toml and workers/index.ts
 */
export function initCommands(): Commands {
  return {
    async init(args) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { name: { type: 'string' }, force: { type: 'boolean' } },
      });
      const [kind, ...extra] = positionals;
      if (kind !== 'worker' || extra.length > 0) {
        throw new UsageError(
          kind === undefined || extra.length > 0 ? 'init takes what to write: worker' : `init writes a worker, not ${JSON.stringify(kind)}${didYouMean(kind, ['worker'])}`,
        );
      }
      const written = await initWorker(process.cwd(), { force: values.force === true, ...(values.name === undefined ? {} : { name: values.name }) });
      process.stderr.write(`[emq] wrote ${written.join(' and ')}; next: npm install -D wrangler, then npx wrangler dev\n`);
      return EXIT.ok;
    },
  };
}
