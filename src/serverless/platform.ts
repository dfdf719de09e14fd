import type { Hono } from 'hono';
import type { Handler } from '../handler.js';
import type { AppEnv } from '../http/app.js';
import type { QueueOptions } from '../queue/queue.js';
import type { Transport } from '../transport.js';
import type { BeatSummary } from './bounded-beat.js';
import type { DrainBeatOptions } from './drain.js';
import type { PlatformDefaults, ServerlessEnv } from './settings.js';

/*
 * What the serverless core and a platform's adapter say to each other (host.ts is the core):
 * what an adapter gives (its Platform, the options its users pass, a scheduled event, its
 * waitUntil), and what it gets (a BeatHost and its reports).
 */

/** What keeps a serverless invocation alive after its response: Cloudflare's and Netlify's `ctx.waitUntil`, Vercel's `waitUntil`. */
export interface WaitUntil {
  /** Keeps the invocation alive until `promise` settles, after the response is sent. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A handler per queue name, each typed by its queue's payload in `Payloads` (a map from queue
 * name to payload type): `{ mail: Handler<{ to: string }> }` for `{ mail: { to: string } }`.
 */
export type QueueHandlers<Payloads> = { readonly [Name in keyof Payloads]: Handler<Payloads[Name]> };

/**
 * What to run, on any platform: handlers by queue name, and how to run them. `Payloads` maps each
 * queue name to its payload type; the adapters infer it from the handlers when not given.
 */
export interface BeatHostOptions<Payloads = Record<string, unknown>> {
  /** A handler per queue: the scheduled beat and the drain after enqueue serve these queues. */
  readonly handlers: QueueHandlers<Payloads>;
  /**
   * The partitioned queues among the handlers' (docs/design.md, "Partitioned queues"), with their
   * counts: `{ mail: 8 }` runs mail's handler on `mail~0` to `mail~7`, and a scheduled event's first
   * claims for every partition go in its one first request. Given here rather than read from the
   * registry: a beat then costs no lookup, and what the host drains does not depend on what Redis
   * holds. The count must be the queue's (its PartitionedQueue's `partitions`): with fewer, the
   * partitions past it are not drained.
   */
  readonly partitions?: { readonly [Name in keyof Payloads]?: number };
  /** Options of every Queue the host builds, the API's included (payload cap, defaults, retention). */
  readonly queueOptions?: QueueOptions;
  /** Bounded beat options (concurrency, batchSize, jobTimeoutMs, maxRequests, leaseMarginMs, reapEveryMs). */
  readonly beat?: DrainBeatOptions;
  /** Where logs go (default: one JSON line per event on console.log). */
  readonly log?: (entry: Record<string, unknown>) => void;
  /** Whether the app serves the dashboard at `/ui` (default true; README, "Dashboard"). */
  readonly dashboard?: boolean;
}

/**
 * What a platform adapter tells the host: where Redis is for an environment, where the EMQ_*
 * settings are, and its own limits. `Env` is whatever the platform hands each invocation (a
 * Worker's bindings; `process.env` on Lambda): the host keeps its transport and what it knows of
 * each queue per `Env` object, so a warm instance reuses them.
 */
export interface Platform<Env extends object> {
  /** What a deployment is called there, in messages: "Worker", "function". */
  readonly label: string;
  /** How a secret is set there, for the refusal without EMQ_TOKEN: "`wrangler secret put EMQ_TOKEN`". */
  readonly secretHint: string;
  /** The transport to Redis for `env`: called once per env object. */
  connect(env: Env): Transport;
  /** The EMQ_* settings in `env`. */
  settingsOf(env: Env): ServerlessEnv;
  /** Why the API cannot serve with `env` (Redis not configured), in one line, or undefined. */
  refuse?(env: Env): string | undefined;
  /** Where the platform's limits differ from a Worker's. */
  readonly defaults?: PlatformDefaults;
}

/** One scheduled event, as the adapter read it from its platform. */
export interface ScheduledEvent {
  /** What fired it, for the log (a cron expression, a schedule's name). */
  readonly trigger: string;
  /** The time the platform leaves the invocation, in ms, less a margin (Lambda's remaining time): the drain ends within it. */
  readonly timeLeftMs?: number;
}

/** What a scheduled event did. */
export interface ScheduledReport {
  /** Requests of its first round (the first beat of every queue): an idle event sends only these. */
  readonly firstRequests: number;
  /** Requests it sent in all. */
  readonly requests: number;
  /** Scheduler slots it fired. */
  readonly firedSlots: number;
  /** Each drain's beats, and what it acknowledged on its own after them. */
  readonly summaries: ReadonlyArray<BeatSummary | AcknowledgedLater>;
}

/** What a drain acknowledged on its own after its beats: completions no beat took along. */
export interface AcknowledgedLater {
  /** Its counts. */
  readonly acknowledgedLater: {
    /** Completions recorded. */
    readonly completed: number;
    /** Settles that found the lease lost. */
    readonly fenced: number;
    /** Requests they took. */
    readonly requests: number;
  };
}

/** A platform's queue runtime: the HTTP API with its drain after an enqueue, and the scheduled beats. */
export interface BeatHost<Env extends object> {
  /** The HTTP API (the same app as `emq serve`), with a short drain after an enqueue kept alive by `ctx`. */
  fetch(request: Request, env: Env, ctx: WaitUntil): Promise<Response>;
  /**
   * A scheduled event: bounded beats of every queue with a handler until the event's deadline
   * (reap, promote, fire schedulers, relay flows, drain). Never rejects: a failure is logged and
   * resolves to undefined.
   */
  scheduled(env: Env, event: ScheduledEvent): Promise<ScheduledReport | undefined>;
  /** The hono app, for tests and composition. */
  readonly app: Hono<AppEnv<Env>>;
}
