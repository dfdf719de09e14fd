import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import { jobIdOf } from '../encode.js';
import { JobCancelledError, JobFailedError, WaitTimeoutError } from '../errors.js';
import type { BackoffOptions, EnqueueOptions } from '../job.js';
import type { QueueSurface } from '../queue/surface.js';
import { body, failure, json, refusals } from './openapi-parts.js';
import { problem } from './problem.js';
import type { QueueOf } from './queue-cache.js';
import { duplicate, enqueued, enqueuedBulk, jobView, jobViewOf, removed, reprocessed, waitedCancelled, waitedCompleted, waitedDead, waitedNot } from './responses.js';
import { bulkBody, type EnqueueBody, enqueueBody, enqueueQuery, idempotencyHeaders, jobParams, queueParams } from './schemas.js';
import type { StreamingLimits } from './streaming.js';

/**
 * The routes of one job: enqueue it (or up to 1000 in bulk), with `?wait` for it to finish; read
 * it; remove it; send it back from dead. Each a thin call of the Queue method the TypeScript API
 * has, errors by the one table.
 */

/** What the job routes need of the app that serves them (`E`: its hono environment). */
export interface JobWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** How long `?wait` may hold the request, and how often it reads where it cannot park. */
  readonly streaming: StreamingLimits;
  /** The enqueue route's body limit (from the payload cap). */
  readonly payloadLimit: MiddlewareHandler<E>;
  /** The bulk route's body limit. */
  readonly bulkLimit: MiddlewareHandler<E>;
  /**
   * Told after jobs were written (not for duplicates), with the queue a drain should run (of a
   * partitioned queue, the partition the job went to) and when the earliest of them may run.
   */
  readonly afterEnqueue: (c: Context<E>, queue: string, dueAt: number) => void;
  /** Told just before jobs of which one at least is claimable now are enqueued, with the route's queue name. */
  readonly beforeEnqueue?: (c: Context<E>, queue: string) => void;
}

const noSuchJob = { 404: failure('no such job (EMQNOTFOUND)') };

const enqueueRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs',
  summary: 'Enqueue one job; with ?wait=MS, wait up to MS for it to finish',
  request: { params: queueParams, query: enqueueQuery, headers: idempotencyHeaders, body: body(enqueueBody) },
  responses: {
    201: json(enqueued, 'created (or, with an Idempotency-Key seen before, created by the first request)'),
    200: json(
      z.union([duplicate, waitedCompleted, waitedDead, waitedCancelled]),
      'a job with this id or holding this dedupe key exists: nothing was written (`duplicate`, its id), or it took this payload and delay (`replaced`, `dedupe.replace`); with ?wait, the job (a duplicate or a replace: that job) finished within it: completed with its result, or dead with its error, or cancelled with its reason',
    ),
    202: json(waitedNot, 'with ?wait: the job did not finish within it (it may still); its state then'),
    409: failure('the Idempotency-Key was used with other jobs (EMQCONFLICT): nothing was written'),
    413: failure('the body or the payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

const bulkRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs/bulk',
  summary: 'Enqueue up to 1000 jobs: all of them, or none when any is bad',
  request: { params: queueParams, headers: idempotencyHeaders, body: body(bulkBody) },
  responses: {
    201: json(enqueuedBulk, 'created; `duplicate` for an id or a dedupe key that exists, `replaced` for a job a dedupe key replaced'),
    409: failure('the Idempotency-Key was used with other jobs (EMQCONFLICT): nothing was written'),
    413: failure('the body or a payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

const getJobRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/jobs/{id}',
  summary: 'Read a job',
  request: { params: jobParams },
  responses: { 200: json(jobView, 'the job'), ...noSuchJob, ...refusals },
});

const removeJobRoute = createRoute({
  method: 'delete',
  path: '/v1/queues/{queue}/jobs/{id}',
  summary: 'Remove a job in any state',
  request: { params: jobParams },
  responses: { 200: json(removed, 'removed'), ...noSuchJob, ...refusals },
});

const reprocessRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs/{id}/reprocess',
  summary: 'Send a dead job back to be claimed',
  request: { params: jobParams },
  responses: {
    200: json(reprocessed, 'pending again'),
    ...noSuchJob,
    409: failure('the job is not dead (EMQSTATE)'),
    ...refusals,
  },
});

/** A body's options as `add` takes them: the same names, `runAt` read from ISO text, `backoffMs` as a number `backoff`. */
function toOptions(body: EnqueueBody): EnqueueOptions {
  const backoff: number | BackoffOptions | undefined = body.backoff ?? body.backoffMs;
  return {
    ...(body.id === undefined ? {} : { id: body.id }),
    ...(body.group === undefined ? {} : { group: body.group }),
    ...(body.delayMs === undefined ? {} : { delayMs: body.delayMs }),
    ...(body.runAt === undefined ? {} : { runAt: typeof body.runAt === 'string' ? Date.parse(body.runAt) : body.runAt }),
    ...(body.priority === undefined ? {} : { priority: body.priority }),
    ...(body.maxAttempts === undefined ? {} : { maxAttempts: body.maxAttempts }),
    ...(backoff === undefined ? {} : { backoff }),
    ...(body.dedupe === undefined ? {} : { dedupe: body.dedupe }),
    ...(body.timeoutMs === undefined ? {} : { timeoutMs: body.timeoutMs }),
    ...(body.expireAfterMs === undefined ? {} : { expireAfterMs: body.expireAfterMs }),
    ...(body.keys === undefined ? {} : { keys: body.keys }),
    ...(body.expireAt === undefined ? {} : { expireAt: typeof body.expireAt === 'string' ? Date.parse(body.expireAt) : body.expireAt }),
  };
}

