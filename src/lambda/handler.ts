import { Hono } from 'hono';
import { handle, type LambdaContext, type LambdaEvent } from 'hono/aws-lambda';
import { IoredisTransport } from '../node/ioredis-transport.js';
import { type BeatHost, type BeatHostOptions, createBeatHost, type Platform, type ScheduledReport } from '../serverless/host.js';
import type { ServerlessEnv } from '../serverless/settings.js';
import { UpstashTransport, type UpstashEnv } from '../serverless/upstash-transport.js';
import { sleep } from '../timers.js';
import type { Transport } from '../transport.js';

/** The environment variables the Lambda adapter reads: where Redis is, and the EMQ_* settings. */
export interface LambdaEnv extends ServerlessEnv, UpstashEnv {
  /** Redis over TCP (ioredis), for a function that reaches it (in its VPC, or a public endpoint): used when set. */
  readonly REDIS_URL?: string;
}

/** What the platform hands the handler of an invocation: the event's time left, at least. */
export type LambdaInvocationContext = Pick<LambdaContext, 'getRemainingTimeInMillis'> & Partial<LambdaContext>;

/**
 * A scheduled invocation: an EventBridge rule's `Scheduled Event`, or an EventBridge Scheduler
 * schedule whose input names the beat (`{"emq": "beat"}`, as `emq init lambda` writes it).
 */
export interface LambdaScheduledEvent {
  /** `"Scheduled Event"` from an EventBridge rule. */
  readonly 'detail-type'?: string;
  /** Who sent it (`aws.events`, `aws.scheduler`), for the log. */
  readonly source?: string;
  /** `"beat"`: the input of a schedule `emq init lambda` wrote. */
  readonly emq?: string;
  /** The rule or schedule that fired, for the log. */
  readonly resources?: readonly string[];
}

/** Options of `createLambdaHandler`: the host's, and the environment to read (default `process.env`). */
export interface LambdaHandlerOptions<Payloads = Record<string, unknown>> extends BeatHostOptions<Payloads> {
  /** Where REDIS_URL, UPSTASH_REDIS_REST_* and the EMQ_* settings are read (default `process.env`). */
  readonly env?: LambdaEnv;
}

/**
 * The Lambda handler: a scheduled event's beats, or an HTTP event's answer (API Gateway v1 and v2,
 * a Function URL, an ALB). The event is what Lambda delivers, told apart at run time
 * (isScheduledEvent); an HTTP one goes to hono's Lambda adapter as it came.
 */
export type EchomqLambdaHandler = ((event: unknown, context: LambdaInvocationContext) => Promise<unknown>) & {
  /** The host beneath: its hono app, for tests and composition. */
  readonly host: BeatHost<LambdaEnv>;
  /**
   * Closes the TCP connections the handler opened (REDIS_URL), so a script that invoked it (a
   * local try, a test) can exit; the handler is not to be invoked after. Lambda itself needs no
   * call: the connections close on the instance's shutdown.
   */
  close(): Promise<void>;
};

/**
 * Time kept back from what Lambda leaves an invocation, in ms: a scheduled event stops beating
 * this long before its timeout, and an HTTP answer stops waiting for its drain this long before.
 */
const TIME_MARGIN_MS = 2_000;

/** Whether `event` is a scheduled invocation rather than an HTTP one. */
export function isScheduledEvent(event: unknown): event is LambdaScheduledEvent {
  if (typeof event !== 'object' || event === null) return false;
  const e = event as LambdaScheduledEvent;
  return e.emq === 'beat' || e['detail-type'] === 'Scheduled Event';
}

/** The TCP transports this module opened, closed when Lambda shuts the instance down. */
const opened = new Set<Transport>();
let closingOnShutdown = false;
/** How long the shutdown waits for the connections to close, in ms (Lambda allows 500 ms after SIGTERM). */
const SHUTDOWN_CLOSE_MS = 300;

/**
 * Closes `transport` when the instance shuts down: Lambda sends SIGTERM first (when an extension
 * is registered). The connections close (QUIT), then the signal goes on as if unheard: with no
 * other listener, the process ends as it would have.
 */
function closeOnShutdown(transport: Transport): void {
  opened.add(transport);
  if (closingOnShutdown) return;
  closingOnShutdown = true;
  process.once('SIGTERM', () => {
    const closed = Promise.allSettled([...opened].map((t) => t.close()));
    void Promise.race([closed, sleep(SHUTDOWN_CLOSE_MS)]).then(() => {
      if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
    });
  });
}

