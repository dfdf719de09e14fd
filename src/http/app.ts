import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import { requestId, type RequestIdVariables } from 'hono/request-id';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../encode.js';
import { JobFailedError, PartitionError, WaitTimeoutError } from '../errors.js';
import { PartitionedQueue } from '../partitioned-queue.js';
import type { BackoffOptions, EnqueueOptions, JobRecord } from '../job.js';
import type { QueueOptions } from '../queue.js';
import { queueOverviews } from '../registry.js';
import type { Transport } from '../transport.js';
import { startInterval, startTimer } from '../timers.js';
import { registerAdminRoutes } from './admin-api.js';
import { bearerAuth } from './auth.js';
import { bodyLimit } from './body-limit.js';
import { renderMetrics } from './metrics.js';
import { registerFlowRoutes } from './flow-api.js';
import { FlowsCache } from './flows-cache.js';
import { errorResponse, problem } from './problem.js';
import { QueueCache } from './queue-cache.js';
import { registerRateRoutes } from './rate-api.js';
import { registerGroupRoutes } from './group-api.js';
import { registerSchedulerRoutes } from './scheduler-api.js';
import { registerDashboardParts, registerDashboardShell } from './ui/dashboard.js';
import type { JobView } from './responses.js';
import {
  bulkRoute,
  deadRoute,
  enqueueRoute,
  eventsRoute,
  eventsStreamRoute,
  getJobRoute,
  groupLimitRoute,
  healthRoute,
  metricsRoute,
  openApiRoute,
  pauseGroupRoute,
  pauseRoute,
  queuesRoute,
  removeJobRoute,
  reprocessRoute,
  resumeGroupRoute,
  resumeRoute,
  statsRoute,
} from './routes.js';
import { type EnqueueBody, MAX_WAIT_MS } from './schemas.js';

/** One structured log line per request. */
export interface RequestLog {
  /** When the request ended, ISO 8601. */
  readonly time: string;
  /** `error` for a 5xx answer, else `info`. */
  readonly level: 'info' | 'error';
  /** Always `request`. */
  readonly msg: string;
  /** The `X-Request-Id` the response carries. */
  readonly requestId: string;
  /** The HTTP method. */
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  /** The status answered. */
  readonly status: number;
  /** How long the answer took, in ms (one decimal). */
  readonly durationMs: number;
  /** The error's message, when a route threw. */
  readonly error?: string;
}

/** The app's hono environment: the runtime's bindings, and the request id hono sets. */
export interface AppEnv<Bindings extends object> {
  /** The runtime's bindings (`c.env`): the Worker's env, nothing on Node. */
  Bindings: Bindings;
  /** The request id hono sets (`c.var.requestId`). */
  Variables: RequestIdVariables;
}

/**
 * The context the option functions receive: the runtime's bindings in `c.env`. It is the app's
 * own context, request id included: hono's Context is invariant in its environment, so a narrower
 * one (bindings only) would not accept it.
 */
export type AppContext<Bindings extends object> = Context<AppEnv<Bindings>>;

/**
 * How an app is wired to its runtime. Each function receives the request's context: the Worker
 * reads its bindings from `c.env`, typed by `Bindings`.
 */
export interface AppOptions<Bindings extends object = {}> {
  /** The transport to Redis for a request (Node: one for the process; Worker: from bindings). */
  readonly transport: (c: AppContext<Bindings>) => Transport;
  /** The bearer token requests must carry; undefined leaves the API open. */
  readonly token?: (c: AppContext<Bindings>) => string | undefined;
  /** When it returns a message, every request is refused with 503 EMQCONFIG saying it. */
  readonly refuse?: (c: AppContext<Bindings>) => string | undefined;
  /** When it returns a message, every response carries it in `X-Emq-Warning`. */
  readonly warning?: (c: AppContext<Bindings>) => string | undefined;
  /** Options for the queues the API builds (payload cap, defaults, retention). */
  readonly queueOptions?: QueueOptions;
  /** Where request logs go (default: one JSON line on stdout; pass `() => {}` to silence). */
  readonly log?: (entry: RequestLog) => void;
  /**
   * Called after jobs were written through the API (not for duplicates), with when the earliest of
   * them may run (epoch ms by this runtime's clock; now or earlier: claimable at once), and after a
   * scheduler was upserted, with its next slot (always later than now: only a beat fires a slot).
   * The Worker wakes or starts a short drain here.
   */
  readonly afterEnqueue?: (c: AppContext<Bindings>, queue: string, dueAt: number) => void;
  /** The largest bulk request body in bytes (default 10 MiB), and a flow's (`POST /v1/flows`). */
  readonly maxBulkBodyBytes?: number;
  /**
   * How long this runtime may hold a request open on the events stream (default: the Worker's,
   * BOUNDED_STREAMING). `emq serve` passes NODE_STREAMING.
   */
  readonly streaming?: StreamingLimits;
  /**
   * Whether the app serves the dashboard at `/ui` (default true): its pages are read with the
   * same bearer token as the API (README, "Dashboard").
   */
  readonly dashboard?: boolean;
}

