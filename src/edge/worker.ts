import type { Hono } from 'hono';
import type { Handler, Outcome } from '../handler.js';
import { type AppEnv, createApp, type RequestLog } from '../http/app.js';
import type { Job } from '../job.js';
import { Queue, type QueueOptions } from '../queue.js';
import { type BeatSummary, boundedBeat, type BoundedBeatOptions } from './bounded-beat.js';
import { UpstashTransport } from './upstash-transport.js';

/** The bindings the Worker reads (wrangler.toml vars and secrets). */
export interface WorkerEnv {
  /** The Upstash (or `emq bridge`) REST endpoint. Secret. */
  readonly UPSTASH_REDIS_REST_URL?: string;
  /** Its token. Secret. */
  readonly UPSTASH_REDIS_REST_TOKEN?: string;
  /** The bearer token the HTTP API requires. Secret; without it the Worker refuses to serve. */
  readonly EMQ_TOKEN?: string;
  /** "1" in local dev only: serve without EMQ_TOKEN, saying so on every response. */
  readonly EMQ_LOCAL_DEV?: string;
  /** How long a scheduled event drains, in ms (default 50,000 for a one-minute cron). */
  readonly EMQ_BEAT_DEADLINE_MS?: string;
  /**
   * How long after an enqueue through the API jobs may still be started, in ms (default 5,000;
   * 0 turns it off). The drain runs in waitUntil until this plus the job timeout.
   */
  readonly EMQ_DRAIN_ON_ENQUEUE_MS?: string;
  /** Bounded beat settings (see BoundedBeatOptions); they override the code's `beat` options. */
  readonly EMQ_CONCURRENCY?: string;
  readonly EMQ_BATCH_SIZE?: string;
  readonly EMQ_JOB_TIMEOUT_MS?: string;
  readonly EMQ_MAX_REQUESTS?: string;
  readonly EMQ_LEASE_MARGIN_MS?: string;
  readonly EMQ_REAP_EVERY_MS?: string;
}

/** The little of Cloudflare's ExecutionContext the Worker uses. */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** The little of Cloudflare's ScheduledController the Worker uses. */
export interface ScheduledTrigger {
  readonly cron: string;
  readonly scheduledTime: number;
}

/** What to run: handlers by queue name, and how to run them. */
export interface WorkerOptions {
  /** A handler per queue: the scheduled beat and the drain after enqueue serve these queues. */
  readonly handlers: Readonly<Record<string, Handler<never>>>;
  readonly queueOptions?: QueueOptions;
  /** Bounded beat options (concurrency, batchSize, jobTimeoutMs, maxRequests, leaseMarginMs). */
  readonly beat?: Omit<BoundedBeatOptions, 'deadline' | 'onOutcome'>;
  /** Where logs go (default: one JSON line per event on console.log). */
  readonly log?: (entry: Record<string, unknown>) => void;
}

/** The Worker's exported handlers. */
export interface EchomqWorker {
  fetch(request: Request, env: WorkerEnv, ctx: WaitUntil): Response | Promise<Response>;
  scheduled(trigger: ScheduledTrigger, env: WorkerEnv, ctx: WaitUntil): Promise<void>;
  /** The hono app, for tests and composition. */
  readonly app: Hono<AppEnv<WorkerEnv>>;
}

const transports = new WeakMap<object, UpstashTransport>();

/** One transport per isolate and env object: a Worker reuses its client across requests. */
function transportOf(env: WorkerEnv): UpstashTransport {
  let transport = transports.get(env);
  if (!transport) {
    transport = UpstashTransport.fromEnv(env);
    transports.set(env, transport);
  }
  return transport;
}

