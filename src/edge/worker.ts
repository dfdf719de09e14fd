import type { Hono } from 'hono';
import type { AppEnv } from '../http/app.js';
import { type BeatHostOptions, createBeatHost, type Platform, type QueueHandlers, type WaitUntil } from '../serverless/host.js';
import { UpstashTransport } from '../serverless/upstash-transport.js';
import type { WorkerEnv } from './env.js';

export type { WorkerEnv } from './env.js';
export type { WaitUntil } from '../serverless/host.js';

/** The little of Cloudflare's ScheduledController the Worker uses. */
export interface ScheduledTrigger {
  /** The cron expression that fired (from `wrangler.toml`). */
  readonly cron: string;
  /** When the event was scheduled to run (epoch ms). */
  readonly scheduledTime: number;
}

/**
 * A handler per queue name, each typed by its queue's payload in `Payloads` (a map from queue
 * name to payload type): `{ mail: Handler<{ to: string }> }` for `{ mail: { to: string } }`.
 */
export type WorkerHandlers<Payloads> = QueueHandlers<Payloads>;

/**
 * What to run: handlers by queue name, and how to run them (the options every platform's
 * adapter takes, src/serverless/host.ts). `Payloads` maps each queue name to its payload type;
 * `createWorker` infers it from the handlers when not given.
 */
export type WorkerOptions<Payloads = Record<string, unknown>> = BeatHostOptions<Payloads>;

/** The Worker's exported handlers. */
export interface EchomqWorker {
  /** The HTTP API: the same app as `emq serve`, with a short drain after an enqueue. */
  fetch(request: Request, env: WorkerEnv, ctx: WaitUntil): Response | Promise<Response>;
  /** The cron trigger: bounded beats of every queue with a handler until the event's deadline. */
  scheduled(trigger: ScheduledTrigger, env: WorkerEnv, ctx: WaitUntil): Promise<void>;
  /** The hono app, for tests and composition. */
  readonly app: Hono<AppEnv<WorkerEnv>>;
}

/**
 * Cloudflare as a platform of the serverless core: Redis over @upstash/redis from the Worker's
 * bindings, one transport per isolate (its env object), the Worker's limits as the defaults.
 */
const cloudflare: Platform<WorkerEnv> = {
  label: 'Worker',
  secretHint: '`wrangler secret put EMQ_TOKEN`',
  connect: (env) => UpstashTransport.fromEnv(env),
  settingsOf: (env) => env,
  refuse: (env) =>
    !env.UPSTASH_REDIS_REST_URL || !env.UPSTASH_REDIS_REST_TOKEN
      ? 'the Worker has no UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (wrangler secret put ...)'
      : undefined,
};

/**
 * The Worker: `fetch` is the HTTP API (the same hono app as `emq serve`); `scheduled` drains every
 * queue that has a handler with bounded beats until a deadline inside the cron period, waiting
 * for scheduled jobs that fall due before it; after an enqueue through the API a short drain runs
 * in `ctx.waitUntil` (unless a drain of this isolate will claim the job anyway), so an edge-only
 * user does not wait for the next minute. The serverless core (src/serverless/host.ts) does the
 * work; this is Cloudflare's adapter over it.
 *
 * The payload types come from a map from queue name to payload type, given as the type argument
 * or inferred from the handlers' own parameter types; every queue of the map needs its handler.
 *
 * @example
 * // workers/index.ts
 * export default createWorker<{ mail: { to: string }; thumbs: { url: string } }>({
 *   handlers: {
 *     mail: async (job) => { await sendMail(job.payload.to); },
 *     thumbs: async (job) => { await thumbnail(job.payload.url); },
 *   },
 * });
 */
export function createWorker<Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: WorkerOptions<Payloads>,
): EchomqWorker {
  const host = createBeatHost(options, cloudflare);
  return {
    app: host.app,
    fetch: (request, env, ctx) => host.fetch(request, env, ctx),
    async scheduled(trigger, env, ctx) {
      const run = host.scheduled(env, { trigger: trigger.cron });
      ctx.waitUntil(run);
      await run;
    },
  };
}
