import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { DEFAULT_EVENT_KEEP_MS, MAX_EVENT_KEEP_MS } from '../steps/steps.js';
import { body, failure, json, refusals } from './openapi-parts.js';
import type { QueueOf } from './queue-cache.js';
import { idempotencyHeaders, queueParams } from './schemas.js';

/**
 * The durable steps' route (docs/guides/steps.md): an event sent to the jobs of a queue that wait
 * for it (`step.waitForEvent`). The job's steps themselves are in its view (`GET job`).
 */

/** What the steps' route needs of the app that serves it (`E`: its hono environment). */
export interface StepWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** Told each queue (a partitioned queue's partitions) where the event resumed jobs: the Worker drains it, as after an enqueue. */
  readonly afterResume: (c: Context<E>, queue: string) => void;
}

const eventParams = queueParams.extend({
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, "letters, digits, '.', '_' or '-', 1 to 128 characters")
    .openapi({ param: { name: 'name', in: 'path' }, example: 'email.verified', description: "the event's name, as the waits name it" }),
});

const sendEventBody = z
  .object({
    data: z.unknown().optional().openapi({ description: 'the event\'s data (JSON, within the payload cap): what the waits resolve with, and what their `match` is compared with' }),
    id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,200}$/, "letters, digits, '.', '_', ':' or '-', 1 to 200 characters")
      .optional()
      .openapi({ description: 'an id for this send: the same id again within a day answers as the first and resumes nobody (the Idempotency-Key header, when no id is given)' }),
    keepMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_EVENT_KEEP_MS)
      .optional()
      .openapi({ description: `how long it is kept for waits that begin after it, in ms (default ${DEFAULT_EVENT_KEEP_MS})` }),
  })
  .strict()
  .openapi('SendEvent');

const sentEvent = z
  .object({
    id: z.string().openapi({ description: "the event's id: the one given, or its sequence number in the queue" }),
    resumed: z.number().int().openapi({ description: 'the waiting jobs it resumed (a repeat answers the first send\'s count)' }),
  })
  .openapi('SentEvent');

const sendEventRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/events/{name}',
  summary: 'Send an event to the jobs waiting for it (step.waitForEvent): each matching waiter resumes once',
  request: { params: eventParams, headers: idempotencyHeaders, body: body(sendEventBody) },
  responses: { 200: json(sentEvent, 'sent: the jobs it resumed'), 413: failure('data over the payload cap (EMQTOOLARGE): nothing was written'), ...refusals },
});

/**
 * Serves the steps' route on `app`.
 *
 * @example
 * registerStepRoutes(app, { queueOf, afterResume });
 */
export function registerStepRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: StepWiring<E>): void {
  const { queueOf, afterResume } = wiring;
  app.openapi(sendEventRoute, async (c) => {
    const { queue, name } = c.req.valid('param');
    const { data, id, keepMs } = c.req.valid('json');
    const key = c.req.valid('header')['idempotency-key'];
    const q = await queueOf(c, queue);
    const given = id ?? key;
    const sent = await q.sendEvent(name, data, { ...(given === undefined ? {} : { id: given }), ...(keepMs === undefined ? {} : { keepMs }) });
    // the partitions a resumed job may be in (a plain queue's one part is itself)
    if (sent.resumed > 0) for (const part of q.parts) afterResume(c, part.name);
    return c.json(sent, 200);
  });
}
