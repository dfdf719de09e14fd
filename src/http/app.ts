import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId, type RequestIdVariables } from 'hono/request-id';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../encode.js';
import { PartitionError } from '../errors.js';
import type { QueueOptions } from '../queue/queue.js';
import type { Transport } from '../transport.js';
import { registerAdminRoutes } from './admin-routes.js';
import { bearerAuth } from './auth.js';
import { bodyLimit } from './body-limit.js';
import { registerCancelRoutes } from './cancel-routes.js';
import { registerEventRoutes } from './event-routes.js';
import { registerFlowRoutes } from './flow-routes.js';
import { registerStepRoutes } from './step-routes.js';
import { FlowsCache } from './flows-cache.js';
import { registerGroupRoutes } from './group-routes.js';
import { registerJobRoutes } from './job-routes.js';
import { registerKeyRoutes } from './key-routes.js';
import { errorResponse, problem } from './problem.js';
import { QueueCache } from './queue-cache.js';
import { registerQueueRoutes } from './queue-routes.js';
import { registerRateRoutes } from './rate-routes.js';
import { registerSchedulerRoutes } from './scheduler-routes.js';
import { registerHealthRoute, registerServiceRoutes } from './service-routes.js';
import { BOUNDED_STREAMING, type StreamingLimits } from './streaming.js';
import { registerDashboardParts, registerDashboardShell } from './ui/dashboard.js';

export { BOUNDED_STREAMING, NODE_STREAMING, type StreamingLimits } from './streaming.js';

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
   * scheduler was upserted, with its next slot (always later than now: only a beat fires a slot),
   * and, with now, after an event resumed jobs or a key's limit readmitted parked ones.
   * The Worker wakes or starts a short drain here.
   */
  readonly afterEnqueue?: (c: AppContext<Bindings>, queue: string, dueAt: number) => void;
  /**
   * Called just before jobs claimable now are enqueued through the API (`POST .../jobs` and
   * `.../jobs/bulk`), with the queue's name as the route has it: the Worker makes its drain's first
   * beat ride in the enqueue's own request here.
   */
  readonly beforeEnqueue?: (c: AppContext<Bindings>, queue: string) => void;
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

/** How often a dashboard page reloads its content where it cannot follow the events (the Worker), in ms. */
const DASHBOARD_POLL_MS = 5_000;

/**
 * The enqueue route's body limit for a payload cap. The cap is on the payload as stored (UTF-8
 * bytes of its JSON, encode.ts), and a body may spell one stored byte as six (`\u0041`; Python's
 * `json.dumps` escapes all non-ASCII by default): six times the cap, and 64 KiB for the options,
 * lets every payload that fits as stored through to that check.
 */
const enqueueBodyLimit = (maxPayloadBytes: number): number => 6 * maxPayloadBytes + 64 * 1024;

/**
 * The HTTP API as one hono app, the same object on Node (`emq serve`) and in the Worker: JSON in
 * and out, params, queries and bodies validated by the routes' zod schemas, errors as
 * `{error: {code, message}}` with 400, 401, 404, 409, 413 or 503, request ids, one structured log
 * line per request, `/metrics` and `/v1/openapi.json` (generated from the same routes). Each
 * family of routes is one file (`*-routes.ts`: their declarations and handlers); this function
 * orders the middleware and mounts the families.
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
  registerHealthRoute(app, { transport: options.transport });

  app.use('*', bearerAuth<AppEnv<Bindings>>((c) => options.token?.(c)));

  // A queue cached for a name whose partitioning changed since (a plain Queue for a name
  // partitioned since) is refused with EMQPARTITION at its first enqueue, nothing written: dropped
  // here, so the next request resolves the name again.
  app.use('/v1/queues/:queue/*', async (c, next) => {
    await next();
    if (c.error instanceof PartitionError) queues.forget(options.transport(c), c.req.param('queue'));
  });

  const afterEnqueue = (c: AppContext<Bindings>, queue: string, dueAt: number) => options.afterEnqueue?.(c, queue, dueAt);
  const payloadLimit = tooLarge(enqueueBodyLimit(maxPayload));
  registerServiceRoutes(app, { transport: options.transport });
  const beforeEnqueue = (c: AppContext<Bindings>, queue: string) => options.beforeEnqueue?.(c, queue);
  registerJobRoutes(app, { queueOf, streaming, payloadLimit, bulkLimit: tooLarge(maxBulkBody), beforeEnqueue, afterEnqueue });
  registerQueueRoutes(app, { queueOf, transport: options.transport });
  registerGroupRoutes(app, { queueOf });
  // readmitted jobs are claimable now: the Worker drains their queue as after an enqueue
  registerKeyRoutes(app, { queueOf, afterReadmit: (c, queue) => afterEnqueue(c, queue, Date.now()) });
  registerEventRoutes(app, { queueOf, streaming });
  registerStepRoutes(app, { queueOf, afterResume: (c, queue) => afterEnqueue(c, queue, Date.now()) });
  registerCancelRoutes(app, { queueOf });
  registerAdminRoutes(app, { queueOf, payloadLimit });
  registerSchedulerRoutes(app, {
    queueOf,
    payloadLimit,
    // A slot due now or soon starts the Worker's short drain, as an enqueue does. It is never
    // "claimable at once": only a beat fires it, and a drain already claiming may claim again
    // without beating, so a slot due now is told as due a millisecond on (a drain of its own,
    // which beats unless another drain's beat went since). The slot is by Redis's clock: a drain
    // woken early beats, finds it not yet due, and sleeps until the due time its reply says.
    afterUpsert: (c, queue, nextRunAt) => afterEnqueue(c, queue, Math.max(nextRunAt, Date.now() + 1)),
  });
  registerRateRoutes(app, { queueOf });
  if (dashboard) registerDashboardParts(app, { transport: options.transport, queueOf, live: { ...live, ...(streaming.streamMs === undefined ? {} : { streamMs: streaming.streamMs }) } });
  registerFlowRoutes(app, {
    flowsOf: (c, names) => flows.get(options.transport(c), names),
    bodyLimit: tooLarge(maxBulkBody),
    afterEnqueue,
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
