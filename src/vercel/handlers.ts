import { errorCodes, InvalidArgumentError } from '../errors.js';
import { constantTimeEqual } from '../http/auth.js';
import type { ErrorBody } from '../http/problem.js';
import { type BeatHostOptions, createBeatHost, type Platform } from '../serverless/host.js';
import type { ServerlessEnv } from '../serverless/settings.js';
import { UpstashTransport, type UpstashEnv } from '../serverless/upstash-transport.js';
import { sleep } from '../timers.js';
import type { Transport } from '../transport.js';
import { msToDeadline, type VercelRequestContext, vercelRequestContext } from './request-context.js';

/** The environment variables the Vercel adapter reads: where Redis is, the cron's secret, and the EMQ_* settings. */
export interface VercelEnv extends ServerlessEnv, UpstashEnv {
  /**
   * The secret Vercel sends to the cron route as `Authorization: Bearer <CRON_SECRET>`. Without it
   * the cron route refuses to beat (503 EMQCONFIG), unless EMQ_LOCAL_DEV=1.
   */
  readonly CRON_SECRET?: string;
  /** Redis over TCP, for a `connect` of your own on the Node runtime (the adapter itself never reads it). */
  readonly REDIS_URL?: string;
}

/** Options of `createVercelHandlers`: the host's, and how the functions reach Redis and stay alive. */
export interface VercelHandlersOptions<Payloads = Record<string, unknown>> extends BeatHostOptions<Payloads> {
  /**
   * The path the API route is mounted at (`/api/emq` for `app/api/emq/[...path]/route.ts`),
   * stripped before the app sees the path (`/v1/...`). Default: none. A request outside it is
   * served as it came (a rewrite may have stripped it already).
   */
  readonly basePath?: string;
  /** Where the Upstash variables, CRON_SECRET and the EMQ_* settings are read (default `process.env`, which both Vercel runtimes have). */
  readonly env?: VercelEnv;
  /**
   * The transport to Redis (default `UpstashTransport.fromEnv(env)`: REST, on both runtimes).
   * On the Node runtime, TCP: `(env) => IoredisTransport.connect(env.REDIS_URL!)` from
   * `echomq/node`. Called once per environment, so a warm instance keeps its connection.
   */
  readonly connect?: (env: VercelEnv) => Transport;
  /**
   * What keeps the function alive after its answer, for every request (Next.js's `after` from
   * `next/server`, say). Default: Vercel's own `waitUntil` (the one @vercel/functions exports),
   * when the request has one; without either, the answer waits for the drain it started.
   */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
  /**
   * The function's `maxDuration`, in ms (default 60,000, the `export const maxDuration = 60` the
   * guide's route files set): a cron's beats end this less a 2 s margin after the request came,
   * and an answer that waits for its drain waits no longer.
   */
  readonly maxDurationMs?: number;
}

/** A Web-standard route handler: what Next.js App Router route files and Vercel Functions export (`GET`, `POST`...). */
export type VercelRouteHandler = (request: Request) => Promise<Response>;

/** The adapter's handlers: the API under every method, and the cron route's. */
export interface VercelHandlers {
  /** The HTTP API (reads). */
  readonly GET: VercelRouteHandler;
  /** The HTTP API (enqueues, flows, admin actions). */
  readonly POST: VercelRouteHandler;
  /** The HTTP API (schedulers, rate limits). */
  readonly PUT: VercelRouteHandler;
  /** The HTTP API. */
  readonly PATCH: VercelRouteHandler;
  /** The HTTP API (removals). */
  readonly DELETE: VercelRouteHandler;
  /** The HTTP API (GET's headers, no body). */
  readonly HEAD: VercelRouteHandler;
  /** The HTTP API (preflights). */
  readonly OPTIONS: VercelRouteHandler;
  /** The HTTP API under any method: for `export default { fetch }` in a Vercel Function outside Next.js. */
  readonly fetch: VercelRouteHandler;
  /**
   * The Vercel Cron route (vercel.json `crons`, which Vercel calls with GET): bounded beats of every
   * queue with a handler, answered with what they did once they end.
   */
  readonly cron: VercelRouteHandler;
}

/** The environment an invocation runs with, and whether something keeps the function alive after its answer. */
interface Invocation {
  readonly vars: VercelEnv;
  /** True: a waitUntil keeps it alive (the Worker's defaults); false: its answer waits for its drain (see `settingsOf`). */
  readonly keptAlive: boolean;
}

