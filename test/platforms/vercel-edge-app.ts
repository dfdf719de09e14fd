import { createVercelHandlers, type VercelEnv } from '../../src/vercel/index.js';

/**
 * The function the Vercel suite runs in Vercel's Edge runtime (edge-runtime's EdgeRuntime, bundled
 * by esbuild into one script): the API at `/api/emq/...` and the cron at `/api/emq-cron`, for one
 * queue (`QUEUE`), with the environment in `EMQ_ENV` (the Edge runtime here has no `process`).
 * The handler reports each run to `RECORD_URL` (the runtime has no TCP: only fetch), sleeps
 * `payload.sleepMs` when given, and returns `{ ran: id }`.
 *
 * Vercel's request context is stood in for as Vercel's runtime provides it
 * (`globalThis[Symbol.for('@vercel/request-context')].get()`), its `waitUntil` the fetch event's:
 * set while the handler's synchronous start runs, which is when the adapter reads it.
 */
declare const EMQ_ENV: VercelEnv;
declare const QUEUE: string;
declare const RECORD_URL: string;
/** The Edge runtime's fetch event (a service worker's). */
interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
  waitUntil(promise: Promise<unknown>): void;
}
declare function addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;

const emq = createVercelHandlers({
  basePath: '/api/emq',
  env: EMQ_ENV,
  handlers: {
    [QUEUE]: async (job: { id: string; attempt: number; payload: { sleepMs?: number } | null }) => {
      const seen = await fetch(RECORD_URL, { method: 'POST', body: JSON.stringify({ queue: QUEUE, id: job.id, attempt: job.attempt }) });
      await seen.arrayBuffer();
      if (job.payload?.sleepMs) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
      return { ran: job.id };
    },
  },
  log: () => {},
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
