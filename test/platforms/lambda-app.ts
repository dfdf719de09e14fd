import { Redis } from 'ioredis';
import { createLambdaHandler } from '../../src/lambda/index.js';

/**
 * The function the Lambda suite deploys into lambda-local: one queue (`QUEUE`) whose handler
 * counts each run of a job in `SEEN_REDIS_URL` (`<queue>:seen`, a hash by job id, beside the
 * queue's keys), sleeps `payload.sleepMs` when given, throws for `payload.fail`, and returns
 * `{ ran: id }`.
 */
const queue = process.env['QUEUE'] ?? 'lambda';
const seen = new Redis(process.env['SEEN_REDIS_URL'] ?? 'redis://127.0.0.1:6379', { lazyConnect: true });

export const handler = createLambdaHandler({
  handlers: {
    [queue]: async (job: { id: string; payload: { sleepMs?: number; fail?: boolean } | null }) => {
      await seen.hincrby(`${queue}:seen`, job.id, 1);
      if (job.payload?.sleepMs) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
      if (job.payload?.fail) throw new Error('asked to fail');
      return { ran: job.id };
    },
  },
  log: () => {},
});