/**
 * How long the routes that follow the events stream (SSE, `?wait`) may hold a request, and how
 * often they read where they cannot park (docs/design.md, "Subscribing").
 */
export interface StreamingLimits {
  /**
   * How long an SSE response lasts before the server closes it (the client's EventSource
   * reconnects with Last-Event-ID), in ms; undefined: for as long as the client stays.
   */
  readonly streamMs?: number;
  /** The longest `?wait` of the enqueue route, in ms (a larger one is cut to it), at most 30,000. */
  readonly maxWaitMs: number;
  /** How often the stream (or a job's row, with events off) is read on a transport that cannot park, in ms. */
  readonly pollMs: number;
  /**
   * How often an SSE response with nothing to send carries a comment line (`: keep-alive`), in ms
   * (default 15,000): proxies drop a response that is silent for long (often 60 s).
   */
  readonly heartbeatMs?: number;
}

/**
 * Node (`emq serve`): an SSE response stays open while its client does, and every SSE client and
 * waiter of a queue shares one parked XREAD BLOCK of the server's.
 */
export const NODE_STREAMING: StreamingLimits = { maxWaitMs: MAX_WAIT_MS, pollMs: 1000 };

/**
 * The Worker: it cannot park, so it reads every second, and an SSE response closes after 25 s (25
 * reads, about 60 requests to Redis a minute per stream kept open by its client's reconnects); a
 * `?wait` is cut to 20 s (at most 20 reads beside the enqueue and its drain: within a request's
 * subrequests, and far inside Cloudflare's 100 s for a response to begin).
 */
export const BOUNDED_STREAMING: StreamingLimits = { streamMs: 25_000, maxWaitMs: 20_000, pollMs: 1000 };

/** How often a dashboard page reloads its content where it cannot follow the events (the Worker), in ms. */
const DASHBOARD_POLL_MS = 5_000;

/**
 * The enqueue route's body limit for a payload cap. The cap is on the payload as stored (UTF-8
 * bytes of its JSON, encode.ts), and a body may spell one stored byte as six (`\u0041`; Python's
 * `json.dumps` escapes all non-ASCII by default): six times the cap, and 64 KiB for the options,
 * lets every payload that fits as stored through to that check.
 */
const enqueueBodyLimit = (maxPayloadBytes: number): number => 6 * maxPayloadBytes + 64 * 1024;

/** The document's fixed parts; the paths come from the routes. */
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'echomq', version: '0.1.0', description: 'A job queue on Redis: enqueue, inspect and control jobs.' },
  security: [{ bearer: [] }],
};

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
  };
}

/** When a scheduled job of `body` falls due, by this runtime's clock (the scripts use Redis's). */
function dueAtOf(body: EnqueueBody): number {
  if (body.runAt !== undefined) return typeof body.runAt === 'string' ? Date.parse(body.runAt) : body.runAt;
  return Date.now() + (body.delayMs ?? 0);
}

/** A job as the API shows it. */
function jobView(job: JobRecord): JobView {
  return {
    id: job.id,
    state: job.state,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    attemptsStarted: job.attemptsStarted,
    payload: job.payload,
    ...(job.group === undefined ? {} : { group: job.group }),
    priority: job.priority,
    backoff: job.backoff,
    ...(job.error === undefined ? {} : { error: job.error }),
    createdAt: job.createdAt,
    ...(job.runAt === undefined ? {} : { runAt: job.runAt }),
    ...(job.leaseUntil === undefined ? {} : { leaseUntil: job.leaseUntil }),
    ...(job.finishedAt === undefined ? {} : { finishedAt: job.finishedAt }),
    ...(job.result === undefined ? {} : { result: job.result }),
    ...(job.progress === undefined ? {} : { progress: job.progress }),
    ...(job.scheduler === undefined ? {} : { scheduler: job.scheduler }),
  };
}

/** Why the events routes refuse a partitioned queue, and what to do instead. */
const eventsRefusal = (queue: string, partitions: number): string =>
  `queue ${queue} has ${partitions} partitions, each with its own events stream, and an entry id is a place in one of them: follow them from TypeScript (PartitionedQueue.events() interleaves them; parts[i].readEvents reads one)`;