/**
 * AWS Lambda as a platform of the serverless core: Redis over TCP (ioredis) when REDIS_URL is set,
 * else over REST (@upstash/redis); one transport per warm instance, reused by its invocations and
 * closed on the instance's shutdown (each TCP one also kept in `mine`, for the handler's close).
 * Lambda freezes an instance once it has answered, so a completion is acknowledged at once
 * (ackWithinMs 0) and the drain after an enqueue starts only jobs due within a second: the answer
 * waits for it (see createLambdaHandler).
 */
function lambdaPlatform(mine: Set<Transport>): Platform<LambdaEnv> {
  return {
    label: 'function',
    secretHint: "the function's environment (`EMQ_TOKEN`, from a secret)",
    connect: (env) => {
      if (!env.REDIS_URL) return UpstashTransport.fromEnv(env);
      const transport = IoredisTransport.connect(env.REDIS_URL);
      mine.add(transport);
      closeOnShutdown(transport);
      return transport;
    },
    settingsOf: (env) => env,
    refuse: (env) =>
      env.REDIS_URL || (env.UPSTASH_REDIS_REST_URL && env.UPSTASH_REDIS_REST_TOKEN)
        ? undefined
        : 'the function has no REDIS_URL, nor UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: set them in its environment',
    defaults: { drainOnEnqueueMs: 1_000, ackWithinMs: 0 },
  };
}

/**
 * The Lambda adapter: one handler for both kinds of invocation. A scheduled event (an
 * EventBridge rule, or an EventBridge Scheduler schedule with input `{"emq":"beat"}`) beats every
 * queue with a handler until `EMQ_BEAT_DEADLINE_MS` or the invocation's time left less 2 s,
 * whichever comes first, and resolves to what it did. An HTTP event (API Gateway, a Function URL,
 * an ALB) is answered by the API through hono's Lambda adapter. Lambda freezes an instance once
 * the handler has answered, so work kept alive after the answer would stall until an unknown
 * next invocation: the drain after an enqueue runs before the answer, bounded (jobs due within
 * `EMQ_DRAIN_ON_ENQUEUE_MS`, 1 s by default, each within its timeout, and never past the
 * invocation's time left less 2 s). Set `EMQ_DRAIN_ON_ENQUEUE_MS=0` to answer at once and leave
 * the jobs to the next scheduled event or a Node consumer.
 *
 * @example
 * // src/handler.ts, deployed with `emq init lambda`'s template.yaml
 * import { createLambdaHandler } from 'echomq/lambda';
 * export const handler = createLambdaHandler<{ mail: { to: string } }>({
 *   handlers: { mail: async (job) => { await sendMail(job.payload.to); } },
 * });
 */
export function createLambdaHandler<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: LambdaHandlerOptions<Payloads>,
): EchomqLambdaHandler {
  const env: LambdaEnv = options.env ?? (process.env as LambdaEnv);
  const mine = new Set<Transport>();
  const host = createBeatHost(options, lambdaPlatform(mine));
  /** What each HTTP invocation left running after its answer, by its context object. */
  const pending = new WeakMap<object, Array<Promise<unknown>>>();
  const app = new Hono<{ Bindings: { lambdaContext?: object } }>();
  app.all('*', (c) => {
    const kept = (c.env.lambdaContext && pending.get(c.env.lambdaContext)) ?? [];
    return host.fetch(c.req.raw, env, { waitUntil: (promise) => kept.push(promise) });
  });
  const http = handle(app);

  const handler = async (event: unknown, context: LambdaInvocationContext): Promise<unknown> => {
    const timeLeftMs = (): number => context.getRemainingTimeInMillis() - TIME_MARGIN_MS;
    if (isScheduledEvent(event)) {
      const trigger = event.resources?.[0] ?? event.source ?? 'schedule';
      const report: ScheduledReport | undefined = await host.scheduled(env, { trigger, timeLeftMs: timeLeftMs() });
      // a failed event fails its invocation (Lambda's error metric, EventBridge's retry: a beat is harmless twice)
      if (!report) throw new Error('the scheduled beat failed: its log line says why');
      return report;
    }
    const kept: Array<Promise<unknown>> = [];
    pending.set(context, kept);
    // an HTTP event of one of the shapes hono's adapter reads (it answers 400 to one it cannot)
    const answer = await http(event as LambdaEvent, context as LambdaContext);
    // the drains the answer started end before it goes: a frozen instance would hold them
    if (kept.length > 0) {
      const waited = new AbortController();
      await Promise.race([Promise.allSettled(kept), sleep(Math.max(0, timeLeftMs()), { signal: waited.signal })]);
      waited.abort();
    }
    pending.delete(context);
    return answer;
  };
  const close = async (): Promise<void> => {
    const closing = [...mine];
    mine.clear();
    for (const transport of closing) opened.delete(transport);
    await Promise.allSettled(closing.map((transport) => transport.close()));
  };
  return Object.assign(handler, { host, close });
}