/**
 * Time kept back from the function's duration, in ms: a cron's beats stop this long before the
 * function would be stopped, and an answer stops waiting for its drain this long before.
 */
const TIME_MARGIN_MS = 2_000;
/** The default `maxDurationMs`: the most every plan allows with and without Fluid compute (docs/guides/vercel.md, "Limits"). */
const DEFAULT_MAX_DURATION_MS = 60_000;
/** The Edge runtime must begin its response within 25 s (https://vercel.com/docs/functions/runtimes/edge): a cron there answers by then. */
const EDGE_FIRST_BYTE_MS = 25_000;

/** Whether this is Vercel's Edge runtime, which defines the global `EdgeRuntime` (a string) as Vercel documents. */
const onEdge = (): boolean => typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string';

/** The error body the app answers with, for the cron route's own refusals. */
function failure(code: ErrorBody['error']['code'], message: string, headers: Record<string, string> = {}): Response {
  const body: ErrorBody = { error: { code, message } };
  const status = code === 'EMQINTERNAL' ? 500 : errorCodes[code];
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** `basePath` as a prefix: a leading slash, no trailing one, '' for none. */
const prefixOf = (basePath: string | undefined): string => {
  const trimmed = (basePath ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `/${trimmed}`;
};

/**
 * Vercel as a platform of the serverless core: Redis over REST from the environment (or the
 * caller's `connect`), one transport per environment object shared by both kinds of invocation,
 * so a warm instance (Fluid compute serves many requests in one) keeps it.
 */
function vercelPlatform(connect: ((env: VercelEnv) => Transport) | undefined): Platform<Invocation> {
  const transports = new WeakMap<VercelEnv, Transport>();
  return {
    label: 'function',
    secretHint: "the project's environment variables (`vercel env add EMQ_TOKEN`)",
    connect: ({ vars }) => {
      let transport = transports.get(vars);
      if (!transport) transports.set(vars, (transport = connect ? connect(vars) : UpstashTransport.fromEnv(vars)));
      return transport;
    },
    // Where nothing keeps the function alive after it answers, the answer waits for its drain: the
    // drain starts only jobs due within a second, and a completion is acknowledged at once rather
    // than held for a request to ride with (Lambda's defaults). A setting of the environment wins.
    settingsOf: ({ vars, keptAlive }) =>
      keptAlive ? vars : { ...vars, EMQ_DRAIN_ON_ENQUEUE_MS: vars.EMQ_DRAIN_ON_ENQUEUE_MS || '1000', EMQ_ACK_WITHIN_MS: vars.EMQ_ACK_WITHIN_MS || '0' },
    refuse: ({ vars }) =>
      connect || (vars.UPSTASH_REDIS_REST_URL && vars.UPSTASH_REDIS_REST_TOKEN)
        ? undefined
        : "the function has no UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: set them in the project's environment variables (or pass `connect`, on the Node runtime ioredis over REDIS_URL)",
  };
}

/**
 * The Vercel adapter: Web-standard route handlers for Vercel Functions on the Node and the Edge
 * runtime and for Next.js App Router route files. `GET`, `POST`, `PUT`, `PATCH`, `DELETE`,
 * `HEAD` and `OPTIONS` are the HTTP API (the same app as `emq serve`) mounted at `basePath`;
 * `cron` is the route a Vercel Cron calls: it checks `Authorization: Bearer <CRON_SECRET>`, then
 * beats every queue with a handler until `EMQ_BEAT_DEADLINE_MS` (50 s) or the function's
 * `maxDurationMs` less 2 s, whichever comes first, and answers with what the beats did.
 *
 * After an enqueue through the API a short drain runs the job: kept alive after the answer by
 * Vercel's `waitUntil` when the request has one (on Vercel, both runtimes), or by the `waitUntil`
 * option; elsewhere (local dev, tests) the answer waits for it, bounded, as on Lambda.
 *
 * @example
 * // lib/emq.ts, imported by app/api/emq/[...path]/route.ts and app/api/emq-cron/route.ts
 * import { createVercelHandlers } from 'echomq/vercel';
 * export const emq = createVercelHandlers<{ mail: { to: string } }>({
 *   basePath: '/api/emq',
 *   handlers: { mail: async (job) => { await sendMail(job.payload.to); } },
 * });
 * // app/api/emq/[...path]/route.ts
 * export const { GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS } = emq;
 * export const maxDuration = 60;
 */
export function createVercelHandlers<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: VercelHandlersOptions<Payloads>,
): VercelHandlers {
  const vars: VercelEnv = options.env ?? (typeof process === 'undefined' ? {} : (process.env as VercelEnv));
  const basePath = prefixOf(options.basePath);
  const maxDurationMs = options.maxDurationMs ?? DEFAULT_MAX_DURATION_MS;
  if (!Number.isFinite(maxDurationMs) || maxDurationMs <= 0) throw new InvalidArgumentError(`maxDurationMs must be a positive number of ms (the function's maxDuration), got ${maxDurationMs}`);
  const platform = vercelPlatform(options.connect);
  // the dashboard's pages fetch /ui/... from the site's root: under a base path they would miss
  const host = createBeatHost({ ...options, dashboard: options.dashboard ?? basePath === '' }, platform);
  /** Both kinds of invocation, each one object for the host to keep its instance by. */
  const kept: Invocation = { vars, keptAlive: true };
  const awaited: Invocation = { vars, keptAlive: false };

  /** What keeps this request's function alive after its answer, if anything does. */
  const keepAliveOf = (context: VercelRequestContext | undefined): ((promise: Promise<unknown>) => void) | undefined => {
    if (options.waitUntil) return options.waitUntil;
    const waitUntil = context?.waitUntil;
    return waitUntil ? (promise) => waitUntil.call(context, promise) : undefined;
  };

  /** The ms this invocation has left, less the margin: its maxDuration, Vercel's deadline when given, the Edge runtime's first byte. */
  const timeLeftMs = (started: number, context: VercelRequestContext | undefined): number => {
    const elapsed = Date.now() - started;
    const limits = [maxDurationMs - elapsed, msToDeadline(context) ?? Infinity, onEdge() ? EDGE_FIRST_BYTE_MS - elapsed : Infinity];
    return Math.max(0, Math.min(...limits) - TIME_MARGIN_MS);
  };

  const withoutBasePath = (request: Request): Request => {
    if (basePath === '') return request;
    const url = new URL(request.url);
    if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return request;
    url.pathname = url.pathname.slice(basePath.length) || '/';
    return new Request(url, request);
  };

  const api: VercelRouteHandler = async (request) => {
    const started = Date.now();
    const context = vercelRequestContext();
    const keepAlive = keepAliveOf(context);
    if (keepAlive) return host.fetch(withoutBasePath(request), kept, { waitUntil: keepAlive });
    const pending: Array<Promise<unknown>> = [];
    const response = await host.fetch(withoutBasePath(request), awaited, { waitUntil: (promise) => void pending.push(promise) });
    // nothing keeps the function alive after the answer: the drains it started end before it goes
    if (pending.length > 0) {
      const waited = new AbortController();
      await Promise.race([Promise.allSettled(pending), sleep(timeLeftMs(started, context), { signal: waited.signal })]);
      waited.abort();
    }
    return response;
  };

  const cron: VercelRouteHandler = async (request) => {
    const started = Date.now();
    const context = vercelRequestContext();
    const secret = vars.CRON_SECRET;
    if (!secret && vars.EMQ_LOCAL_DEV !== '1') {
      return failure(
        'EMQCONFIG',
        'the function has no CRON_SECRET: set it with `vercel env add CRON_SECRET` (Vercel sends it to the cron route as Authorization: Bearer <CRON_SECRET>); an open cron route is for local dev only (EMQ_LOCAL_DEV=1)',
      );
    }
    if (secret) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('Authorization') ?? '');
      if (!match || !(await constantTimeEqual(match[1]!, secret))) {
        const message = match ? 'the bearer token is not CRON_SECRET' : 'this cron route needs Authorization: Bearer <CRON_SECRET>';
        return failure('EMQAUTH', message, { 'WWW-Authenticate': 'Bearer realm="echomq cron"' });
      }
    }
    const missing = platform.refuse?.(awaited);
    if (missing) return failure('EMQCONFIG', missing);
    const invocation = keepAliveOf(context) ? kept : awaited;
    const report = await host.scheduled(invocation, { trigger: 'vercel-cron', timeLeftMs: timeLeftMs(started, context) });
    if (!report) return failure('EMQINTERNAL', "the scheduled beat failed: the function's log says why");
    return new Response(JSON.stringify(report), { status: 200, headers: { 'content-type': 'application/json' } });
  };

  return { GET: api, POST: api, PUT: api, PATCH: api, DELETE: api, HEAD: api, OPTIONS: api, fetch: api, cron };
}
