import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { CANCELLABLE_STATES, DEFAULT_CANCEL_REASON, MAX_CANCEL_REASON } from '../queue/cancels.js';
import { BULK_ROUTE_LIMIT } from './admin-routes.js';
import { body, failure, json, optionalBody, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { jobParams, name, queueParams } from './schemas.js';

/**
 * The cancel routes (docs/guides/job-controls.md): cancel one job, or the jobs of one unfinished
 * state (of one group) in bulk. Thin calls of `queue.cancel` and `queue.cancelJobs`, errors by the
 * one table: a job not running ends `cancelled` at once, a running one answers `cancelling` and
 * ends cancelled at its settle; a finished job is a 409, none a 404, a bad reason a 400, and none
 * of these writes anything.
 */

/** What the cancel routes need of the app that serves them (`E`: its hono environment). */
export interface CancelWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
}

const reason = z
  .string()
  .min(1)
  .max(MAX_CANCEL_REASON)
  .optional()
  .openapi({ description: `why, kept on the job (\`cancelReason\`) and told to a running job's handler: 1 to ${MAX_CANCEL_REASON} characters (default \`${DEFAULT_CANCEL_REASON}\`)` });

/** `POST .../jobs/{id}/cancel`: the body is optional (no body: the default reason). */
export const cancelBody = z.object({ reason }).strict().openapi('Cancel');

/** `POST .../cancel`: which jobs, and why. */
export const cancelJobsBody = z
  .object({
    state: z.enum(CANCELLABLE_STATES).openapi({ description: 'the unfinished state whose jobs are cancelled' }),
    group: name.nullable().optional().openapi({ description: "only this group's jobs; null: only the ungrouped jobs; absent: every job of the state" }),
    reason,
    limit: z
      .number()
      .int()
      .min(1)
      .max(BULK_ROUTE_LIMIT.max)
      .default(BULK_ROUTE_LIMIT.default)
      .openapi({ description: 'the most jobs this request cancels (a Worker has a budget of subrequests: two a page of 500 jobs)' }),
  })
  .strict()
  .openapi('CancelJobs');

const cancelResult = z
  .object({
    id: z.string(),
    state: z.enum(['cancelled', 'cancelling']).openapi({
      description: '`cancelled`: it has ended (it was not running, or was cancelled before); `cancelling`: it runs, its handler was told, and its settle ends it cancelled',
    }),
  })
  .openapi('CancelResult');

const cancelJobsResult = z
  .object({
    cancelled: z.number().int().openapi({ description: 'jobs that ended cancelled' }),
    cancelling: z.number().int().openapi({ description: 'running jobs whose handlers were told (each ends cancelled at its settle)' }),
    more: z.boolean().openapi({ description: 'it stopped at its limit: there may be more, send the request again' }),
  })
  .openapi('CancelJobsResult');

const cancelRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs/{id}/cancel',
  summary: 'Cancel a job that has not finished: one not running ends cancelled at once, a running one is told and ends cancelled at its settle',
  request: { params: jobParams, body: optionalBody(cancelBody) },
  responses: {
    200: json(cancelResult, 'cancelled, or cancelling (a cancel sent again answers as the first)'),
    404: failure('no such job (EMQNOTFOUND)'),
    409: failure('the job has finished: completed or dead (EMQSTATE); nothing was written'),
    ...refusals,
  },
});

const cancelJobsRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/cancel',
  summary: "Cancel the jobs of one unfinished state (of one group, or the ungrouped ones), a page of the state's list at a time",
  request: { params: queueParams, body: body(cancelJobsBody) },
  responses: { 200: json(cancelJobsResult, 'how many ended and how many are stopping'), ...refusals },
});

/**
 * Serves the cancel routes on `app`.
 *
 * @example
 * registerCancelRoutes(app, { queueOf });
 */
export function registerCancelRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: CancelWiring<E>): void {
  const { queueOf } = wiring;

  app.openapi(cancelRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const { reason: why } = c.req.valid('json');
    const result = await (await queueOf(c, queue)).cancel(id, why === undefined ? {} : { reason: why });
    return c.json(result, 200);
  });

  app.openapi(cancelJobsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { state, group, reason: why, limit } = c.req.valid('json');
    const done = await (await queueOf(c, queue)).cancelJobs({
      state,
      limit,
      ...(group === undefined ? {} : { group }),
      ...(why === undefined ? {} : { reason: why }),
    });
    return c.json({ ...done, more: done.cancelled + done.cancelling >= limit }, 200);
  });
}
