import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { GROUPS_PAGE } from '../queue/groups.js';
import { body, json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { rateLimitOrNone } from './rate-schemas.js';
import { groupLimit, groupPaused, groupResumed } from './responses.js';
import { groupParams, limitBody, queueParams } from './schemas.js';

/**
 * The routes of a queue's groups: pause and resume one, set its limit of active jobs, and list
 * them with their numbers (`Queue.groups`, lua/list-groups.lua: what the dashboard's groups table
 * reads). A group's rate limit and hold are the rate routes' (rate-routes.ts).
 */

/** What the group routes need of the app that serves them (`E`: its hono environment). */
export interface GroupWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
}

const pauseGroupRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/groups/{group}/pause',
  summary: "Pause a group: its jobs wait, the queue's other groups run",
  request: { params: groupParams },
  responses: { 200: json(groupPaused, 'paused'), ...refusals },
});

const resumeGroupRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/groups/{group}/resume',
  summary: 'Resume a group',
  request: { params: groupParams },
  responses: { 200: json(groupResumed, 'resumed'), ...refusals },
});

const groupLimitRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/groups/{group}/limit',
  summary: "Set a group's limit of jobs active at once, or lift it with null",
  request: { params: groupParams, body: body(limitBody) },
  responses: { 200: json(groupLimit, 'the limit now'), ...refusals },
});

/** `GET /v1/queues/{queue}/groups`: where the walk goes on, about how many, which names. */
export const groupsQuery = z
  .object({
    cursor: z
      .string()
      .regex(/^(\d{1,4}:)?\d{1,20}$/, 'the cursor a page answered')
      .optional()
      .openapi({ description: 'the `cursor` of the page before (a partitioned queue\'s is `<partition>:<cursor>`); absent to start' }),
    // documented by hand: the generator asks a coerced schema whether it takes null (null coerces to 0)
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(GROUPS_PAGE.max)
      .default(GROUPS_PAGE.default)
      .openapi({ type: 'integer', minimum: 1, maximum: GROUPS_PAGE.max, default: GROUPS_PAGE.default, description: 'about the most groups a page holds (SSCAN COUNT)' }),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]{0,128}$/, "up to 128 letters, digits, '.', '_' or '-'")
      .optional()
      .openapi({ description: 'only the groups whose name starts with it' }),
  })
  .strict();

/** One group with its numbers (`GroupInfo`). */
export const groupInfo = z
  .object({
    group: z.string(),
    active: z.number().int().openapi({ description: 'its jobs active now' }),
    limit: z.number().int().nullable().openapi({ description: 'its limit of jobs active at once; null for none' }),
    rate: rateLimitOrNone.openapi({ description: 'its rate limit; null for none' }),
    paused: z.boolean(),
    heldUntil: z.number().int().nullable().openapi({ description: 'when its hold ends, epoch ms (server time); null when it has none' }),
    throttledUntil: z.number().int().nullable().openapi({ description: 'when it may start a job again as its throttle has it (at its rate limit, or held), epoch ms; null when not throttled' }),
    waiting: z.number().int().openapi({ description: 'its jobs waiting in its lane to be claimed' }),
  })
  .openapi('GroupInfo');

const groupsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/groups',
  summary: "A page of the queue's groups, each with its active jobs, limit, rate limit, pause, hold, throttle and waiting jobs",
  description:
    'A walk by SSCAN over every group that ever had a job: pass `cursor` back until it is null. A group may come again on a later page, and one added during the walk may come or not; a page holds about `limit` groups, sorted by name, and may be short (even empty) while more follow. A partitioned queue is walked partition after partition.',
  request: { params: queueParams, query: groupsQuery },
  responses: {
    200: json(z.object({ groups: z.array(groupInfo), cursor: z.string().nullable().openapi({ description: 'the next page\'s cursor; null once the walk is done' }) }), 'the page'),
    ...refusals,
  },
});

/**
 * Serves the group routes on `app`, each a thin call. The walk's own checks (a cursor that is no
 * page's, a partition past the queue's count) answer 400 EMQARG through the one error table.
 *
 * @example
 * registerGroupRoutes(app, { queueOf });
 */
export function registerGroupRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: GroupWiring<E>): void {
  const { queueOf } = wiring;

  app.openapi(pauseGroupRoute, async (c) => {
    const { queue, group } = c.req.valid('param');
    await (await queueOf(c, queue)).pauseGroup(group);
    return c.json({ queue, group, paused: true } as const, 200);
  });

  app.openapi(resumeGroupRoute, async (c) => {
    const { queue, group } = c.req.valid('param');
    await (await queueOf(c, queue)).resumeGroup(group);
    return c.json({ queue, group, paused: false } as const, 200);
  });

  app.openapi(groupLimitRoute, async (c) => {
    const { queue, group } = c.req.valid('param');
    const { limit } = c.req.valid('json');
    await (await queueOf(c, queue)).setGroupLimit(group, limit);
    return c.json({ queue, group, limit }, 200);
  });

  app.openapi(groupsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { cursor, limit, prefix } = c.req.valid('query');
    const page = await (await queueOf(c, queue)).groups({ limit, ...(cursor === undefined ? {} : { cursor }), ...(prefix === undefined ? {} : { prefix }) });
    return c.json(page, 200);
  });
}
