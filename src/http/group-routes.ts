import { createRoute, z } from '@hono/zod-openapi';
import { GROUPS_PAGE } from '../groups.js';
import { json, refusals } from './openapi-parts.js';
import { rateLimitOrNone } from './rate-schemas.js';
import { queueParams } from './schemas.js';

/**
 * The route that lists a queue's groups with their numbers (`Queue.groups`, lua/list-groups.lua),
 * with its query and response schemas: what the dashboard's groups table reads.
 */

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

export const groupsRoute = createRoute({
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
