import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * The compatibility date the Worker is built and tested with (the project's own wrangler.toml):
 * the newest miniflare 4.20260426, the pin that runs on Node 20, knows.
 */
const COMPATIBILITY_DATE = '2026-04-26';

/** A Worker name wrangler takes: lowercase letters, digits and dashes, at most 63. */
export function workerName(from: string): string {
  const name = from
    .toLowerCase()
    .replace(/^@[^/]*\//, '')
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'echomq';
}

/** The `wrangler.toml` `emq init worker` writes: the cron beat, `minify`, the vars and secrets. */
export function wranglerToml(name: string): string {
  return `# The echomq Worker: fetch = the HTTP API, scheduled = bounded beats that drain the queues.
name = "${name}"
main = "workers/index.ts"
compatibility_date = "${COMPATIBILITY_DATE}"
# Smaller upload; stack traces in logs still name functions (keep_names is on by default).
minify = true

[triggers]
# A beat a minute; each scheduled event drains until EMQ_BEAT_DEADLINE_MS (50 s), well inside it.
crons = ["* * * * *"]

# CPU time per invocation, on paid plans (the default is 30 s). Handlers mostly wait on I/O, which
# is not CPU time; raise it (up to 300000) for CPU-heavy handlers, or lower EMQ_BEAT_DEADLINE_MS.
# [limits]
# cpu_ms = 30000

[vars]
EMQ_BEAT_DEADLINE_MS = "50000"
EMQ_DRAIN_ON_ENQUEUE_MS = "5000"

# Secrets (never in this file): set each with \`npx wrangler secret put NAME\`.
#   UPSTASH_REDIS_REST_URL    your Upstash Redis REST URL
#   UPSTASH_REDIS_REST_TOKEN  its REST token
#   EMQ_TOKEN                 the bearer token the HTTP API requires
# For \`wrangler dev\`, put them in .dev.vars (keep it out of git), with EMQ_LOCAL_DEV=1 to serve
# without EMQ_TOKEN; \`npx emq bridge\` serves the Upstash REST API over a local Redis.
`;
}

/** The `workers/index.ts` `emq init worker` writes: one typed queue to start from. */
export const WORKER_ENTRY = `/**
 * The echomq Worker: \`fetch\` serves the HTTP API, \`scheduled\` (the cron in wrangler.toml)
 * drains the queues below. A queue is its payload type in Payloads and its handler in handlers.
 */
import { UnrecoverableError } from 'echomq';
import { createWorker } from 'echomq/edge';

/** Each queue's payload type, by queue name. */
interface Payloads {
  mail: { to: string; subject?: string };
}

export default createWorker<Payloads>({
  handlers: {
    // resolve: completed; throw: retried with its backoff; UnrecoverableError: dead at once
    mail: async (job) => {
      if (!job.payload.to.includes('@')) throw new UnrecoverableError(\`not an address: \${job.payload.to}\`);
      console.log(\`mail to \${job.payload.to} (attempt \${job.attempt} of \${job.maxAttempts})\`);
    },
  },
});
`;

/** The files `emq init worker` writes, by path relative to the project. */
export function workerFiles(name: string): ReadonlyMap<string, string> {
  return new Map([
    ['wrangler.toml', wranglerToml(name)],
    [join('workers', 'index.ts'), WORKER_ENTRY],
  ]);
}

/** `emq init worker` found files it would overwrite: nothing was written. */
export class WouldOverwriteError extends Error {
  constructor(readonly paths: readonly string[]) {
    super(`${paths.join(' and ')} already ${paths.length === 1 ? 'exists' : 'exist'}: nothing written (--force overwrites)`);
    this.name = 'WouldOverwriteError';
  }
}

/**
 * Writes a Worker to start from into `dir`: `wrangler.toml` and `workers/index.ts`, named `name`
 * (default: `dir`'s name, made a Worker name). Writes nothing when either file exists, unless
 * `force`. Resolves to the paths written, relative to `dir`.
 *
 * @example
 * await initWorker(process.cwd()); // ['wrangler.toml', 'workers/index.ts']
 */
export async function initWorker(dir: string, options: { force?: boolean; name?: string } = {}): Promise<string[]> {
  const files = workerFiles(workerName(options.name ?? basename(dir)));
  const existing = [...files.keys()].filter((path) => existsSync(join(dir, path)));
  if (existing.length > 0 && !options.force) throw new WouldOverwriteError(existing);
  for (const [path, text] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return [...files.keys()];
}
