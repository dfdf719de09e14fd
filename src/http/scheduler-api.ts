import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import type { AnyQueue } from '../open-queue.js';
import { problem } from './problem.js';
import { getSchedulerRoute, listSchedulersRoute, removeSchedulerRoute, upsertSchedulerRoute } from './scheduler-routes.js';

/** What the scheduler routes need of the app that serves them (`E`: its hono environment). */
export interface SchedulerWiring<E extends Env> {
  /** The queue of a request by its name, a Queue or a PartitionedQueue (the app's cache, src/http/queue-cache.ts). */
  readonly queueOf: (c: Context<E>, name: string) => Promise<AnyQueue>;
  /** The body limit of a route that takes a payload (the enqueue route's). */
  readonly payloadLimit: MiddlewareHandler<E>;
  /**
   * Told after an upsert of the scheduler's next slot (epoch ms, Redis's clock), when it has one:
   * the app's after-enqueue hook, so the Worker starts the short drain an enqueue starts and a
   * slot due now or soon fires without waiting for the cron.
   */
  readonly afterUpsert: (c: Context<E>, queue: string, nextRunAt: number) => void;
}

/**
 * Serves the scheduler routes (scheduler-routes.ts) on `app`, over the Queue methods the
 * TypeScript API has: each a thin call, bad input a 400 naming the field before any write, an
 * absent scheduler a 404.
 *
 * @example
 * registerSchedulerRoutes(app, { queueOf, payloadLimit, afterUpsert: (c, queue, at) => options.afterEnqueue?.(c, queue, at) });
 */
export function registerSchedulerRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: SchedulerWiring<E>): void {
  const { queueOf } = wiring;

  app.on('PUT', upsertSchedulerRoute.getRoutingPath(), wiring.payloadLimit);
  app.openapi(upsertSchedulerRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const { job, ...spec } = c.req.valid('json');
    const result = await (await queueOf(c, queue)).upsertScheduler(id, spec, job);
    if (result.nextRunAt !== null) wiring.afterUpsert(c, queue, result.nextRunAt);
    return c.json({ id: result.id, nextRunAt: result.nextRunAt }, 200);
  });

  app.openapi(listSchedulersRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json({ schedulers: await (await queueOf(c, queue)).listSchedulers() }, 200);
  });

  app.openapi(getSchedulerRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const scheduler = await (await queueOf(c, queue)).getScheduler(id);
    if (!scheduler) return problem(c, 'EMQNOTFOUND', `no scheduler ${id} in queue ${queue}`);
    return c.json(scheduler, 200);
  });

  app.openapi(removeSchedulerRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    if (!(await (await queueOf(c, queue)).removeScheduler(id))) return problem(c, 'EMQNOTFOUND', `no scheduler ${id} in queue ${queue}`);
    return c.json({ id, removed: true } as const, 200);
  });
}
