import { zValidator } from '@hono/zod-validator';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import type { z } from 'zod';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../encode.js';
import type { BackoffOptions, EnqueueOptions, JobRecord } from '../job.js';
import type { QueueOptions } from '../queue.js';
import type { Transport } from '../transport.js';
import { bearerAuth } from './auth.js';
import { renderMetrics } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { errorResponse, problem } from './problem.js';
import { QueueCache } from './queue-cache.js';
import { bulkBody, deadQuery, type EnqueueBody, enqueueBody, groupParams, jobParams, limitBody, queueParams } from './schemas.js';

/** One structured log line per request. */
export interface RequestLog {
  readonly time: string;
  readonly level: 'info' | 'error';
  readonly msg: string;
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly error?: string;
}

/**
 * How an app is wired to its runtime. Each function receives the request's context: the Worker
 * reads its bindings from `c.env`.
 */
export interface AppOptions {
  /** The transport to Redis for a request (Node: one for the process; Worker: from bindings). */
  readonly transport: (c: Context) => Transport;
  /** The bearer token requests must carry; undefined leaves the API open. */
  readonly token?: (c: Context) => string | undefined;
  /** When it returns a message, every request is refused with 503 EMQCONFIG saying it. */
  readonly refuse?: (c: Context) => string | undefined;
  /** When it returns a message, every response carries it in `X-Emq-Warning`. */
  readonly warning?: (c: Context) => string | undefined;
  /** Options for the queues the API builds (payload cap, defaults, retention). */
  readonly queueOptions?: QueueOptions;
  /** Where request logs go (default: one JSON line on stdout; pass `() => {}` to silence). */
  readonly log?: (entry: RequestLog) => void;
  /** Called after jobs were enqueued through the API: the Worker starts a short drain here. */
  readonly afterEnqueue?: (c: Context, queue: string) => void;
  /** The largest bulk request body in bytes (default 10 MiB). */
  readonly maxBulkBodyBytes?: number;
}

type Valid<T extends z.ZodType> = z.infer<T>;

/** Validation failures answer 400 EMQARG naming the field, and write nothing. */
const validate = <T extends z.ZodType, Target extends 'json' | 'param' | 'query'>(target: Target, schema: T) =>
  zValidator(target, schema, (result, c) => {
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return problem(c, 'EMQARG', `${target === 'json' ? 'body' : target} ${where}${issue?.message ?? 'is invalid'}`);
    }
    return undefined;
  });

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
  };
}

/** A job as the API shows it. */
function jobView(job: JobRecord): Record<string, unknown> {
  return {
    id: job.id,
    state: job.state,
    attempts: job.attempts - job.attemptsBase,
    maxAttempts: job.maxAttempts,
    totalAttempts: job.attempts,
    payload: job.payload,
    ...(job.group === undefined ? {} : { group: job.group }),
    priority: job.priority,
    backoff: job.backoff,
    ...(job.error === undefined ? {} : { error: job.error }),
    createdAt: job.createdAt,
    ...(job.runAt === undefined ? {} : { runAt: job.runAt }),
    ...(job.leaseUntil === undefined ? {} : { leaseUntil: job.leaseUntil }),
    ...(job.finishedAt === undefined ? {} : { finishedAt: job.finishedAt }),
  };
}

/**
 * The HTTP API as one hono app, the same object on Node (`emq serve`) and in the Worker: JSON in
 * and out, bodies and params validated by zod, errors as `{error: {code, message}}` with 400,
 * 401, 404, 409, 413 or 503, request ids, one structured log line per request, `/metrics` and
 * `/v1/openapi.json`.
 *
 * @example
 * const app = createApp({ transport: () => transport, token: () => process.env.EMQ_TOKEN });
 * serve({ fetch: app.fetch, port: 8787 });
 */
