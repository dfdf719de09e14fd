import type { DrainBeatOptions, DrainSettings } from './drain.js';

/**
 * The settings every serverless platform reads from its environment (a Worker's bindings, a
 * function's environment variables), as strings: each set one overrides the code's option of the
 * same meaning.
 */
export interface ServerlessEnv {
  /** The bearer token the HTTP API requires. Secret; without it the API refuses to serve. */
  readonly EMQ_TOKEN?: string;
  /** "1" in local dev only: serve without EMQ_TOKEN, saying so on every response. */
  readonly EMQ_LOCAL_DEV?: string;
  /** How long a scheduled event drains, in ms (default: the platform's, 50,000 on Cloudflare for a one-minute cron). */
  readonly EMQ_BEAT_DEADLINE_MS?: string;
  /**
   * How long after an enqueue through the API jobs may still be started, in ms (default 5,000;
   * 0 turns it off). The drain runs in waitUntil until this plus the job timeout.
   */
  readonly EMQ_DRAIN_ON_ENQUEUE_MS?: string;
  /**
   * How long a finished job's acknowledgement may wait for the drain's next request to ride with,
   * in ms (default 1,000; 0 sends it at once).
   */
  readonly EMQ_ACK_WITHIN_MS?: string;
  /** Bounded beat settings (see BoundedBeatOptions); they override the code's `beat` options. */
  readonly EMQ_CONCURRENCY?: string;
  /** Jobs claimed per request (default 20). */
  readonly EMQ_BATCH_SIZE?: string;
  /**
   * A handler's time limit in ms (default 10,000); a job starts only when it fits before the
   * deadline.
   */
  readonly EMQ_JOB_TIMEOUT_MS?: string;
  /**
   * Redis requests a scheduled event may send (default 900, under Cloudflare's 1,000 subrequests).
   */
  readonly EMQ_MAX_REQUESTS?: string;
  /**
   * How long leases outlive the deadline, in ms (default 15,000), so a beat cut off loses nothing.
   */
  readonly EMQ_LEASE_MARGIN_MS?: string;
  /** How often a draining beat also reaps and promotes, in ms (default 5,000). */
  readonly EMQ_REAP_EVERY_MS?: string;
}

/** What a beat host runs with, read from its env over the code's options. */
export interface BeatSettings extends DrainSettings {
  /** How long a scheduled event drains, in ms. */
  readonly deadlineMs: number;
  /** The beat's settings, defaults filled in. */
  readonly beat: DrainBeatOptions & { readonly jobTimeoutMs: number; readonly maxRequests: number };
  /**
   * Why no job can ever start with these settings (its timeout does not fit in a scheduled
   * event's drain), or undefined. The beats still reap and promote.
   */
  readonly noJobCanStart: string | undefined;
}

const number = (value: string | undefined, fallback: number): number =>
  value === undefined || value === '' || Number.isNaN(Number(value)) ? fallback : Number(value);

/**
 * A beat host's settings: each EMQ_* var that is set overrides the code's `beat` option of the
 * same meaning, then the defaults (`defaults`: the platform's, over the Worker's).
 *
 * @example
 * const { deadlineMs, beat } = beatSettings(env, { jobTimeoutMs: 5_000 });
 */
export function beatSettings(env: ServerlessEnv, base: DrainBeatOptions = {}, defaults: PlatformDefaults = {}): BeatSettings {
  const pick = (value: string | undefined, fallback: number | undefined): number | undefined =>
    value === undefined || value === '' || Number.isNaN(Number(value)) ? fallback : Number(value);
  const optional = {
    concurrency: pick(env.EMQ_CONCURRENCY, base.concurrency),
    batchSize: pick(env.EMQ_BATCH_SIZE, base.batchSize),
    leaseMarginMs: pick(env.EMQ_LEASE_MARGIN_MS, base.leaseMarginMs),
    reapEveryMs: pick(env.EMQ_REAP_EVERY_MS, base.reapEveryMs),
  };
  const beat = {
    ...base,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    jobTimeoutMs: pick(env.EMQ_JOB_TIMEOUT_MS, base.jobTimeoutMs) ?? 10_000,
    maxRequests: pick(env.EMQ_MAX_REQUESTS, base.maxRequests) ?? defaults.maxRequests ?? 900,
  };
  const deadlineMs = number(env.EMQ_BEAT_DEADLINE_MS, defaults.deadlineMs ?? 50_000);
  return {
    deadlineMs,
    beat,
    drainOnEnqueueMs: number(env.EMQ_DRAIN_ON_ENQUEUE_MS, defaults.drainOnEnqueueMs ?? 5_000),
    ackWithinMs: number(env.EMQ_ACK_WITHIN_MS, defaults.ackWithinMs ?? 1_000),
    noJobCanStart:
      beat.jobTimeoutMs > deadlineMs
        ? `the job timeout (EMQ_JOB_TIMEOUT_MS ${beat.jobTimeoutMs} ms) is longer than a scheduled event's drain (EMQ_BEAT_DEADLINE_MS ${deadlineMs} ms): scheduled beats only reap and promote`
        : undefined,
  };
}

/** A platform's own defaults, where its limits differ from a Worker's. */
export interface PlatformDefaults {
  /** How long a scheduled event drains, in ms, when EMQ_BEAT_DEADLINE_MS is not set (Worker: 50,000). */
  readonly deadlineMs?: number;
  /** How long after an enqueue jobs may still be started, in ms (Worker: 5,000). */
  readonly drainOnEnqueueMs?: number;
  /** Redis requests a scheduled event may send (Worker: 900, under its 1,000 subrequests). */
  readonly maxRequests?: number;
  /**
   * How long a finished job's acknowledgement may wait for a request to ride with, in ms (Worker:
   * 1,000). 0 where an instance may be frozen once it answers: what it held would wait for a thaw.
   */
  readonly ackWithinMs?: number;
}
