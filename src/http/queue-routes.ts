import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { queueOverviews } from '../queue/registry.js';
import type { Transport } from '../transport.js';
import { json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { deadJobs, jobViewOf, queueList, queuePaused, queueResumed, queueStats } from './responses.js';
import { deadQuery, queueParams } from './schemas.js';

/**
 * The routes of a queue as a whole: every queue of the registry, one queue's counts and limits,
 * its dead jobs, pause and resume. Each a thin call, errors by the one table.
 */

/** What the queue routes need of the app that serves them (`E`: its hono environment). */
export interface QueueWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** The transport to Redis for a request: the registry is read through it. */
  readonly transport: (c: Context<E>) => Transport;
}

const queuesRoute = createRoute({
  method: 'get',
  path: '/v1/queues',
  summary: 'Every queue of the registry, sorted by name, with its counts per state, the paused flag and its counters',
  description:
    'The registry holds every queue that has had a job enqueued (until it is obliterated). A partitioned queue is one row under its name, its partitions summed, with `partitions` (its count); every route taking `{queue}` addresses it by that name. One round trip to Redis per 100 queues (or partitions): in the Worker, one subrequest each.',
  responses: { 200: json(queueList, 'the queues'), 401: refusals[401], 503: refusals[503] },
});

const statsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}',
  summary: 'Counts per state, the paused flag, and the rate limits with what is throttled now',
  request: { params: queueParams },
  responses: { 200: json(queueStats, 'the counts'), ...refusals },
});

const deadRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/dead',
  summary: 'Dead jobs, newest first',
  request: { params: queueParams, query: deadQuery },
  responses: { 200: json(deadJobs, 'the page of dead jobs'), ...refusals },
});

const pauseRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/pause',
  summary: 'Pause the queue: nothing is claimed until it resumes',
  request: { params: queueParams },
  responses: { 200: json(queuePaused, 'paused'), ...refusals },
});

const resumeRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/resume',
  summary: 'Resume the queue',
  request: { params: queueParams },
  responses: { 200: json(queueResumed, 'resumed'), ...refusals },
});

/**
 * Serves the queue routes on `app`.
 *
 * @example
 * registerQueueRoutes(app, { queueOf, transport: options.transport });
 */
export function registerQueueRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: QueueWiring<E>): void {
  const { queueOf } = wiring;

  // a path of its own, one segment short of the stats route's: neither can answer for the other
  app.openapi(queuesRoute, async (c) => c.json({ queues: await queueOverviews(wiring.transport(c)) }, 200));

  app.openapi(statsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json(await (await queueOf(c, queue)).stats(), 200);
  });

  app.openapi(deadRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { limit, offset } = c.req.valid('query');
    const jobs = await (await queueOf(c, queue)).listDead({ limit, offset });
    return c.json({ jobs: jobs.map(jobViewOf) }, 200);
  });

  app.openapi(pauseRoute, async (c) => {
    const { queue } = c.req.valid('param');
    await (await queueOf(c, queue)).pause();
    return c.json({ queue, paused: true } as const, 200);
  });

  app.openapi(resumeRoute, async (c) => {
    const { queue } = c.req.valid('param');
    await (await queueOf(c, queue)).resume();
    return c.json({ queue, paused: false } as const, 200);
  });
}