/** The beat options: the code's, overridden by any EMQ_* var that is set. */
function beatOptions(base: WorkerOptions['beat'], env: WorkerEnv): NonNullable<WorkerOptions['beat']> {
  const pick = (value: string | undefined, fallback: number | undefined): number | undefined =>
    value === undefined || value === '' || Number.isNaN(Number(value)) ? fallback : Number(value);
  const entries = {
    concurrency: pick(env.EMQ_CONCURRENCY, base?.concurrency),
    batchSize: pick(env.EMQ_BATCH_SIZE, base?.batchSize),
    jobTimeoutMs: pick(env.EMQ_JOB_TIMEOUT_MS, base?.jobTimeoutMs),
    maxRequests: pick(env.EMQ_MAX_REQUESTS, base?.maxRequests),
    leaseMarginMs: pick(env.EMQ_LEASE_MARGIN_MS, base?.leaseMarginMs),
    reapEveryMs: pick(env.EMQ_REAP_EVERY_MS, base?.reapEveryMs),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const number = (value: string | undefined, fallback: number): number => (value === undefined || value === '' || Number.isNaN(Number(value)) ? fallback : Number(value));

/**
 * The Worker: `fetch` is the HTTP API (the same hono app as `emq serve`); `scheduled` drains every
 * queue that has a handler with bounded beats until a deadline inside the cron period, waiting
 * for scheduled jobs that fall due before it; after an enqueue through the API a short drain runs
 * in `ctx.waitUntil`, so an edge-only user does not wait for the next minute.
 *
 * @example
 * // workers/index.ts
 * export default createWorker({ handlers: { mail: async (job) => send(job.payload) } });
 */
export function createWorker(options: WorkerOptions): EchomqWorker {
  const log = options.log ?? ((entry: Record<string, unknown>) => console.log(JSON.stringify(entry)));
  const handlerOf = (queue: string): Handler<unknown> | undefined => options.handlers[queue] as Handler<unknown> | undefined;

  /** Beats on `queue` until `deadline`, sleeping for due jobs that fall before it. */
  const drain = async (env: WorkerEnv, queueName: string, deadline: number, maxRequests: number): Promise<BeatSummary[]> => {
    const handler = handlerOf(queueName);
    if (!handler) return [];
    const queue = new Queue<unknown>(transportOf(env), queueName, options.queueOptions);
    const beat = beatOptions(options.beat, env);
    const jobTimeoutMs = beat.jobTimeoutMs ?? 10_000;
    const summaries: BeatSummary[] = [];
    let requests = 0;
    for (;;) {
      const summary = await boundedBeat(queue, handler, {
        ...beat,
        deadline,
        maxRequests: maxRequests - requests,
        onOutcome: (job: Job<unknown>, outcome: Outcome | { kind: 'fenced' }) => {
          if (outcome.kind !== 'complete') log({ msg: 'job', queue: queueName, id: job.id, outcome: outcome.kind, ...('error' in outcome ? { error: outcome.error.split('\n')[0] } : {}) });
        },
      });
      summaries.push(summary);
      requests += summary.requests;
      const wait = summary.nextDueInMs;
      if (summary.stoppedBy !== 'empty' || wait === null || Date.now() + wait + jobTimeoutMs > deadline || requests >= maxRequests - 1) break;
      await sleep(wait);
    }
    return summaries;
  };

  const app = createApp<WorkerEnv>({
    transport: (c) => transportOf(c.env),
    token: (c) => c.env.EMQ_TOKEN || undefined,
    refuse: (c) => {
      if (!c.env.UPSTASH_REDIS_REST_URL || !c.env.UPSTASH_REDIS_REST_TOKEN) {
        return 'the Worker has no UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (wrangler secret put ...)';
      }
      if (!c.env.EMQ_TOKEN && c.env.EMQ_LOCAL_DEV !== '1') {
        return 'the Worker has no EMQ_TOKEN: set it with `wrangler secret put EMQ_TOKEN` (an open API is for local dev only, EMQ_LOCAL_DEV=1)';
      }
      return undefined;
    },
    warning: (c) => (c.env.EMQ_TOKEN ? undefined : 'no EMQ_TOKEN: this API is open (local dev only)'),
    ...(options.queueOptions ? { queueOptions: options.queueOptions } : {}),
    log: (entry: RequestLog) => log({ ...entry }),
    afterEnqueue: (c, queue) => {
      const ms = number(c.env.EMQ_DRAIN_ON_ENQUEUE_MS, 5_000);
      if (ms <= 0 || !handlerOf(queue)) return;
      const jobTimeoutMs = beatOptions(options.beat, c.env).jobTimeoutMs ?? 10_000;
      c.executionCtx.waitUntil(
        drain(c.env, queue, Date.now() + ms + jobTimeoutMs, 50).then(
          (summaries) => log({ msg: 'drain after enqueue', summaries }),
          (error: unknown) => log({ msg: 'drain after enqueue failed', error: String(error) }),
        ),
      );
    },
  });

  return {
    app,
    fetch: (request, env, ctx) => app.fetch(request, env, ctx as never),
    async scheduled(trigger, env, ctx) {
      const deadline = Date.now() + number(env.EMQ_BEAT_DEADLINE_MS, 50_000);
      const queues = Object.keys(options.handlers);
      const budget = Math.floor((beatOptions(options.beat, env).maxRequests ?? 900) / Math.max(1, queues.length));
      const run = Promise.all(queues.map((q) => drain(env, q, deadline, budget))).then(
        (all) => log({ msg: 'scheduled beat', cron: trigger.cron, summaries: all.flat() }),
        (error: unknown) => log({ msg: 'scheduled beat failed', cron: trigger.cron, error: String(error) }),
      );
      ctx.waitUntil(run);
      await run;
    },
  };
}
