import { Redis } from '@upstash/redis';
import { createNetlifyFunction, createNetlifyScheduledFunction } from '../../src/netlify/index.js';

/**
 * The functions the Netlify suite serves (test/platforms/netlify-runner.ts writes the files of
 * `netlify/functions/` that export them): one queue (`QUEUE`) whose handler counts each run of a
 * job in `<queue>:seen` (a hash by job id, beside the queue's keys) through the REST bridge at
 * `SEEN_REST_URL` (fetch: nothing held open, so an invocation's thread ends once it is done),
 * sleeps `payload.sleepMs` when given, and returns `{ ran: id }`.
 */
const queue = process.env['QUEUE'] ?? 'netlify';
const seen = new Redis({ url: process.env['SEEN_REST_URL'] ?? 'http://127.0.0.1:1', token: process.env['SEEN_REST_TOKEN'] ?? '', automaticDeserialization: false });

const options = {
  handlers: {
    [queue]: async (job: { id: string; payload: { sleepMs?: number } | null }) => {
      await seen.hincrby(`${queue}:seen`, job.id, 1);
      if (job.payload?.sleepMs) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
      return { ran: job.id };
    },
  },
  log: () => {},
};

/** The API's function: `config.path` `/api/emq/*`. */
export const api = createNetlifyFunction(options);
/** The scheduled function: `config.schedule` `* * * * *`. */
export const beat = createNetlifyScheduledFunction(options);
