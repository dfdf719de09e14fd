import { createRoute, z } from '@hono/zod-openapi';
import { body, failure, json, refusals } from './openapi-parts.js';
import { MAX_PRIORITY } from '../encode.js';
import { jobView } from './responses.js';
import { jobParams, queueParams } from './schemas.js';

/**
 * The routes of admin in bulk (docs/design.md, "Admin in bulk"), with their request and response
 * schemas: list a state's jobs, clean finished jobs, drain, obliterate, reprocess every dead job,
 * change a waiting job's priority or payload, and the dead-job retention. A bulk route does at
 * most `limit` rows per request (default 10,000, at most 100,000: a Worker has a budget of
 * subrequests, one a chunk of 500 rows, 250 for reprocess) and says `more` when it stopped at its
 * limit: send it again.
 */

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
const finished = z.enum(['completed', 'dead']);

export const jobsQuery = z
  .object({
    state: z.enum(['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting']),
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

export const jobsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/jobs',
  summary: "A page of one state's jobs, in that state's order",
  description:
    'pending: lane by lane (ungrouped first, then groups by name), each in the order a claim takes it; scheduled by due time and active by lease deadline, soonest first; completed and dead most recent first',
  request: { params: queueParams, query: jobsQuery },
  responses: { 200: json(z.object({ jobs: z.array(jobView) }), 'the page'), ...refusals },
});

export const cleanRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/clean',
  summary: 'Delete finished jobs (completed or dead) that finished at least olderThanMs ago, oldest first',
  request: { params: queueParams, body: body(cleanBody) },
  responses: { 200: json(z.object({ ids: z.array(z.string()), more }), 'the ids deleted'), ...refusals },
});

export const drainRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/drain',
  summary: 'Delete the jobs waiting to run (pending and scheduled), never active ones',
  request: { params: queueParams, query: bulkQuery },
  responses: { 200: json(z.object({ removed: z.number().int(), more }), 'how many were deleted'), ...refusals },
});

export const obliterateRoute = createRoute({
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

export const reprocessDeadRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/dead/reprocess',
  summary: 'Send dead jobs back to be claimed, oldest first, each with a fresh allowance of attempts',
  request: { params: queueParams, query: bulkQuery },
  responses: { 200: json(z.object({ reprocessed: z.number().int(), more }), 'how many are pending again'), ...refusals },
});

export const priorityRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/jobs/{id}/priority',
  summary: "Change a waiting job's priority (pending or scheduled)",
  request: { params: jobParams, body: body(priorityBody) },
  responses: { 200: json(z.object({ id: z.string(), priority: z.number().int() }), 'the priority now'), ...noSuchJob, ...notWaiting, ...refusals },
});

export const payloadRoute = createRoute({
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

export const getRetentionRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/dead/retention',
  summary: 'How long dead jobs are kept and how many',
  request: { params: queueParams },
  responses: { 200: json(retention, 'the retention (null: no limit of that kind)'), ...refusals },
});

export const setRetentionRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/dead/retention',
  summary: 'Set how long dead jobs are kept and how many; applied as jobs die, at most two deleted a burial',
  request: { params: queueParams, body: body(retentionBody) },
  responses: { 200: json(retention, 'the retention now'), ...refusals },
});
