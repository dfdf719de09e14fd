import { InvalidArgumentError, shown } from '../errors.js';

/**
 * A rate limit: at most `limit` job starts (claims) in any window of `periodMs`, counted on the
 * Redis server's clock (docs/design.md, "Rate limits and holds").
 *
 * @example
 * await queue.setGroupRateLimit('stripe', { limit: 50, periodMs: 1_000 });
 */
export interface RateLimit {
  /** The most starts in any window, an integer >= 1. */
  readonly limit: number;
  /** The window, ms: an integer >= 1. */
  readonly periodMs: number;
}

/** The longest rate period and hold: a week, far past any API's window, and safe as a score. */
export const MAX_RATE_MS = 7 * 24 * 3_600_000;

/** What the rate-limits script read, before it is shaped for a reader. */
export interface RateLimitsRead {
  readonly now: number;
  /** The queue's own "limit:periodMs", "" for none. */
  readonly queue: string;
  /** Each group with a limit, with its "limit:periodMs". */
  readonly groups: ReadonlyArray<readonly [string, string]>;
  /** Throttled entries: a group, "*" (ungrouped work) or "!" (the queue). */
  readonly throttled: ReadonlyArray<{ readonly entry: string; readonly until: number; readonly heldUntil: number | null }>;
}

/** Something that may not start jobs until a time: at its rate limit, or held. */
export interface Throttled {
  /** The group, or null for the queue-wide limit (`ungrouped` false) or the ungrouped lane (`ungrouped` true). */
  readonly group: string | null;
  /** Whether it is the ungrouped lane. */
  readonly ungrouped: boolean;
  /** When it may start a job again as it was throttled (server ms; a beat readmits it then). */
  readonly until: number;
  /** When its hold ends (holdGroup, RateLimitedError), null when it is not held. */
  readonly heldUntil: number | null;
}

/** A queue's rate limits and what is throttled now (`Queue.rateLimits`). */
export interface RateLimits {
  /** The queue's own limit, null for none. */
  readonly queue: RateLimit | null;
  /** Each group's limit, by group. */
  readonly groups: Readonly<Record<string, RateLimit>>;
  /** What may not start jobs yet, soonest first (at most 1000). */
  readonly throttled: readonly Throttled[];
}

/**
 * `value` checked as a rate limit or null (lifted): an object of exactly `limit` (an integer >= 1)
 * and `periodMs` (an integer from 1 to a week). Throws InvalidArgumentError naming the field.
 *
 * @example
 * checkRateLimit({ limit: 10, periodMs: 60_000 }); // { limit: 10, periodMs: 60000 }
 * checkRateLimit({ limit: 0, periodMs: 1000 }); // throws: limit must be an integer >= 1, got 0
 */
export function checkRateLimit(value: unknown): RateLimit | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`a rate limit must be {limit, periodMs} or null, got ${shown(value)}`);
  }
  const { limit, periodMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new InvalidArgumentError(`a rate limit takes limit and periodMs only, got ${unknown.join(', ')}`);
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError(`limit must be an integer >= 1, got ${shown(limit)}`);
  }
  if (typeof periodMs !== 'number' || !Number.isSafeInteger(periodMs) || periodMs < 1 || periodMs > MAX_RATE_MS) {
    throw new InvalidArgumentError(`periodMs must be an integer from 1 to ${MAX_RATE_MS}, got ${shown(periodMs)}`);
  }
  return { limit, periodMs };
}

/** `ms` checked as a hold: an integer from 1 to a week. Throws InvalidArgumentError. */
export function checkHoldMs(ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 1 || ms > MAX_RATE_MS) {
    throw new InvalidArgumentError(`a hold must be an integer of ms from 1 to ${MAX_RATE_MS}, got ${shown(ms)}`);
  }
  return ms;
}

/** A stored "limit:periodMs" as a RateLimit, null for "" (none). */
export function parseRate(text: string): RateLimit | null {
  const match = /^(\d+):(\d+)$/.exec(text);
  return match ? { limit: Number(match[1]), periodMs: Number(match[2]) } : null;
}

/** What the rate-limits script read, as a reader sees it. */
export function rateLimitsOf(read: RateLimitsRead): RateLimits {
  const groups: Record<string, RateLimit> = {};
  for (const [group, text] of read.groups) {
    const rate = parseRate(text);
    if (rate) groups[group] = rate;
  }
  // a concurrency key's throttle ('#<key>') is not read here: Queue.keyLimits shows it, as the key's throttledUntil
  const throttled = read.throttled.map(({ entry, until, heldUntil }): Throttled => ({
    group: entry === '!' || entry === '*' ? null : entry,
    ungrouped: entry === '*',
    until,
    heldUntil,
  }));
  return { queue: parseRate(read.queue), groups, throttled };
}
