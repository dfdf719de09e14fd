import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env, MiddlewareHandler } from 'hono';
import { jobIdOf, MAX_PRIORITY } from '../encode.js';
import { body, failure, json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { jobView, jobViewOf } from './responses.js';
import { jobParams, queueParams } from './schemas.js';

/**
 * The routes of admin in bulk (docs/design.md, "Admin in bulk"), with their request and response
 * schemas: list a state's jobs, clean finished jobs (completed, dead, cancelled), drain,
 * obliterate, reprocess every dead job, change a waiting job's priority or payload, and the
 * dead-job retention. A bulk route does at most `limit` rows per request (default 10,000, at most
 * 100,000: a Worker has a budget of subrequests, one a chunk of 500 rows, 250 for reprocess) and
 * says `more` when it stopped at its limit: send it again. Each route a thin call of the Queue
 * method the TypeScript API has, errors by the one table (404, 409, 413, 400).
 */

/** What the admin routes need of the app that serves them (`E`: its hono environment). */
export interface AdminWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** The body limit of a route that takes a payload (the enqueue route's). */
  readonly payloadLimit: MiddlewareHandler<E>;
}

const noSuchJob = { 404: failure('no such job (EMQNOTFOUND)') };
const notWaiting = { 409: failure('the job is active, completed or dead (EMQSTATE): nothing was written') };

/** The most rows one bulk request touches by default, and at most. */
export const BULK_ROUTE_LIMIT = { default: 10_000, max: 100_000 } as const;

// A query's numbers are documented by hand: the generator asks a coerced schema whether it takes
// null (null coerces to 0), and would document `integer or null`.
const bulkLimit = z.coerce
  .number()
  .int()
  .min(1)
  .max(BULK_ROUTE_LIMIT.max)
  .default(BULK_ROUTE_LIMIT.default)
  .openapi({ type: 'integer', minimum: 1, maximum: BULK_ROUTE_LIMIT.max, default: BULK_ROUTE_LIMIT.default, description: 'the most rows this request touches' });
const more = z.boolean().openapi({ description: 'it stopped at its limit: there may be more, send the request again' });
const finished = z.enum(['completed', 'dead', 'cancelled']);

export const jobsQuery = z
  .object({
    state: z.enum(['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting', 'awaiting', 'cancelled']),
    limit: z.coerce.number().int().min(1).max(1000).default(50).openapi({ type: 'integer', minimum: 1, maximum: 1000, default: 50 }),
    offset: z.coerce.number().int().min(0).default(0).openapi({ type: 'integer', minimum: 0, default: 0 }),
  })
  .strict();
export const cleanBody = z
  .object({
    state: finished,
    olderThanMs: z.number().int().min(0).default(0).openapi({ description: 'finished at least this long ago (default 0: all)' }),
    limit: z.number().int().min(1).max(BULK_ROUTE_LIMIT.max).default(BULK_ROUTE_LIMIT.default),
  })
  .strict();
export const bulkQuery = z.object({ limit: bulkLimit }).strict();
export const obliterateQuery = z
  .object({
    force: z.enum(['true', 'false']).default('false').openapi({ description: 'delete the queue even while jobs are active' }),
    limit: bulkLimit,
  })
  .strict();
export const priorityBody = z.object({ priority: z.number().int().min(0).max(MAX_PRIORITY) }).strict();
export const payloadBody = z.object({ payload: z.unknown().refine((v) => v !== undefined, 'payload is required') }).strict();
const retention = z
  .object({
    maxAgeMs: z.number().int().min(0).nullable().openapi({ description: 'the most ms a dead job is kept; null: no age limit' }),
    maxCount: z.number().int().min(0).nullable().openapi({ description: 'the most dead jobs kept, the oldest going first; null: no count limit' }),
  })
  .strict();
export const retentionBody = retention.partial().strict();

const jobsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/jobs',
  summary: "A page of one state's jobs, in that state's order",
  description:
    'pending: lane by lane (ungrouped first, then groups by name), each in the order a claim takes it; scheduled by due time and active by lease deadline, soonest first; completed, dead and cancelled most recent first',
  request: { params: queueParams, query: jobsQuery },
  responses: { 200: json(z.object({ jobs: z.array(jobView) }), 'the page'), ...refusals },
});

const cleanRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/clean',
  summary: 'Delete finished jobs (completed, dead or cancelled) that finished at least olderThanMs ago, oldest first',
  request: { params: queueParams, body: body(cleanBody) },
  responses: { 200: json(z.object({ ids: z.array(z.string()), more }), 'the ids deleted'), ...refusals },
});

const drainRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/drain',
  summary: 'Delete the jobs waiting to run (pending and scheduled), never active ones',
  request: { params: queueParams, query: bulkQuery },
  responses: { 200: json(z.object({ removed: z.number().int(), more }), 'how many were deleted'), ...refusals },
});

const obliterateRoute = createRoute({
  method: 'delete',
  path: '/v1/queues/{queue}',
  summary: 'Delete the whole queue, every job and setting, and its registry entry',
  description: 'The queue is paused from the first request on. `obliterated: false`: it stopped at its limit, send the request again.',
  request: { params: queueParams, query: obliterateQuery },
  responses: {
    200: json(z.object({ queue: z.string(), obliterated: z.boolean() }), 'gone, or (false) not yet'),
    409: failure('jobs are active and force is not true (EMQSTATE): nothing was written'),
    ...refusals,
  },
});

const reprocessDeadRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/dead/reprocess',
  summary: 'Send dead jobs back to be claimed, oldest first, each with a fresh allowance of attempts',
  request: { params: queueParams, query: bulkQuery },
  responses: { 200: json(z.object({ reprocessed: z.number().int(), more }), 'how many are pending again'), ...refusals },
});

const priorityRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/jobs/{id}/priority',
  summary: "Change a waiting job's priority (pending or scheduled)",
  request: { params: jobParams, body: body(priorityBody) },
  responses: { 200: json(z.object({ id: z.string(), priority: z.number().int() }), 'the priority now'), ...noSuchJob, ...notWaiting, ...refusals },
});

const payloadRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/jobs/{id}/payload',
  summary: "Replace a waiting job's payload (pending or scheduled), within the payload cap",
  request: { params: jobParams, body: body(payloadBody) },
  responses: {
    200: json(z.object({ id: z.string(), updated: z.literal(true) }), 'replaced'),
    ...noSuchJob,
    ...notWaiting,
    413: failure('the body or the payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

const getRetentionRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/dead/retention',
  summary: 'How long dead jobs are kept and how many',
  request: { params: queueParams },
  responses: { 200: json(retention, 'the retention (null: no limit of that kind)'), ...refusals },
});

const setRetentionRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/dead/retention',
  summary: 'Set how long dead jobs are kept and how many; applied as jobs die, at most two deleted a burial',
  request: { params: queueParams, body: body(retentionBody) },
  responses: { 200: json(retention, 'the retention now'), ...refusals },
});

/**
 * Serves the admin routes on `app`.
 *
 * @example
 * registerAdminRoutes(app, { queueOf, payloadLimit: bodyLimit(6 * 1024 * 1024, tooLarge) });
 */
export function registerAdminRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: AdminWiring<E>): void {
  const { queueOf } = wiring;

  app.openapi(jobsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { state, offset, limit } = c.req.valid('query');
    const jobs = await (await queueOf(c, queue)).getJobs(state, { offset, limit });
    return c.json({ jobs: jobs.map(jobViewOf) }, 200);
  });

  app.openapi(cleanRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { state, olderThanMs, limit } = c.req.valid('json');
    const ids = await (await queueOf(c, queue)).clean(state, { olderThanMs, limit });
    return c.json({ ids, more: ids.length >= limit }, 200);
  });

  app.openapi(drainRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    const removed = await (await queueOf(c, queue)).drain({ limit });
    return c.json({ removed, more: removed >= limit }, 200);
  });

  app.openapi(obliterateRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { force, limit } = c.req.valid('query');
    const obliterated = await (await queueOf(c, queue)).obliterate({ force: force === 'true', limit });
    return c.json({ queue, obliterated }, 200);
  });

  app.openapi(reprocessDeadRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    const reprocessed = await (await queueOf(c, queue)).reprocessDead({ limit });
    return c.json({ reprocessed, more: reprocessed >= limit }, 200);
  });

  app.openapi(priorityRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const { priority } = c.req.valid('json');
    await (await queueOf(c, queue)).changePriority(id, priority);
    return c.json({ id: jobIdOf(id), priority }, 200);
  });

  app.on('PUT', payloadRoute.getRoutingPath(), wiring.payloadLimit);
  app.openapi(payloadRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const { payload } = c.req.valid('json');
    await (await queueOf(c, queue)).updateData(id, payload);
    return c.json({ id: jobIdOf(id), updated: true } as const, 200);
  });

  app.openapi(getRetentionRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json(await (await queueOf(c, queue)).deadRetention(), 200);
  });

  app.openapi(setRetentionRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json(await (await queueOf(c, queue)).setDeadRetention(c.req.valid('json')), 200);
  });
}
