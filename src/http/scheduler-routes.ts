import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import { MAX_PRIORITY } from '../encode.js';
import { MIN_EVERY_MS } from '../schedulers/schedulers.js';
import { body, failure, json, refusals } from './openapi-parts.js';
import { problem } from './problem.js';
import type { QueueOf } from './queue-cache.js';
import { backoffOptions, name, queueParams, schedulerParams } from './schemas.js';

/**
 * The routes of schedulers (`Queue.upsertScheduler` and its kin; docs/design.md, "Schedulers"),
 * with their request and response schemas: make or change one, read one, list them, remove one.
 * The body's shapes and ranges are checked here; what zod cannot say (exactly one of cron and
 * every, a pattern croner refuses, an unknown time zone, `endAt` before `startAt`) the Queue
 * checks before any write, and it answers the same 400 `EMQARG` naming the field.
 */

/** What the scheduler routes need of the app that serves them (`E`: its hono environment). */
export interface SchedulerWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** The body limit of a route that takes a payload (the enqueue route's). */
  readonly payloadLimit: MiddlewareHandler<E>;
  /**
   * Told after an upsert of the scheduler's next slot (epoch ms, Redis's clock), when it has one:
   * the app's after-enqueue hook, so the Worker starts the short drain an enqueue starts and a
   * slot due now or soon fires without waiting for the cron.
   */
  readonly afterUpsert: (c: Context<E>, queue: string, nextRunAt: number) => void;
}

const noSuchScheduler = { 404: failure('no such scheduler (EMQNOTFOUND)') };

/** An instant: epoch ms, or ISO 8601 text with its offset (as the enqueue route's `runAt`). */
const instant = z.union([z.number().int().min(0), z.iso.datetime({ offset: true })]);

/** The job a scheduler enqueues at each slot (`SchedulerJob`): a payload and the options a fired job takes. */
export const schedulerJobBody = z
  .object({
    payload: z.unknown().refine((v) => v !== undefined, 'payload is required'),
    group: name.optional(),
    priority: z.number().int().min(0).max(MAX_PRIORITY).optional(),
    maxAttempts: z.number().int().min(1).max(1_000_000).optional(),
    // a number is a fixed delay in ms, as `upsertScheduler` takes it
    backoff: z.union([z.number().int().min(0), backoffOptions]).optional(),
    expireAfterMs: z.number().int().min(1).optional().openapi({ description: 'each fired job expires this many ms after its firing unless started by then' }),
  })
  .strict();

/** `PUT /v1/queues/{queue}/schedulers/{id}`: a `SchedulerSpec` (instants as epoch ms or ISO text) and the job. */
export const schedulerBody = z
  .object({
    cron: z.string().optional().openapi({ description: 'five fields, or six with seconds first (croner); give cron or every' }),
    tz: z.string().optional().openapi({ description: 'the IANA time zone cron is read in (default UTC); only with cron' }),
    every: z.number().int().min(MIN_EVERY_MS).optional().openapi({ description: `fire every this many ms (at least ${MIN_EVERY_MS}); give cron or every` }),
    startAt: instant.optional().openapi({ description: 'no slot before this instant' }),
    endAt: instant.optional().openapi({ description: 'no slot after this instant' }),
    limit: z.number().int().min(1).optional().openapi({ description: 'fire at most this many slots in all, counted across upserts' }),
    job: schedulerJobBody,
  })
  .strict();

export type SchedulerBody = z.infer<typeof schedulerBody>;

const nextRunAt = z.number().int().nullable().openapi({ description: 'its next slot, epoch ms (server time); null once it fires no more' });

/** A scheduler as read back: `SchedulerRecord` as JSON. */
export const schedulerView = z
  .object({
    id: z.string(),
    cron: z.string().optional(),
    tz: z.string().optional(),
    every: z.number().int().optional(),
    startAt: z.number().int().optional().openapi({ description: 'epoch ms' }),
    endAt: z.number().int().optional().openapi({ description: 'epoch ms' }),
    limit: z.number().int().optional(),
    job: z.object({
      payload: z.unknown(),
      group: z.string().optional(),
      priority: z.number().int(),
      maxAttempts: z.number().int(),
      backoff: backoffOptions,
      expireAfterMs: z.number().int().optional(),
    }),
    nextRunAt,
    lastRunAt: z.number().int().nullable().openapi({ description: 'the last slot it fired, epoch ms; null before the first' }),
    fired: z.number().int().openapi({ description: 'how many slots it has fired' }),
    createdAt: z.number().int().openapi({ description: 'epoch ms (server time)' }),
    updatedAt: z.number().int().openapi({ description: 'when it was last upserted, epoch ms (server time)' }),
  })
  .openapi('Scheduler');

const upsertSchedulerRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/schedulers/{id}',
  summary: 'Make a scheduler, or change it in place: from now on it enqueues the job once per slot, `JOB:<id>@<slot>`',
  description:
    'The same spec again keeps its next slot; a new one starts at its first slot from now, never firing a slot already fired. After downtime one catch-up job, then the next slot after now.',
  request: { params: schedulerParams, body: body(schedulerBody) },
  responses: {
    200: json(z.object({ id: z.string(), nextRunAt }), 'made or changed'),
    413: failure('the body or the payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

const listSchedulersRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/schedulers',
  summary: "The queue's schedulers, soonest next slot first (those that fire no more last)",
  request: { params: queueParams },
  responses: { 200: json(z.object({ schedulers: z.array(schedulerView) }), 'every scheduler'), ...refusals },
});

const getSchedulerRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/schedulers/{id}',
  summary: 'Read a scheduler: its spec, its job, its next and last slot, and how many it fired',
  request: { params: schedulerParams },
  responses: { 200: json(schedulerView, 'the scheduler'), ...noSuchScheduler, ...refusals },
});

const removeSchedulerRoute = createRoute({
  method: 'delete',
  path: '/v1/queues/{queue}/schedulers/{id}',
  summary: 'Remove a scheduler: it fires no more (the jobs it fired stay)',
  request: { params: schedulerParams },
  responses: { 200: json(z.object({ id: z.string(), removed: z.literal(true) }), 'removed'), ...noSuchScheduler, ...refusals },
});

/**
 * Serves the scheduler routes on `app`, each a thin call: bad input a 400 naming the field before
 * any write, an absent scheduler a 404.
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
