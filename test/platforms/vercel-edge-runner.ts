import { EdgeRuntime, runServer } from 'edge-runtime';
import type { VercelEnv } from '../../src/vercel/index.js';

/**
 * One Vercel Edge function in a process of its own: the Vercel suite's bundle of
 * test/platforms/vercel-edge-app.ts in an EdgeRuntime, served by edge-runtime's `runServer` on a
 * free loopback port. Reads one JSON document from stdin, `{code, env, queue, recordUrl}` (the
 * bundle, and the app's `EMQ_ENV`, `QUEUE` and `RECORD_URL`), and prints
 * `{"ready":true,"url":...}` once it listens. Killed by its PID to stand for an invocation cut off.
 */
interface Start {
  readonly code: string;
  readonly env: VercelEnv;
  readonly queue: string;
  readonly recordUrl: string;
}

process.stdin.setEncoding('utf8');
let input = '';
for await (const chunk of process.stdin) input += chunk as string;
const { code, env, queue, recordUrl } = JSON.parse(input) as Start;

const runtime = new EdgeRuntime({ initialCode: code, extend: (context) => Object.assign(context, { EMQ_ENV: env, QUEUE: queue, RECORD_URL: recordUrl }) });
const server = await runServer({ runtime, host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ ready: true, url: server.url })}\n`);

// a handler's sleep may still be pending in the runtime: a stop ends it with the process
process.once('SIGTERM', () => process.exit(0));
