import process from 'node:process';
import { createInterface } from 'node:readline';
import { serveDeno } from '../src/deno/index.js';
import type { ScheduledReport } from '../src/serverless/host.js';
import { type DemoPayload, demoHandler } from '../workers/demo-handler.js';

/**
 * The Deno app of `npm start -- --platform deno`, run by the real `deno` binary (bundled with
 * esbuild into one module first by examples/deno-local.ts: Deno does not map `./x.js` imports to
 * `./x.ts`). `serveDeno` with the shipped Worker's queues and handlers (workers/demo-handler.ts,
 * printing `[deno]` on stdout), over @upstash/redis through the local REST bridge
 * (UPSTASH_REDIS_REST_* from its environment, as on Deno Deploy), on a free loopback port, with no
 * Deno.cron (`schedule: false`): the stack fires its beats itself, one per `beat` line on stdin.
 * Its stdout is `{"ready":true,"url":...}` once it serves, then the handler's lines and a line of
 * what each beat did (all `[deno] ...`); the adapter's errors and warnings go to stderr as JSON.
 */
/** What a beat did, in a line: its requests, the slots it fired, the jobs its drains claimed and completed. */
const beatLine = (report: ScheduledReport): string => {
  const sum = (key: 'claimed' | 'completed'): number =>
    report.summaries.reduce((n, s) => n + ('acknowledgedLater' in s ? (key === 'completed' ? s.acknowledgedLater.completed : 0) : s[key]), 0);
  return `${report.requests} requests, ${report.firedSlots} scheduler slot(s) fired, ${sum('claimed')} job(s) claimed, ${sum('completed')} completed`;
};

const server = serveDeno<{ demo: DemoPayload; 'demo-parts': DemoPayload }>({
  handlers: {
    demo: (job, { progress }) => demoHandler(job, 'deno', undefined, progress),
    'demo-parts': (job) => demoHandler(job, 'deno'),
  },
  partitions: { 'demo-parts': 8 },
  schedule: false,
  port: 0,
  hostname: '127.0.0.1',
  onListen: () => {},
  // what stops it on SIGTERM waits this long for the beats in flight, no longer: what a job still
  // running holds comes back when its lease lapses
  closeWithinMs: 2_000,
  log: (entry) => {
    if (entry['msg'] === 'job') console.log(`[deno] ${String(entry['outcome'])} ${String(entry['id'])}: ${String(entry['error'] ?? '')}`);
    // its errors and warnings; not its routine (a line per request, per drain after an enqueue)
    else if (entry['level'] === 'error' || entry['level'] === 'warn' || /failed/.test(String(entry['msg']))) process.stderr.write(`${JSON.stringify(entry)}\n`);
  },
});
// closed by SIGTERM (the stack stops it by its PID) or at the end of stdin (the stack gone): it exits
void server.closed.then(() => process.exit(0));
process.stdout.write(`${JSON.stringify({ ready: true, url: server.url })}\n`);

// beats run side by side, as the Worker's and the Lambda function's do: a beat line does not wait for the last
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'beat') void server.beat().then((report) => console.log(report ? `[deno] beat: ${beatLine(report)}` : '[deno] beat failed (its log says why)'));
}
await server.close();
