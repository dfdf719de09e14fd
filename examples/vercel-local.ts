/**
 * `npm start -- --platform vercel`: the Vercel function of the local stack, in place of the Worker.
 * The function (examples/vercel-local-app.ts) is `createVercelHandlers` with the shipped Worker's
 * queues and handlers (workers/demo-handler.ts, printing `[vercel]`), over @upstash/redis through
 * the local REST bridge, as a deployed function over Upstash. It runs in Vercel's Edge runtime,
 * the `edge-runtime` npm package (the runtime Vercel's Edge functions run on, as a Node API):
 * bundled by esbuild for the browser platform with the conditions Vercel's Edge builds resolve
 * with, so what it imports runs on Web APIs alone, then served on a free loopback port by
 * `runServer`. The runtime's console is the function's log: relayed to the stack's output. `beat()`
 * calls the cron route as Vercel Cron does: GET with `Authorization: Bearer <CRON_SECRET>`.
 */
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { bundleForVercelEdge } from '../tools/esbuild.js';
import type { VercelEnv } from '../src/vercel/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The function as the local stack drives it. */
export interface LocalVercel {
  /** Where it serves the API, on loopback (no trailing slash): its dashboard at /ui. */
  readonly url: string;
  /** One call of its cron route, with CRON_SECRET, as Vercel Cron makes. */
  beat(): Promise<void>;
  /** Stops the server, once the requests and the waitUntil work in flight have ended. */
  close(): Promise<void>;
}

/**
 * Bundles and serves the function on `restUrl` (the bridge) with `token`; `say` prints its log.
 *
 * @example
 * const fn = await startLocalVercel(bridge.url, token, say);
 * setInterval(() => void fn.beat(), 10_000);
 */
export async function startLocalVercel(restUrl: string, token: string, say: (line: string) => void): Promise<LocalVercel> {
  const cronSecret = randomBytes(16).toString('hex');
  const env: VercelEnv = {
    UPSTASH_REDIS_REST_URL: restUrl,
    UPSTASH_REDIS_REST_TOKEN: token,
    CRON_SECRET: cronSecret,
    EMQ_LOCAL_DEV: '1',
    EMQ_BEAT_DEADLINE_MS: '8000',
    EMQ_JOB_TIMEOUT_MS: '5000',
  };
  // the function's log, as Vercel shows it: each console line, the handler's `[vercel]` lines as they are
  const line = (...args: unknown[]): void => {
    for (const text of format(...args).split('\n')) if (text.trim() !== '') say(text.startsWith('[vercel]') ? text : `vercel: ${text.slice(0, 300)}`);
  };
  const runtime = new EdgeRuntime({
    initialCode: await bundleForVercelEdge(join(root, 'examples', 'vercel-local-app.ts')),
    extend: (context) => Object.assign(context, { EMQ_ENV: env, console: { ...(context['console'] as object), log: line, info: line, warn: line, error: line, debug: () => {} } }),
  });
  const server = await runServer({ runtime, host: '127.0.0.1' });
  const url = server.url.replace(/\/$/, '');
  return {
    url,
    beat: async () => {
      try {
        const answer = await fetch(`${url}/api/emq-cron`, { headers: { authorization: `Bearer ${cronSecret}` } });
        if (answer.status !== 200) say(`[vercel] the cron route answered ${answer.status}: ${(await answer.text()).slice(0, 200)}`);
        else await answer.arrayBuffer();
      } catch (error) {
        say(`[vercel] the cron route failed: ${String(error)}`);
      }
    },
    close: () => server.close(),
  };
}
