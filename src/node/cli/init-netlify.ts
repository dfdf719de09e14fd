import { join } from 'node:path';
import { STARTER_HANDLERS } from './init-files.js';

/** The queues' types and handlers each function of `emq init netlify` holds. */
const QUEUES = `import { UnrecoverableError } from 'echomq';

${STARTER_HANDLERS}`;

/** `netlify/functions/emq.ts`: the HTTP API at /api/emq/*, its drain after an enqueue in context.waitUntil. */
export const NETLIFY_API_FUNCTION = `/**
 * The echomq API at /api/emq/* (the app sees /v1/...). Keep the handlers the same as emq-beat's.
 */
import { createNetlifyFunction } from 'echomq/netlify';
${QUEUES}
export default createNetlifyFunction<Payloads>({ handlers });

export const config = { path: '/api/emq/*' };
`;

/** `netlify/functions/emq-beat.ts`: the scheduled function, bounded beats within Netlify's 30 s. */
export const NETLIFY_BEAT_FUNCTION = `/**
 * The echomq beat: a scheduled function every minute (in UTC), draining the queues below for up to
 * 25 s (scheduled functions stop at 30 s).
 */
import { createNetlifyScheduledFunction } from 'echomq/netlify';
${QUEUES}
export default createNetlifyScheduledFunction<Payloads>({ handlers });

export const config = { schedule: '* * * * *' };
`;

/** The files `emq init netlify` writes, by path relative to the site. */
export function netlifyFiles(): ReadonlyMap<string, string> {
  return new Map([
    [join('netlify', 'functions', 'emq.ts'), NETLIFY_API_FUNCTION],
    [join('netlify', 'functions', 'emq-beat.ts'), NETLIFY_BEAT_FUNCTION],
  ]);
}
