import { type BeatHost, type BeatHostOptions, createBeatHost, type Platform, type ScheduledReport } from '../serverless/host.js';
import type { ServerlessEnv } from '../serverless/settings.js';
import { UpstashTransport, type UpstashEnv } from '../serverless/upstash-transport.js';
import { sleep } from '../timers.js';
import type { Transport } from '../transport.js';

/**
 * The site's environment variables as the adapter reads them: where Redis is (the Upstash REST
 * endpoint), the EMQ_* settings, and every other variable of the site (for a `connect` of your
 * own: `env.REDIS_URL`).
 */
export interface NetlifyEnv extends ServerlessEnv, UpstashEnv {
  /** Any other variable of the site. */
  readonly [name: string]: string | undefined;
}

/**
 * The little of Netlify's `Context` (the second argument of a Functions v2 handler) the adapter
 * uses, declared here so that echomq needs no `@netlify/functions`: its own `Context` fits.
 */
export interface NetlifyContext {
  /**
   * Keeps the invocation alive after the response until `promise` settles, within the function's
   * execution limit (https://docs.netlify.com/build/functions/api/). Absent on a runtime without it:
   * the drain after an enqueue then ends before the answer.
   */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

/** Options of `createNetlifyFunction` and `createNetlifyScheduledFunction`: the host's, and where Redis and the settings are. */
export interface NetlifyFunctionOptions<Payloads = Record<string, unknown>> extends BeatHostOptions<Payloads> {
  /**
   * The site's variables (default: `Netlify.env`, Netlify's global, else `process.env`), read at
   * the first invocation and kept for the instance: the host keeps its transport per env object.
   */
  readonly env?: NetlifyEnv;
  /**
   * The transport to Redis for `env`, called once per instance (default: `UpstashTransport.fromEnv`,
   * Redis over REST, which runs wherever fetch does). Pass one for Redis over TCP on Node:
   * `(env) => IoredisTransport.connect(env.REDIS_URL!)` from `echomq/node`.
   */
  readonly connect?: (env: NetlifyEnv) => Transport;
  /**
   * The path the API function is served under (its `config.path` less the `/*`), removed before
   * the app sees `/v1/...` (default `/api/emq`). `/.netlify/functions/<name>`, a function's URL
   * when it has no `config.path`, is removed too; any other path (`/ui`, say) goes to the app as it
   * is. Unused by the scheduled function.
   */
  readonly basePath?: string;
}

/** A Functions v2 handler: the default export of a file in `netlify/functions/`. */
export type EchomqNetlifyFunction = ((request: Request, context: NetlifyContext) => Promise<Response>) & {
  /** The host beneath: its hono app, for tests and composition. */
  readonly host: BeatHost<NetlifyEnv>;
  /**
   * Closes the transports the function opened (a TCP one from `connect` holds a connection), so a
   * script that invoked it (a local try, a test) can exit; the function is not to be invoked
   * after. Netlify itself needs no call.
   */
  close(): Promise<void>;
};

/**
 * Netlify's execution limit of a scheduled function, in ms: 30 s, not configurable
 * (https://docs.netlify.com/build/functions/configuration/).
 */
const SCHEDULED_LIMIT_MS = 30_000;
/** Netlify's execution limit of a synchronous function, in ms: 60 s, not configurable (same page). */
const SYNCHRONOUS_LIMIT_MS = 60_000;
/**
 * Time kept back from those limits, in ms: a scheduled beat never drains past its limit less this,
 * nor does an answer wait for its drain past it, whatever EMQ_BEAT_DEADLINE_MS says.
 */
const TIME_MARGIN_MS = 2_000;
/**
 * How long a scheduled beat drains by default, in ms: the 30 s limit less 5 s, so that the last
 * job's timeout fits before the limit with room for its acknowledgement, the flush of what the
 * drains held and the answer.
 */
const SCHEDULED_DEADLINE_MS = 25_000;

/** Netlify's global, in its functions on Node and on its edge: the site's variables. */
interface NetlifyGlobal {
  readonly env?: { toObject(): Record<string, string> };
}

/** The site's variables: Netlify's global where it runs, else the process's (outside Netlify: a test, a script). */
function siteEnv(): NetlifyEnv {
  const netlify = (globalThis as { Netlify?: NetlifyGlobal }).Netlify;
  if (netlify?.env) return netlify.env.toObject();
  return (globalThis as { process?: { env?: NetlifyEnv } }).process?.env ?? {};
}

/**
 * Netlify Functions as a platform of the serverless core: Redis over REST by default (or the
 * `connect` given), one transport per instance, kept in `opened` for the function's close. Netlify
 * keeps an invocation alive for what it hands `context.waitUntil`, so the drain after an enqueue
 * runs after the answer, as in a Worker; a scheduled event drains 25 s by default, within the 30 s
 * Netlify gives it. Its functions run on AWS Lambda, frozen once an invocation has ended (the
 * answer and what waitUntil holds): a completion is acknowledged at once (ackWithinMs 0), not held
 * for a later request that a frozen instance would not send.
 */
function netlifyPlatform(connect: ((env: NetlifyEnv) => Transport) | undefined, opened: Set<Transport>): Platform<NetlifyEnv> {
  return {
    label: 'function',
    secretHint: 'the site\'s environment variables (`netlify env:set EMQ_TOKEN <token> --secret`)',
    connect: (env) => {
      const transport = connect ? connect(env) : UpstashTransport.fromEnv(env);
      opened.add(transport);
      return transport;
    },
    settingsOf: (env) => env,
    refuse: (env) => unconfigured(env, connect),
    defaults: { deadlineMs: SCHEDULED_DEADLINE_MS, ackWithinMs: 0 },
  };
}

/** Why the site cannot reach Redis (no REST variables, and no `connect`), in one line, or undefined. */
const unconfigured = (env: NetlifyEnv, connect: unknown): string | undefined =>
  connect || (env.UPSTASH_REDIS_REST_URL && env.UPSTASH_REDIS_REST_TOKEN)
    ? undefined
    : 'the site has no UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (nor a `connect` option): set them in its environment variables';

/** Closes every transport in `opened`. */
async function closeAll(opened: Set<Transport>): Promise<void> {
  const all = [...opened];
  opened.clear();
  await Promise.all(all.map((transport) => transport.close()));
}

/** A JSON answer, as the app writes its own. */
const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

/** `request` with its path relative to `basePath` (or to `/.netlify/functions/<name>`), the app's routes being `/v1/...`. */
function routed(request: Request, basePath: string): Request {
  const url = new URL(request.url);
  const path = url.pathname;
  const prefix = basePath !== '' && (path === basePath || path.startsWith(`${basePath}/`)) ? basePath : /^\/\.netlify\/functions\/[^/]+/.exec(path)?.[0];
  if (prefix === undefined) return request;
  url.pathname = path.slice(prefix.length) || '/';
  return new Request(url, request);
}

/**
 * The Netlify adapter's HTTP function: the API (the same app as `emq serve`) under `basePath`, in
 * a file of `netlify/functions/` with `config.path` set to match. After an enqueue, a short drain
 * runs the queue's jobs due within `EMQ_DRAIN_ON_ENQUEUE_MS` (5 s by default) in
 * `context.waitUntil`: the answer goes at once, and Netlify keeps the invocation alive until the
 * drain ends (each job within its timeout, the whole within the 60 s limit of a synchronous
 * function). On a runtime without `waitUntil` the answer waits for the drain instead, never past
 * that limit less 2 s. Set `EMQ_DRAIN_ON_ENQUEUE_MS=0` to leave the jobs to the scheduled function.
 *
 * @example
 * // netlify/functions/emq.ts
 * import { createNetlifyFunction } from 'echomq/netlify';
 * export default createNetlifyFunction<{ mail: { to: string } }>({
 *   handlers: { mail: async (job) => { await sendMail(job.payload.to); } },
 * });
 * export const config = { path: '/api/emq/*' };
 */
export function createNetlifyFunction<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: NetlifyFunctionOptions<Payloads>,
): EchomqNetlifyFunction {
  const opened = new Set<Transport>();
  const host = createBeatHost(options, netlifyPlatform(options.connect, opened));
  const basePath = (options.basePath ?? '/api/emq').replace(/\/+$/, '');
  let env = options.env;
  const handler = async (request: Request, context: NetlifyContext): Promise<Response> => {
    const started = Date.now();
    env ??= siteEnv();
    const waitUntil = context.waitUntil;
    if (waitUntil) return host.fetch(routed(request, basePath), env, { waitUntil: (promise) => waitUntil.call(context, promise) });
    // no waitUntil: what the answer started ends before it goes, or an instance frozen after it would hold it
    const kept: Array<Promise<unknown>> = [];
    const answer = await host.fetch(routed(request, basePath), env, { waitUntil: (promise) => kept.push(promise) });
    if (kept.length > 0) {
      const waited = new AbortController();
      const left = SYNCHRONOUS_LIMIT_MS - TIME_MARGIN_MS - (Date.now() - started);
      await Promise.race([Promise.allSettled(kept), sleep(Math.max(0, left), { signal: waited.signal })]);
      waited.abort();
    }
    return answer;
  };
  return Object.assign(handler, { host, close: () => closeAll(opened) });
}

