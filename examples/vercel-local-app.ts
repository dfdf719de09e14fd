import type { ScheduledReport } from '../src/serverless/host.js';
import { createVercelHandlers, type VercelEnv } from '../src/vercel/index.js';
import { type DemoPayload, demoHandler } from '../workers/demo-handler.js';

/**
 * The Vercel function of `npm start -- --platform vercel`, run in Vercel's Edge runtime (the
 * `edge-runtime` package's EdgeRuntime, bundled by esbuild into one script by
 * examples/vercel-local.ts): `createVercelHandlers` with the shipped Worker's queues and handlers
 * (workers/demo-handler.ts, printing `[vercel]` with the runtime's console, which the stack
 * relays), over @upstash/redis through the local REST bridge. The API at the function's root (so
 * its dashboard at /ui too), the cron route at `/api/emq-cron`, checked against CRON_SECRET. The
 * environment comes in `EMQ_ENV` (the Edge runtime here has no `process`).
 *
 * Vercel's request context is stood in for as Vercel's runtime provides it
 * (`globalThis[Symbol.for('@vercel/request-context')].get()`), its `waitUntil` the fetch event's:
 * the drain after an enqueue runs after the answer, as on Vercel.
 */
declare const EMQ_ENV: VercelEnv;
/** The Edge runtime's fetch event (a service worker's). */
interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
  waitUntil(promise: Promise<unknown>): void;
}
declare function addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;

/** What a beat did, in a line: its requests, the slots it fired, the jobs its drains claimed and completed. */
const beatLine = (report: ScheduledReport): string => {
  const sum = (key: 'claimed' | 'completed'): number =>
    report.summaries.reduce((n, s) => n + ('acknowledgedLater' in s ? (key === 'completed' ? s.acknowledgedLater.completed : 0) : s[key]), 0);
  return `${report.requests} requests, ${report.firedSlots} scheduler slot(s) fired, ${sum('claimed')} job(s) claimed, ${sum('completed')} completed`;
};

const emq = createVercelHandlers<{ demo: DemoPayload; 'demo-parts': DemoPayload }>({
  env: EMQ_ENV,
  handlers: {
    demo: (job, { progress }) => demoHandler(job, 'vercel', undefined, progress),
    'demo-parts': (job) => demoHandler(job, 'vercel'),
  },
  partitions: { 'demo-parts': 8 },
  log: (entry) => {
    if (entry['msg'] === 'job') console.log(`[vercel] ${String(entry['outcome'])} ${String(entry['id'])}: ${String(entry['error'] ?? '')}`);
    else if (entry['level'] === 'error' || entry['level'] === 'warn' || /failed/.test(String(entry['msg']))) console.error(JSON.stringify(entry));
    else if (entry['msg'] === 'scheduled beat') console.log(`[vercel] beat: ${beatLine(entry as unknown as ScheduledReport)}`);
  },
});

let current: { waitUntil(promise: Promise<unknown>): void } | undefined;
(globalThis as { [key: symbol]: unknown })[Symbol.for('@vercel/request-context')] = { get: () => current };

addEventListener('fetch', (event) => {
  const path = new URL(event.request.url).pathname;
  const method = event.request.method as 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
  const handler = path === '/api/emq-cron' ? emq.cron : (emq[method] ?? emq.fetch);
  current = { waitUntil: (promise) => event.waitUntil(promise) };
  try {
    event.respondWith(handler(event.request));
  } finally {
    current = undefined;
  }
});