export function createApp(options: AppOptions): Hono {
  const log = options.log ?? ((entry: RequestLog) => console.log(JSON.stringify(entry)));
  const maxPayload = options.queueOptions?.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const queues = new QueueCache(options.queueOptions);
  const queueOf = (c: Context, name: string) => queues.get(options.transport(c), name);
  const tooLarge = (limit: number) =>
    bodyLimit({ maxSize: limit, onError: (c) => problem(c, 'EMQTOOLARGE', `the request body is over ${limit} bytes`) });

  const app = new Hono();

  app.use('*', requestId());
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    const warning = options.warning?.(c);
    if (warning) c.header('X-Emq-Warning', warning);
    const status = c.res.status;
    log({
      time: new Date().toISOString(),
      level: status >= 500 ? 'error' : 'info',
      msg: 'request',
      requestId: c.get('requestId' as never) as string,
      method: c.req.method,
      path: c.req.path,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(c.error ? { error: c.error.message } : {}),
    });
  });
  app.use('*', async (c, next) => {
    const refusal = options.refuse?.(c);
    if (refusal) return problem(c, 'EMQCONFIG', refusal);
    return next();
  });

  app.get('/healthz', async (c) => {
    try {
      await Promise.race([
        options.transport(c).ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 2 s')), 2_000)),
      ]);
      return c.json({ ok: true });
    } catch (error) {
      return problem(c, 'EMQREDIS', `Redis does not answer: ${(error as Error).message}`);
    }
  });

  app.use('*', bearerAuth((c) => options.token?.(c)));

  app.get('/metrics', async (c) => {
    const text = await renderMetrics(options.transport(c));
    return c.text(text, 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
  });

  app.get('/v1/openapi.json', (c) => c.json(openApiDocument()));

  app.post('/v1/queues/:queue/jobs', tooLarge(maxPayload + 64 * 1024), validate('param', queueParams), validate('json', enqueueBody), async (c) => {
    const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
    const body = c.req.valid('json' as never) as EnqueueBody;
    const result = await queueOf(c, queue).add(body.payload, toOptions(body));
    if (result.state === 'duplicate') return c.json({ id: result.id, duplicate: true }, 200);
    options.afterEnqueue?.(c, queue);
    return c.json({ id: result.id, state: result.state }, 201);
  });

  app.post(
    '/v1/queues/:queue/jobs/bulk',
    tooLarge(options.maxBulkBodyBytes ?? 10 * 1024 * 1024),
    validate('param', queueParams),
    validate('json', bulkBody),
    async (c) => {
      const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
      const { jobs } = c.req.valid('json' as never) as Valid<typeof bulkBody>;
      const results = await queueOf(c, queue).addBulk(jobs.map((job) => ({ payload: job.payload, options: toOptions(job) })));
      options.afterEnqueue?.(c, queue);
      return c.json({ ids: results.map((r) => r.id), states: results.map((r) => r.state) }, 201);
    },
  );

  app.get('/v1/queues/:queue', validate('param', queueParams), async (c) => {
    const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
    return c.json(await queueOf(c, queue).stats());
  });

  app.get('/v1/queues/:queue/jobs/:id', validate('param', jobParams), async (c) => {
    const { queue, id } = c.req.valid('param' as never) as Valid<typeof jobParams>;
    const job = await queueOf(c, queue).getJob(id);
    if (!job) return problem(c, 'EMQNOTFOUND', `no job ${id} in queue ${queue}`);
    return c.json(jobView(job));
  });

  app.delete('/v1/queues/:queue/jobs/:id', validate('param', jobParams), async (c) => {
    const { queue, id } = c.req.valid('param' as never) as Valid<typeof jobParams>;
    const q = queueOf(c, queue);
    await q.remove(id);
    return c.json({ id: id.startsWith('JOB:') ? id : `JOB:${id}`, removed: true });
  });

  app.post('/v1/queues/:queue/jobs/:id/reprocess', validate('param', jobParams), async (c) => {
    const { queue, id } = c.req.valid('param' as never) as Valid<typeof jobParams>;
    await queueOf(c, queue).reprocess(id);
    return c.json({ id: id.startsWith('JOB:') ? id : `JOB:${id}`, state: 'pending' });
  });

  app.get('/v1/queues/:queue/dead', validate('param', queueParams), validate('query', deadQuery), async (c) => {
    const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
    const { limit, offset } = c.req.valid('query' as never) as Valid<typeof deadQuery>;
    const jobs = await queueOf(c, queue).listDead({ limit, offset });
    return c.json({ jobs: jobs.map(jobView) });
  });

  app.post('/v1/queues/:queue/pause', validate('param', queueParams), async (c) => {
    const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
    await queueOf(c, queue).pause();
    return c.json({ queue, paused: true });
  });

  app.post('/v1/queues/:queue/resume', validate('param', queueParams), async (c) => {
    const { queue } = c.req.valid('param' as never) as Valid<typeof queueParams>;
    await queueOf(c, queue).resume();
    return c.json({ queue, paused: false });
  });

  app.post('/v1/queues/:queue/groups/:group/pause', validate('param', groupParams), async (c) => {
    const { queue, group } = c.req.valid('param' as never) as Valid<typeof groupParams>;
    await queueOf(c, queue).pauseGroup(group);
    return c.json({ queue, group, paused: true });
  });

  app.post('/v1/queues/:queue/groups/:group/resume', validate('param', groupParams), async (c) => {
    const { queue, group } = c.req.valid('param' as never) as Valid<typeof groupParams>;
    await queueOf(c, queue).resumeGroup(group);
    return c.json({ queue, group, paused: false });
  });

  app.put('/v1/queues/:queue/groups/:group/limit', validate('param', groupParams), validate('json', limitBody), async (c) => {
    const { queue, group } = c.req.valid('param' as never) as Valid<typeof groupParams>;
    const { limit } = c.req.valid('json' as never) as Valid<typeof limitBody>;
    await queueOf(c, queue).setGroupLimit(group, limit);
    return c.json({ queue, group, limit });
  });

  app.notFound((c) => problem(c, 'EMQNOTFOUND', `no route ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      // hono's own: malformed JSON and the like are bad input
      if (error.status === 413) return problem(c, 'EMQTOOLARGE', error.message);
      if (error.status < 500) return problem(c, 'EMQARG', error.message || 'bad request');
    }
    return errorResponse(c, error);
  });
  return app;
}
