import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import type { AnyQueue } from '../open-queue.js';
import { groupsRoute } from './group-routes.js';

/** What the groups route needs of the app that serves it (`E`: its hono environment). */
export interface GroupWiring<E extends Env> {
  /** The queue of a request by its name, a Queue or a PartitionedQueue (the app's cache, src/http/queue-cache.ts). */
  readonly queueOf: (c: Context<E>, name: string) => Promise<AnyQueue>;
}

/**
 * Serves `GET /v1/queues/{queue}/groups` (group-routes.ts) on `app`: a thin call of
 * `Queue.groups`, whose checks (a cursor that is no page's, a partition past the queue's count)
 * answer 400 EMQARG through the one error table.
 *
 * @example
 * registerGroupRoutes(app, { queueOf });
 */
export function registerGroupRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: GroupWiring<E>): void {
  const { queueOf } = wiring;
  app.openapi(groupsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { cursor, limit, prefix } = c.req.valid('query');
    const page = await (await queueOf(c, queue)).groups({ limit, ...(cursor === undefined ? {} : { cursor }), ...(prefix === undefined ? {} : { prefix }) });
    return c.json(page, 200);
  });
}