/** What the remove and reprocess routes answer for `id`: the id the other routes take. */
const fullId = (id: string): string => (id.startsWith('JOB:') ? id : `JOB:${id}`);

/** The queue a drain after an add should run: a partitioned queue's partition the job went to, else the queue. */
function drainedOf(q: unknown, queue: string, id: string, group: string | null | undefined): string {
  return q instanceof PartitionedQueue ? q.partitionOfAdded(id, group).name : queue;
}

/**
 * The HTTP API as one hono app, the same object on Node (`emq serve`) and in the Worker: JSON in
 * and out, params, queries and bodies validated by the routes' zod schemas, errors as
 * `{error: {code, message}}` with 400, 401, 404, 409, 413 or 503, request ids, one structured log
 * line per request, `/metrics` and `/v1/openapi.json` (generated from the same routes).
 *
 * @example
 * // Node: no bindings
 * const app = createApp({ transport: () => transport, token: () => process.env.EMQ_TOKEN });
 * serve({ fetch: app.fetch, port: 8787 });
 * // Worker: the bindings type the context
 * const edge = createApp<WorkerEnv>({ transport: (c) => transportOf(c.env), token: (c) => c.env.EMQ_TOKEN });
 */
export function createApp<Bindings extends object = {}>(options: AppOptions<Bindings>): OpenAPIHono<AppEnv<Bindings>> {
  const log = options.log ?? ((entry: RequestLog) => console.log(JSON.stringify(entry)));
  const streaming = options.streaming ?? BOUNDED_STREAMING;
  const maxPayload = options.queueOptions?.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const queues = new QueueCache(options.queueOptions);
  const queueOf = (c: AppContext<Bindings>, name: string) => queues.get(options.transport(c), name);
  const { maxPayloadBytes, defaults } = options.queueOptions ?? {};
  const { durability, replicationTimeoutMs } = options.queueOptions ?? {};
  const flows = new FlowsCache({
    ...(maxPayloadBytes === undefined ? {} : { maxPayloadBytes }),
    ...(defaults === undefined ? {} : { defaults }),
    // a flow's writes are as durable as the queues'
    ...(durability === undefined ? {} : { durability }),
    ...(replicationTimeoutMs === undefined ? {} : { replicationTimeoutMs }),
  });
  const maxBulkBody = options.maxBulkBodyBytes ?? 10 * 1024 * 1024;
  const tooLarge = (limit: number): MiddlewareHandler<AppEnv<Bindings>> =>
    bodyLimit(limit, (c) => problem(c, 'EMQTOOLARGE', `the request body is over ${limit} bytes`));

  const app = new OpenAPIHono<AppEnv<Bindings>>({
    // Validation failures answer 400 EMQARG naming the field, and write nothing.
    defaultHook: (result, c) => {
      if (result.success) return undefined;
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return problem(c, 'EMQARG', `${result.target === 'json' ? 'body' : result.target} ${where}${issue?.message ?? 'is invalid'}`);
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });

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
      requestId: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(c.error ? { error: c.error.message } : {}),
    });
  });
  // The dashboard's frame holds no data: served without the token (its script asks for it), and
  // before the refusal, so a Worker deployed without EMQ_TOKEN shows the page and then says why
  // it answers nothing.
  const dashboard = options.dashboard ?? true;
  const live = { mode: streaming.streamMs === undefined ? 'sse' : 'poll', pollMs: DASHBOARD_POLL_MS } as const;
  if (dashboard) registerDashboardShell(app, live);

  app.use('*', async (c, next) => {
    const refusal = options.refuse?.(c);
    if (refusal) return problem(c, 'EMQCONFIG', refusal);
    return next();
  });

  // before the bearer token: a load balancer's health check carries none
  app.openapi(healthRoute, async (c) => {
    try {
      await Promise.race([
        options.transport(c).ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 2 s')), 2_000)),
      ]);
      return c.json({ ok: true } as const, 200);
    } catch (error) {
      return problem(c, 'EMQREDIS', `Redis does not answer: ${(error as Error).message}`);
    }
  });

  app.use('*', bearerAuth<AppEnv<Bindings>>((c) => options.token?.(c)));

  // A queue cached for a name whose partitioning changed since (a plain Queue for a name
  // partitioned since) is refused with EMQPARTITION at its first enqueue, nothing written: dropped
  // here, so the next request resolves the name again.
  app.use('/v1/queues/:queue/*', async (c, next) => {
    await next();
    if (c.error instanceof PartitionError) queues.forget(options.transport(c), c.req.param('queue'));
  });

  app.openapi(metricsRoute, async (c) => {
    const text = await renderMetrics(options.transport(c));
    return c.text(text, 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
  });

  // Generated once, on first ask: the routes do not change after this function returns.
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.openapi(openApiRoute, (c) => c.json((document ??= app.getOpenAPI31Document(DOCUMENT)), 200));

  // the body limits run first: a body declared too large is refused before any of it is read, a
  // chunked one as soon as it passes the limit
  app.on('POST', enqueueRoute.getRoutingPath(), tooLarge(enqueueBodyLimit(maxPayload)));
  app.openapi(enqueueRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const body = c.req.valid('json');
    const key = c.req.valid('header')['idempotency-key'];
    const { wait } = c.req.valid('query');
    // a W3C traceparent continues the caller's trace (README, "Telemetry"); a malformed one is ignored
    const traceparent = c.req.header('traceparent');
    const addOptions = {
      ...toOptions(body),
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...(traceparent === undefined ? {} : { traceparent }),
    };
    if (wait !== undefined) {
      const q = await queueOf(c, queue);
      let id = '';
      try {
        const done = await q.addAndWait(body.payload, {
          ...addOptions,
          timeoutMs: Math.min(wait, streaming.maxWaitMs),
          pollMs: streaming.pollMs,
          onAdded: (added) => {
            id = added.id;
            if (added.state !== 'duplicate') options.afterEnqueue?.(c, drainedOf(q, queue, added.id, body.group), added.state === 'pending' ? Date.now() : dueAtOf(body));
          },
        });
        return c.json({ id: done.id, state: 'completed' as const, ...(done.result === undefined ? {} : { result: done.result }) }, 200);
      } catch (error) {
        if (error instanceof JobFailedError) return c.json({ id, state: 'dead' as const, error: error.jobError }, 200);
        if (!(error instanceof WaitTimeoutError)) throw error;
        const job = await q.getJob(id);
        if (!job) throw error;
        return c.json({ id, state: job.state }, 202);
      }
    }
    const q = await queueOf(c, queue);
    const result = await q.add(body.payload, addOptions);
    // the reply is `add`'s result as it is: one shape in TypeScript, over HTTP and from `emq enqueue`
    if (result.state === 'duplicate') return c.json({ id: result.id, state: result.state }, 200);
    // a replaced job is claimable now or due at this add's time: the Worker's drain wakes for it too
    // (of a partitioned queue, the drain of the partition it went to)
    options.afterEnqueue?.(c, drainedOf(q, queue, result.id, body.group), result.state === 'pending' ? Date.now() : dueAtOf(body));
    if (result.state === 'replaced') return c.json({ id: result.id, state: result.state }, 200);
    return c.json({ id: result.id, state: result.state }, 201);
  });

  app.on('POST', bulkRoute.getRoutingPath(), tooLarge(maxBulkBody));
  app.openapi(bulkRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { jobs } = c.req.valid('json');
    const key = c.req.valid('header')['idempotency-key'];
    const traceparent = c.req.header('traceparent');
    const results = await (await queueOf(c, queue)).addBulk(
      jobs.map((job) => ({ payload: job.payload, ...toOptions(job) })),
      { ...(key === undefined ? {} : { idempotencyKey: key }), ...(traceparent === undefined ? {} : { traceparent }) },
    );
    const written = results.flatMap((r, i) =>
      r.state === 'pending' ? [Date.now()] : r.state === 'scheduled' || r.state === 'replaced' ? [dueAtOf(jobs[i]!)] : [],
    );
    if (written.length > 0) options.afterEnqueue?.(c, queue, Math.min(...written));
    return c.json({ jobs: results.map(({ id, state }) => ({ id, state })) }, 201);
  });

  // a path of its own, one segment short of the stats route's: neither can answer for the other
  app.openapi(queuesRoute, async (c) => c.json({ queues: await queueOverviews(options.transport(c)) }, 200));

  app.openapi(statsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    return c.json(await (await queueOf(c, queue)).stats(), 200);
  });

  app.openapi(getJobRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    const job = await (await queueOf(c, queue)).getJob(id);
    if (!job) return problem(c, 'EMQNOTFOUND', `no job ${id} in queue ${queue}`);
    return c.json(jobView(job), 200);
  });

  app.openapi(removeJobRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    await (await queueOf(c, queue)).remove(id);
    return c.json({ id: fullId(id), removed: true } as const, 200);
  });

  app.openapi(reprocessRoute, async (c) => {
    const { queue, id } = c.req.valid('param');
    await (await queueOf(c, queue)).reprocess(id);
    return c.json({ id: fullId(id), state: 'pending' } as const, 200);
  });

  app.openapi(deadRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { limit, offset } = c.req.valid('query');
    const jobs = await (await queueOf(c, queue)).listDead({ limit, offset });
    return c.json({ jobs: jobs.map(jobView) }, 200);
  });

  app.openapi(pauseRoute, async (c) => {
    const { queue } = c.req.valid('param');
    await (await queueOf(c, queue)).pause();
    return c.json({ queue, paused: true } as const, 200);
  });

  app.openapi(resumeRoute, async (c) => {
    const { queue } = c.req.valid('param');
    await (await queueOf(c, queue)).resume();
    return c.json({ queue, paused: false } as const, 200);
  });

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

  app.openapi(eventsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { after, limit } = c.req.valid('query');
    const q = await queueOf(c, queue);
    if (q instanceof PartitionedQueue) return problem(c, 'EMQPARTITION', eventsRefusal(queue, q.partitions));
    return c.json(await q.readEvents({ after, limit }), 200);
  });

  app.openapi(eventsStreamRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const after = c.req.valid('header')['last-event-id'] ?? c.req.valid('query').after;
    const q = await queueOf(c, queue);
    // refused before the stream opens: an entry id (Last-Event-ID) is a place in one partition's stream
    if (q instanceof PartitionedQueue) return problem(c, 'EMQPARTITION', eventsRefusal(queue, q.partitions));
    // One message an entry: an EventSource takes its id as Last-Event-ID only once the whole
    // message has arrived, so a connection dropped inside an entry resumes before it, and the
    // cursor stays the stream's own entry id, the one `after` everywhere takes.
    return streamSSE(
      c,
      async (stream) => {
        const stop = new AbortController();
        stream.onAbort(() => stop.abort());
        const timer = streaming.streamMs === undefined ? undefined : startTimer(() => stop.abort(), streaming.streamMs);
        // one write a comment, as writeSSE is one write a message: the two never interleave mid-message
        const heartbeat = startInterval(() => void stream.write(': keep-alive\n\n'), streaming.heartbeatMs ?? 15_000);
        try {
          for await (const entry of q.eventEntries({ ...(after === undefined ? {} : { after }), signal: stop.signal, pollMs: streaming.pollMs })) {
            if (entry.events.length === 0) continue;
            await stream.writeSSE({ id: entry.id, event: 'events', data: JSON.stringify(entry.events) });
          }
        } finally {
          timer?.cancel();
          heartbeat.cancel();
        }
      },
      async (error, stream) => {
        await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: { code: 'EMQREDIS', message: error.message } }) });
      },
    );
  });

  registerAdminRoutes(app, { queueOf, jobView, payloadLimit: tooLarge(enqueueBodyLimit(maxPayload)) });
  registerSchedulerRoutes(app, {
    queueOf,
    payloadLimit: tooLarge(enqueueBodyLimit(maxPayload)),
    // A slot due now or soon starts the Worker's short drain, as an enqueue does. It is never
    // "claimable at once": only a beat fires it, and a drain already claiming may claim again
    // without beating, so a slot due now is told as due a millisecond on (a drain of its own,
    // which beats unless another drain's beat went since). The slot is by Redis's clock: a drain
    // woken early beats, finds it not yet due, and sleeps until the due time its reply says.
    afterUpsert: (c, queue, nextRunAt) => options.afterEnqueue?.(c, queue, Math.max(nextRunAt, Date.now() + 1)),
  });
  registerRateRoutes(app, { queueOf });
  registerGroupRoutes(app, { queueOf });
  if (dashboard) registerDashboardParts(app, { transport: options.transport, queueOf, live: { ...live, ...(streaming.streamMs === undefined ? {} : { streamMs: streaming.streamMs }) } });
  registerFlowRoutes(app, {
    flowsOf: (c, names) => flows.get(options.transport(c), names),
    bodyLimit: tooLarge(maxBulkBody),
    afterEnqueue: (c, queue, dueAt) => options.afterEnqueue?.(c, queue, dueAt),
  });

  app.notFound((c) => problem(c, 'EMQNOTFOUND', `no route ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      // hono's own: malformed JSON and the like are bad input
      if (error.status === 413) return problem(c, 'EMQTOOLARGE', error.message);
      // the routes' media type gate: a body sent as anything but JSON
      if (error.status === 415) return problem(c, 'EMQARG', 'the body must be JSON (Content-Type: application/json)');
      if (error.status < 500) return problem(c, 'EMQARG', error.message || 'bad request');
    }
    return errorResponse(c, error);
  });
  return app;
}
