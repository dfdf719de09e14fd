import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { checkRateLimit } from '../queue/rate-limits.js';
import { coreMessages } from './core-messages.js';
import { body, failure, json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { rateBody } from './rate-routes.js';
import { rateLimitOrNone } from './rate-schemas.js';
import { keyName, limitBody, queueParams } from './schemas.js';

/**
 * The routes of a queue's concurrency keys (docs/design/job-controls.md, "Several concurrency
 * keys"): set or lift a key's limit on running jobs (`Queue.setKeyLimit`) and its rate limit on
 * starts (`Queue.setKeyRateLimit`), and list every key with its limit, rate, running and parked
 * jobs (`Queue.keyLimits`: what the dashboard's keys table reads).
 * A job names its keys in its enqueue body (`keys`). A partitioned queue refuses keys: 409
 * EMQPARTITION through the one error table, nothing written.
 */

/** What the key routes need of the app that serves them (`E`: its hono environment). */
export interface KeyWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** Told the queue where a limit raised or lifted readmitted parked jobs: the Worker drains it, as after an enqueue. */
  readonly afterReadmit: (c: Context<E>, queue: string) => void;
}

/**
 * `/v1/queues/{queue}/keys/{key}...`. A key holds `:` (`org:7`): the path takes it as it is or
 * encoded (`org%3A7`), hono decoding the segment before the schema reads it.
 */
export const keyParams = queueParams.extend({
  key: keyName.openapi({ param: { name: 'key', in: 'path' }, example: 'org:7', description: "the concurrency key, as jobs name it in `keys` (a ':' may be sent as %3A)" }),
});

/** A key's limit now, and the parked jobs its change readmitted. */
const keyLimitResult = z
  .object({
    key: z.string(),
    limit: z.number().int().nullable().openapi({ description: 'its limit on running jobs now; null for none' }),
    readmitted: z.number().int().openapi({ description: 'jobs parked on it sent back to their lanes, in their order: as many as a raised limit has room for, all of them when lifted, none when lowered' }),
  })
  .openapi('KeyLimit');

/** A key's rate limit now, and the parked jobs its change readmitted. */
const keyRateResult = z
  .object({
    key: z.string(),
    rate: rateLimitOrNone.openapi({ description: 'its rate limit on starts now; null for none' }),
    readmitted: z.number().int().openapi({ description: 'jobs parked on it sent back to their lanes, in their order: as many as a raised or lifted rate has room for in its window (its limit on running jobs still caps them), none when lowered' }),
  })
  .openapi('KeyRate');

/** One concurrency key with its numbers (`KeyInfo`). */
export const keyInfo = z
  .object({
    key: z.string(),
    limit: z.number().int().nullable().openapi({ description: 'its limit on running jobs; null for none' }),
    running: z.number().int().openapi({ description: 'jobs naming it that run now' }),
    parked: z.number().int().openapi({ description: 'jobs parked on it: claimed while it was at its limit or its rate, waiting (pending) until it has room' }),
    rate: rateLimitOrNone.openapi({ description: 'its rate limit: at most limit starts of jobs naming it in any window of periodMs; null for none' }),
    throttledUntil: z.number().int().nullable().openapi({ description: "while its rate keeps parked jobs waiting: when one more may start, epoch ms (server time); else null" }),
  })
  .openapi('KeyInfo');

/** The refusal of the key routes on a partitioned queue. */
const partitioned = { 409: failure('the queue is partitioned (EMQPARTITION): a key spans groups, which live in different partitions; nothing was written') };

const keyLimitRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/keys/{key}/limit',
  summary: "Set a concurrency key's limit of running jobs, or lift it with null",
  description:
    'A job naming a key at its limit waits, parked on the key, while the other jobs go on. Raising or lifting the limit readmits as many parked jobs as it has room for (their count is answered); lowering it takes nothing back.',
  request: { params: keyParams, body: body(limitBody) },
  responses: { 200: json(keyLimitResult, 'the limit now, and the jobs readmitted'), ...partitioned, ...refusals },
});

const keyRateRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/keys/{key}/rate',
  summary: "Set a concurrency key's rate limit: at most limit starts of jobs naming it in any window of periodMs; null lifts it",
  description:
    "A job naming a key at its rate waits, parked on the key, until one more start fits; the other jobs go on. Raising or lifting the rate readmits as many parked jobs as its window has room for (their count is answered); lowering it takes nothing back. Composes with the key's limit on running jobs.",
  request: { params: keyParams, body: body(rateBody) },
  responses: { 200: json(keyRateResult, 'the rate now (null: none), and the jobs readmitted'), ...partitioned, ...refusals },
});

const keysRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/keys',
  summary: "The queue's concurrency keys, each with its limit, rate, running and parked jobs",
  description: 'Every key a job of the queue named or a limit or rate was set for, sorted by name (at most 10,000).',
  request: { params: queueParams },
  responses: { 200: json(z.object({ keys: z.array(keyInfo) }), 'the keys'), ...partitioned, ...refusals },
});

/**
 * Serves the key routes on `app`, each a thin call. A bad key, limit or rate is refused by the
 * schemas (400 EMQARG) before the Queue is asked, so nothing is written; a refused rate answers
 * checkRateLimit's message, as the group rate route does (src/http/rate-routes.ts).
 *
 * @example
 * registerKeyRoutes(app, { queueOf, afterReadmit: (c, queue) => drainSoon(c, queue) });
 */
export function registerKeyRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: KeyWiring<E>): void {
  const { queueOf, afterReadmit } = wiring;

  app.openapi(keyLimitRoute, async (c) => {
    const { queue, key } = c.req.valid('param');
    const { limit } = c.req.valid('json');
    const readmitted = await (await queueOf(c, queue)).setKeyLimit(key, limit);
    if (readmitted > 0) afterReadmit(c, queue);
    return c.json({ key, limit, readmitted }, 200);
  });

  app.openapi(
    keyRateRoute,
    async (c) => {
      const { queue, key } = c.req.valid('param');
      const rate = c.req.valid('json');
      const readmitted = await (await queueOf(c, queue)).setKeyRateLimit(key, rate);
      if (readmitted > 0) afterReadmit(c, queue);
      return c.json({ key, rate, readmitted }, 200);
    },
    coreMessages(app, checkRateLimit),
  );

  app.openapi(keysRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json({ keys: await (await queueOf(c, queue)).keyLimits() }, 200);
  });
}
