import { basename } from 'node:path';
import { type Commands, EXIT } from './command.js';
import { projectName, writeStarterFiles } from './init-files.js';
import { denoFiles } from './init-deno.js';
import { lambdaFiles } from './init-lambda.js';
import { netlifyFiles } from './init-netlify.js';
import { vercelFiles } from './init-vercel.js';
import { workerFiles } from './init-worker.js';
import { didYouMean, parseArgs, UsageError } from './strict-args.js';

/** The usage lines of the init command, for `emq --help`. */
export const INIT_USAGE = `  emq init worker|lambda|vercel|netlify|deno [--name N] [--force]
      Writes a project to start from into the current directory, one typed queue each. worker: a
      Cloudflare Worker, wrangler.toml (the cron beat, minify) and workers/index.ts; lambda: an AWS
      Lambda function, template.yaml (SAM: a Function URL, a beat a minute) and src/handler.ts;
      vercel: the API route and the cron route (app/api/emq/...) and vercel.json; netlify: the API
      function and the scheduled one (netlify/functions/); deno: main.ts and deno.json. Refuses,
      writing nothing, when a file exists (exit 1), unless --force. --name: the Worker's or
      function's name (default: the directory's).`;

/** What each kind writes, and the next step it prints. */
const KINDS: Readonly<Record<string, { files: (name: string) => ReadonlyMap<string, string>; next: string }>> = {
  worker: { files: workerFiles, next: 'npm install -D wrangler, then npx wrangler dev' },
  lambda: { files: lambdaFiles, next: 'sam build && sam deploy --guided (docs/guides/lambda.md)' },
  vercel: { files: () => vercelFiles(), next: 'set UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN, EMQ_TOKEN and CRON_SECRET, then vercel deploy (docs/guides/vercel.md)' },
  netlify: { files: () => netlifyFiles(), next: 'set UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN and EMQ_TOKEN, then netlify deploy (docs/guides/netlify.md)' },
  deno: { files: () => denoFiles(), next: 'deno task start, or deploy main.ts to Deno Deploy (docs/guides/deno.md)' },
};

/**
 * The init command by name, resolving to its exit code: the starter files of a platform in the
 * working directory (it needs no Redis).
 *
 * @example
 * await initCommands().init(['lambda', '--name', 'mail']); // writes template.yaml and src/handler.ts
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
      const names = Object.keys(KINDS);
      const chosen = kind !== undefined && Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
      if (!chosen || extra.length > 0) {
        throw new UsageError(
          kind === undefined || extra.length > 0
            ? `init takes what to write: ${names.join(' or ')}`
            : `init writes ${names.join(' or ')}, not ${JSON.stringify(kind)}${didYouMean(kind, names)}`,
        );
      }
      const dir = process.cwd();
      const written = await writeStarterFiles(dir, chosen.files(projectName(values.name ?? basename(dir))), values.force === true);
      process.stderr.write(`[emq] wrote ${written.join(' and ')}; next: ${chosen.next}\n`);
      return EXIT.ok;
    },
  };
}
