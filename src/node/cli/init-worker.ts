import { join } from 'node:path';
import { projectName } from './init-files.js';

/**
 * The compatibility date the Worker is built and tested with (the project's own wrangler.toml):
 * the newest miniflare 4.20260426, the pin that runs on Node 20, knows.
 */
const COMPATIBILITY_DATE = '2026-04-26';

/** A Worker name wrangler takes: lowercase letters, digits and dashes, at most 63. */
export const workerName = projectName;

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