/**
 * The Netlify adapter's scheduled function, in a file of `netlify/functions/` with
 * `config.schedule` set: each invocation (Netlify POSTs `{"next_run": ...}` to it) beats every
 * queue with a handler (reap, promote, fire schedulers, relay flows, drain) until
 * `EMQ_BEAT_DEADLINE_MS` (25 s by default, Netlify's 30 s limit of a scheduled function less room
 * for the last job's acknowledgement and the answer), never past that limit less 2 s, and answers
 * 200 with what it did. A beat that failed answers 500 (its log line says why); a site without
 * its Redis variables 503 `EMQCONFIG`.
 *
 * @example
 * // netlify/functions/emq-beat.ts
 * import { createNetlifyScheduledFunction } from 'echomq/netlify';
 * export default createNetlifyScheduledFunction<{ mail: { to: string } }>({
 *   handlers: { mail: async (job) => { await sendMail(job.payload.to); } },
 * });
 * export const config = { schedule: '* * * * *' };
 */
export function createNetlifyScheduledFunction<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: NetlifyFunctionOptions<Payloads>,
): EchomqNetlifyFunction {
  const opened = new Set<Transport>();
  const host = createBeatHost(options, netlifyPlatform(options.connect, opened));
  let env = options.env;
  // the context has nothing a beat needs: Netlify gives no time left, its limit is fixed
  const handler = async (request: Request): Promise<Response> => {
    const started = Date.now();
    env ??= siteEnv();
    // the body (`{"next_run": ...}`) says nothing the beat needs: read so the request ends cleanly
    await request.arrayBuffer().catch(() => undefined);
    const missing = unconfigured(env, options.connect);
    if (missing) return json(503, { error: { code: 'EMQCONFIG', message: missing } });
    const timeLeftMs = SCHEDULED_LIMIT_MS - TIME_MARGIN_MS - (Date.now() - started);
    const report: ScheduledReport | undefined = await host.scheduled(env, { trigger: 'netlify-schedule', timeLeftMs });
    if (!report) return json(500, { error: { code: 'EMQINTERNAL', message: 'the scheduled beat failed: the function log says why' } });
    return json(200, report);
  };
  return Object.assign(handler, { host, close: () => closeAll(opened) });
}
