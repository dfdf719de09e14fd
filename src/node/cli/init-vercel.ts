import { join } from 'node:path';
import { STARTER_HANDLERS } from './init-files.js';

/** The queues' types and handlers each route file of `emq init vercel` holds (one function each on Vercel). */
const QUEUES = `import { UnrecoverableError } from 'echomq';
import { createVercelHandlers } from 'echomq/vercel';

${STARTER_HANDLERS}`;

/** `app/api/emq/[...path]/route.ts`: the HTTP API, its drain after an enqueue in Vercel's waitUntil. */
export const VERCEL_API_ROUTE = `/**
 * The echomq API at /api/emq/... (the app sees /v1/...): enqueue, read, admin. After an enqueue a
 * short drain runs the job in Vercel's waitUntil. Keep the handlers the same as the cron route's.
 */
${QUEUES}
export const { GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS } = createVercelHandlers<Payloads>({ basePath: '/api/emq', handlers });

// the longest this function may run, in seconds: the drain after an enqueue runs within it
export const maxDuration = 60;
`;

/** `app/api/emq-cron/route.ts`: the Vercel Cron route, bounded beats behind CRON_SECRET. */
export const VERCEL_CRON_ROUTE = `/**
 * The echomq beat: Vercel Cron (vercel.json) calls it every minute with CRON_SECRET; it drains
 * every queue below until EMQ_BEAT_DEADLINE_MS (50 s) or maxDuration less 2 s.
 */
${QUEUES}
// Vercel calls a cron's path with GET
export const { cron: GET } = createVercelHandlers<Payloads>({ handlers });

export const maxDuration = 60;
`;

/** `vercel.json`: the cron a minute (Vercel Pro; Hobby runs a cron once a day). */
export const VERCEL_JSON = `${JSON.stringify({ crons: [{ path: '/api/emq-cron', schedule: '* * * * *' }] }, null, 2)}\n`;

/** The files `emq init vercel` writes, by path relative to the project (a Next.js App Router app). */
export function vercelFiles(): ReadonlyMap<string, string> {
  return new Map([
    [join('app', 'api', 'emq', '[...path]', 'route.ts'), VERCEL_API_ROUTE],
    [join('app', 'api', 'emq-cron', 'route.ts'), VERCEL_CRON_ROUTE],
    ['vercel.json', VERCEL_JSON],
  ]);
}