/** When a scheduled job of `body` falls due, by this runtime's clock (the scripts use Redis's). */
function dueAtOf(body: EnqueueBody): number {
  if (body.runAt !== undefined) return typeof body.runAt === 'string' ? Date.parse(body.runAt) : body.runAt;
  return Date.now() + (body.delayMs ?? 0);
}

/** The queue a drain after an add should run: a partitioned queue's partition the job went to, else the queue. */
function drainedOf(q: QueueSurface, id: string, group: string | null | undefined): string {
  return q.partitionOfAdded(id, group).name;
}

/** The add options of a request beside its body's: its Idempotency-Key and W3C traceparent. */
function requestOptions(key: string | undefined, traceparent: string | undefined): { idempotencyKey?: string; traceparent?: string } {
  // a traceparent continues the caller's trace (README, "Telemetry"); a malformed one is ignored
  return { ...(key === undefined ? {} : { idempotencyKey: key }), ...(traceparent === undefined ? {} : { traceparent }) };
}

/**
 * Serves the job routes on `app`. The body limits run first: a body declared too large is
 * refused before any of it is read, a chunked one as soon as it passes the limit.
 *
 * @example
 * registerJobRoutes(app, { queueOf, streaming: NODE_STREAMING, payloadLimit, bulkLimit, afterEnqueue: () => {} });
 */
export function registerJobRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: JobWiring<E>): void {
  const { queueOf, streaming, afterEnqueue } = wiring;

  app.on('POST', enqueueRoute.getRoutingPath(), wiring.payloadLimit);
  app.openapi(enqueueRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const body = c.req.valid('json');
    const { wait } = c.req.valid('query');
    const addOptions = { ...toOptions(body), ...requestOptions(c.req.valid('header')['idempotency-key'], c.req.header('traceparent')) };
    const q = await queueOf(c, queue);
    if (wait !== undefined) {
      let id = '';
      try {
        // the body's timeoutMs is the job's own; the wait's is the query's
        const { timeoutMs: jobTimeoutMs, ...jobOptions } = addOptions;
        const done = await q.addAndWait(body.payload, {
          ...jobOptions,
          ...(jobTimeoutMs === undefined ? {} : { jobTimeoutMs }),
          timeoutMs: Math.min(wait, streaming.maxWaitMs),
          pollMs: streaming.pollMs,
          onAdded: (added) => {
            id = added.id;
            if (added.state !== 'duplicate') afterEnqueue(c, drainedOf(q, added.id, body.group), added.state === 'pending' ? Date.now() : dueAtOf(body));
          },
        });
        return c.json({ id: done.id, state: 'completed' as const, ...(done.result === undefined ? {} : { result: done.result }) }, 200);
      } catch (error) {
        if (error instanceof JobFailedError) return c.json({ id, state: 'dead' as const, error: error.jobError }, 200);
        if (error instanceof JobCancelledError) return c.json({ id, state: 'cancelled' as const, reason: error.reason }, 200);
        if (!(error instanceof WaitTimeoutError)) throw error;
        const job = await q.getJob(id);
        if (!job) throw error;
        return c.json({ id, state: job.state }, 202);
      }
    }
    if (body.delayMs === undefined && body.runAt === undefined) wiring.beforeEnqueue?.(c, queue);
    const result = await q.add(body.payload, addOptions);
    // the reply is `add`'s result as it is: one shape in TypeScript, over HTTP and from `emq enqueue`
    if (result.state === 'duplicate') return c.json({ id: result.id, state: result.state }, 200);
    // a replaced job is claimable now or due at this add's time: the Worker's drain wakes for it too
    // (of a partitioned queue, the drain of the partition it went to)
    afterEnqueue(c, drainedOf(q, result.id, body.group), result.state === 'pending' ? Date.now() : dueAtOf(body));
    if (result.state === 'replaced') return c.json({ id: result.id, state: result.state }, 200);
    return c.json({ id: result.id, state: result.state }, 201);
  });

  app.on('POST', bulkRoute.getRoutingPath(), wiring.bulkLimit);
  app.openapi(bulkRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { jobs } = c.req.valid('json');
    const q = await queueOf(c, queue);
    if (jobs.some((job) => job.delayMs === undefined && job.runAt === undefined)) wiring.beforeEnqueue?.(c, queue);
    const results = await q.addBulk(
      jobs.map((job) => ({ payload: job.payload, ...toOptions(job) })),
      requestOptions(c.req.valid('header')['idempotency-key'], c.req.header('traceparent')),
    );
    const written = results.flatMap((r, i) =>
      r.state === 'pending' ? [Date.now()] : r.state === 'scheduled' || r.state === 'replaced' ? [dueAtOf(jobs[i]!)] : [],
    );
    if (written.length > 0) afterEnqueue(c, queue, Math.min(...written));
    return c.json({ jobs: results.map(({ id, state }) => ({ id, state })) }, 201);
  });

  app.openapi(getJobRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const job = await (await queueOf(c, queue)).getJob(id);
    if (!job) return problem(c, 'EMQNOTFOUND', `no job ${id} in queue ${queue}`);
    return c.json(jobViewOf(job), 200);
  });

  app.openapi(removeJobRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    await (await queueOf(c, queue)).remove(id);
    return c.json({ id: jobIdOf(id), removed: true } as const, 200);
  });

  app.openapi(reprocessRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    await (await queueOf(c, queue)).reprocess(id);
    return c.json({ id: jobIdOf(id), state: 'pending' } as const, 200);
  });
}
