import process from 'node:process';
import { createInterface } from 'node:readline';
import { type EchomqDenoServer, serveDeno } from '../../src/deno/index.js';
import type { Transport } from '../../src/transport.js';

/**
 * The app the Deno suite runs under the real `deno` binary (bundled with esbuild into one module
 * first: Deno does not map `./x.js` imports to `./x.ts`). One queue (`QUEUE`) whose handler counts
 * each run of a job through the REST bridge at `SEEN_URL` (`<queue>:seen`, a hash by job id,
 * beside the queue's keys), sleeps `payload.sleepMs` on its first attempt when given, and returns
 * `{ ran: id, attempt }`. Set in its environment:
 * - `TCP=1`: Redis over TCP, `connect` with `IoredisTransport.connect(REDIS_URL)` from echomq/node;
 *   else over REST (UPSTASH_REDIS_REST_*), the adapter's default.
 * - `MOUNT=1`: `listen: false`, the handle's `fetch` mounted in a `Deno.serve` of the app's own.
 * - `SCHEDULE`: the cron (default the adapter's, every minute), `off` for none.
 * Its stdout is lines: `{"ready":true,"url":...}` once it serves, then an answer per line of stdin
 * (`beat`: `{"beat": <report>}`). The adapter's log goes to stderr.
 */
const env = process.env;
const queue = env['QUEUE'] ?? 'deno';

/** The `Deno` global as this app uses it (the fixture is compiled against Node's types too). */
interface DenoServe {
  serve(options: { port: number; hostname: string; onListen(address: { port: number }): void }, handler: (request: Request) => Promise<Response>): { addr: { port: number } };
}

async function seen(id: string): Promise<void> {
  const answer = await fetch(env['SEEN_URL']!, {
    method: 'POST',
    headers: { authorization: `Bearer ${env['SEEN_TOKEN']}` },
    body: JSON.stringify(['HINCRBY', `${queue}:seen`, id, '1']),
  });
  if (!answer.ok) throw new Error(`counting the run failed: ${answer.status}`);
}

const connect =
  env['TCP'] === '1'
    ? // ioredis is loaded only here, so the REST cases do not depend on it running under Deno
      await import('../../src/node/ioredis-transport.js').then(({ IoredisTransport }) => (e: { REDIS_URL?: string }): Transport => IoredisTransport.connect(e.REDIS_URL!))
    : undefined;
const mount = env['MOUNT'] === '1';

const server: EchomqDenoServer = serveDeno({
  handlers: {
    [queue]: async (job: { id: string; attempt: number; payload: { sleepMs?: number } | null }) => {
      await seen(job.id);
      if (job.payload?.sleepMs && job.attempt === 1) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
      return { ran: job.id, attempt: job.attempt };
    },
  },
  ...(connect ? { connect } : {}),
  ...(env['SCHEDULE'] === 'off' ? { schedule: false as const } : env['SCHEDULE'] ? { schedule: env['SCHEDULE'] } : {}),
  listen: !mount,
  port: 0,
  hostname: '127.0.0.1',
  onListen: () => {},
  log: (entry) => process.stderr.write(`${JSON.stringify(entry)}\n`),
});

let url = server.url;
if (mount) {
  const deno = (globalThis as unknown as { Deno: DenoServe }).Deno;
  const own = deno.serve({ port: 0, hostname: '127.0.0.1', onListen: () => {} }, (request) => server.fetch(request));
  url = `http://127.0.0.1:${own.addr.port}`;
}
process.stdout.write(`${JSON.stringify({ ready: true, url })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'beat') process.stdout.write(`${JSON.stringify({ beat: (await server.beat()) ?? null })}\n`);
}
