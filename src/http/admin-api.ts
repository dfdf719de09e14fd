import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import type { JobRecord } from '../job.js';
import type { AnyQueue } from '../open-queue.js';
import {
  cleanRoute,
  drainRoute,
  getRetentionRoute,
  jobsRoute,
  obliterateRoute,
  payloadRoute,
  priorityRoute,
  reprocessDeadRoute,
  setRetentionRoute,
} from './admin-routes.js';
import type { JobView } from './responses.js';

/** What the admin routes need of the app that serves them (`E`: its hono environment). */
export interface AdminWiring<E extends Env> {
  /** The queue of a request by its name, a Queue or a PartitionedQueue (the app's cache, src/http/queue-cache.ts). */
  readonly queueOf: (c: Context<E>, name: string) => Promise<AnyQueue>;
  /** A job as the API shows it. */
  readonly jobView: (job: JobRecord) => JobView;
  /** The body limit of a route that takes a payload (the enqueue route's). */
  readonly payloadLimit: MiddlewareHandler<E>;
}

/** The id the other routes take for `id`, given with or without its `JOB:` prefix. */
const fullId = (id: string): string => (id.startsWith('JOB:') ? id : `JOB:${id}`);

/**
 * Serves the admin routes (admin-routes.ts) on `app`, over the same Queue methods the TypeScript
 * API has: each a thin call, errors by the one table (404, 409, 413, 400).
 *
 * @example
 * registerAdminRoutes(app, { queueOf, jobView, payloadLimit: bodyLimit(6 * 1024 * 1024, tooLarge) });
 */
export function registerAdminRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: AdminWiring<E>): void {
  const { queueOf, jobView } = wiring;

  app.openapi(jobsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { state, offset, limit } = c.req.valid('query');
    const jobs = await (await queueOf(c, queue)).getJobs(state, { offset, limit });
    return c.json({ jobs: jobs.map(jobView) }, 200);
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
    return c.json({ id: fullId(id), priority }, 200);
  });

  app.on('PUT', payloadRoute.getRoutingPath(), wiring.payloadLimit);
  app.openapi(payloadRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const { payload } = c.req.valid('json');
    await (await queueOf(c, queue)).updateData(id, payload);
    return c.json({ id: fullId(id), updated: true } as const, 200);
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
