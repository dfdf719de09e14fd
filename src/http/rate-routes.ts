import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { checkHoldMs, checkRateLimit, MAX_RATE_MS } from '../queue/rate-limits.js';
import { coreMessages } from './core-messages.js';
import { body, json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { rateLimitOrNone } from './rate-schemas.js';
import { groupParams, queueParams } from './schemas.js';

/**
 * The routes of rate limits and holds (`Queue.setRateLimit`, `setGroupRateLimit`, `holdGroup`;
 * docs/design.md, "Rate limits and holds"), with their request and response schemas. The bodies
 * are checked here and again by the Queue (checkRateLimit, checkHoldMs), whose message a refused
 * body answers: one wording for a bad limit over HTTP, from the CLI and in TypeScript.
 */

/** What the rate routes need of the app that serves them (`E`: its hono environment). */
export interface RateWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
}

/** A rate route's body: `{limit, periodMs}`, or null to lift the limit. */
export const rateBody = rateLimitOrNone.openapi({ description: '{limit, periodMs}: at most limit starts in any window of periodMs; null lifts the limit' });

/** A hold route's body. */
export const holdBody = z
  .object({
    ms: z.number().int().min(1).max(MAX_RATE_MS).openapi({ description: `how long no job of it starts, ms from now on the server's clock (1 to ${MAX_RATE_MS}); a longer hold it has is kept` }),
  })
  .strict();

const heldUntil = z.number().int().openapi({ description: 'when the hold ends, epoch ms (server time): the longer of this hold and one it had' });

const queueRateRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/rate',
  summary: "Set the queue's rate limit: at most limit job starts in any window of periodMs, across every group; null lifts it",
  description:
    "Exact over any window (a log of start times), live: a raised or lifted limit lets throttled work start at once, a lowered one throttles at once. Composes with the groups' rate limits and their limits of active jobs.",
  request: { params: queueParams, body: body(rateBody) },
  responses: { 200: json(z.object({ queue: z.string(), rate: rateLimitOrNone }), 'the limit now (null: none)'), ...refusals },
});

const groupRateRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/groups/{group}/rate',
  summary: "Set a group's rate limit: at most limit starts of its jobs in any window of periodMs; null lifts it",
  description: "A group at its rate limit waits off the ring until one more start fits; the queue's other groups keep flowing.",
  request: { params: groupParams, body: body(rateBody) },
  responses: { 200: json(z.object({ queue: z.string(), group: z.string(), rate: rateLimitOrNone }), 'the limit now (null: none)'), ...refusals },
});

const holdGroupRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/groups/{group}/hold',
  summary: "Hold a group for ms: none of its jobs starts until then, the queue's other groups keep flowing",
  description: "What a handler's RateLimitedError does after a 429. Its active jobs finish; jobs enqueued meanwhile wait. A longer hold it has is kept.",
  request: { params: groupParams, body: body(holdBody) },
  responses: { 200: json(z.object({ queue: z.string(), group: z.string(), heldUntil }), 'held'), ...refusals },
});

const holdUngroupedRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/ungrouped/hold',
  summary: "Hold the queue's ungrouped jobs for ms: none of them starts until then, every group keeps flowing",
  description: 'The hold of a group, for the jobs enqueued without one (`holdGroup(null, ms)`); `group` is null in the answer. To stop the whole queue, pause it.',
  request: { params: queueParams, body: body(holdBody) },
  responses: { 200: json(z.object({ queue: z.string(), group: z.null(), heldUntil }), 'held'), ...refusals },
});

/** A hold body's ms, checked as the core checks it; a body that is no object is left to the schema. */
const checkHoldBody = (body: unknown): unknown =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? checkHoldMs((body as { ms?: unknown }).ms) : undefined;

/**
 * Serves the rate routes on `app`, each a thin call. A body the schema refuses is answered 400
 * EMQARG with the message the Queue's own check gives it (`limit must be an integer >= 1, got
 * 0`), so a bad limit reads the same over HTTP, from the CLI and in TypeScript; anything else
 * refused reads as every route's.
 *
 * @example
 * registerRateRoutes(app, { queueOf });
 */
export function registerRateRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: RateWiring<E>): void {
  const { queueOf } = wiring;
  app.openapi(
    queueRateRoute,
    async (c) => {
      const { queue } = c.req.valid('param');
      const rate = c.req.valid('json');
      await (await queueOf(c, queue)).setRateLimit(rate);
      return c.json({ queue, rate }, 200);
    },
    coreMessages(app, checkRateLimit),
  );

  app.openapi(
    groupRateRoute,
    async (c) => {
      const { queue, group } = c.req.valid('param');
      const rate = c.req.valid('json');
      await (await queueOf(c, queue)).setGroupRateLimit(group, rate);
      return c.json({ queue, group, rate }, 200);
    },
    coreMessages(app, checkRateLimit),
  );

  app.openapi(
    holdGroupRoute,
    async (c) => {
      const { queue, group } = c.req.valid('param');
      const { ms } = c.req.valid('json');
      const heldUntil = await (await queueOf(c, queue)).holdGroup(group, ms);
      return c.json({ queue, group, heldUntil }, 200);
    },
    coreMessages(app, checkHoldBody),
  );

  app.openapi(
    holdUngroupedRoute,
    async (c) => {
      const { queue } = c.req.valid('param');
      const { ms } = c.req.valid('json');
      const heldUntil = await (await queueOf(c, queue)).holdGroup(null, ms);
      return c.json({ queue, group: null, heldUntil }, 200);
    },
    coreMessages(app, checkHoldBody),
  );
}
