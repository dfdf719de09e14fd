import { Cron } from 'croner';
import { decodeBackoff, encodeJob, FIRED_JOB_ID, type JobDefaults } from '../encode.js';
import { InvalidArgumentError, shown } from '../errors.js';
import type { BackoffOptions, FiredBy } from '../job.js';
import { assertName } from '../keyspace.js';

/** The shortest `every` interval, in ms. */
export const MIN_EVERY_MS = 100;

/**
 * When a scheduler fires: exactly one of `cron` (with an optional `tz`) or `every`, and the
 * optional bounds `startAt`, `endAt` and `limit`.
 *
 * @example
 * await queue.upsertScheduler('nightly-report', { cron: '0 3 * * *', tz: 'Europe/Berlin' }, { payload: { kind: 'report' } });
 * await queue.upsertScheduler('heartbeat', { every: 5_000, limit: 100 }, { payload: {} });
 */
export interface SchedulerSpec {
  /**
   * A cron pattern: five fields (minute hour day-of-month month day-of-week), or six with seconds
   * first; read by croner, so `L`, `W`, `#` and nicknames such as `@daily` work too.
   */
  readonly cron?: string;
  /** The IANA time zone `cron` is read in (default UTC), e.g. `Europe/Berlin`. Only with `cron`. */
  readonly tz?: string;
  /**
   * Fire every this many ms (at least 100), on slots `startAt + k * every` (or, without
   * `startAt`, from when the scheduler was first made: its first slot fires at once).
   */
  readonly every?: number;
  /** No slot before this instant (epoch ms, a Date, or ISO 8601 text). */
  readonly startAt?: number | Date | string;
  /** No slot after this instant (epoch ms, a Date, or ISO 8601 text): then it fires no more. */
  readonly endAt?: number | Date | string;
  /** Fire at most this many slots in all (>= 1); counted across upserts. */
  readonly limit?: number;
}

/** The job a scheduler enqueues at each slot: its payload and the options a fired job takes. */
export interface SchedulerJob<Payload = unknown> {
  /** What the handler gets as `job.payload`: anything JSON can carry. */
  readonly payload: Payload;
  /** The group whose lane each fired job joins. */
  readonly group?: string;
  /** Lower runs first among claimable jobs of the same lane (0..2097151, default 0). */
  readonly priority?: number;
  /** Attempts before a fired job is dead (>= 1, default the queue's). */
  readonly maxAttempts?: number;
  /** Backoff between attempts: a fixed delay in ms, or options (default the queue's). */
  readonly backoff?: number | BackoffOptions;
  /** Each fired job expires this many ms after its firing unless started by then (`EnqueueOptions.expireAfterMs`). */
  readonly expireAfterMs?: number;
}

/**
 * A scheduler as read back (`getScheduler`, `listSchedulers`, the HTTP API): its spec (instants
 * as epoch ms), its job with the defaults filled in, and where its firing stands.
 */
export interface SchedulerRecord<Payload = unknown> {
  /** The scheduler's id. */
  readonly id: string;
  /** Its cron pattern, when it has one. */
  readonly cron?: string;
  /** The time zone of its cron pattern, when one was given. */
  readonly tz?: string;
  /** Its interval in ms, when it fires every N ms. */
  readonly every?: number;
  /** No slot before this instant (epoch ms), when set. */
  readonly startAt?: number;
  /** No slot after this instant (epoch ms), when set. */
  readonly endAt?: number;
  /** The most slots it fires in all, when set. */
  readonly limit?: number;
  /** The job it enqueues at each slot. */
  readonly job: {
    /** What each fired job's handler gets as `job.payload`. */
    readonly payload: Payload;
    /** The group whose lane each fired job joins, when it has one. */
    readonly group?: string;
    /** The fired jobs' priority (0 when none was given). */
    readonly priority: number;
    /** Attempts allowed per run of each fired job (the queue's default filled in). */
    readonly maxAttempts: number;
    /** Backoff between attempts (the queue's default filled in). */
    readonly backoff: BackoffOptions;
    /** Each fired job's expiry, ms after its firing, when it has one. */
    readonly expireAfterMs?: number;
  };
  /** Its next slot (server time, epoch ms); null once it fires no more (`limit` or `endAt` reached). */
  readonly nextRunAt: number | null;
  /** The last slot it fired (epoch ms), null before the first. */
  readonly lastRunAt: number | null;
  /** How many slots it has fired. */
  readonly fired: number;
  /** When it was first made (server time, epoch ms). */
  readonly createdAt: number;
  /** When it was last upserted (server time, epoch ms). */
  readonly updatedAt: number;
}

/** What an upsert did: the scheduler's id and its next slot (null: it fires no more). */
export interface UpsertSchedulerResult {
  /** The scheduler's id. */
  readonly id: string;
  /** Its next slot (server time, epoch ms), null when it fires no more (`limit` reached, past `endAt`). */
  readonly nextRunAt: number | null;
}

/** A spec as stored (the row's `k`): checked, instants as epoch ms, absent fields left out. */
export interface StoredSpec {
  readonly cron?: string;
  readonly tz?: string;
  readonly every?: number;
  readonly startAt?: number;
  readonly endAt?: number;
  readonly limit?: number;
}

/** The job a scheduler fires, encoded as the scripts take it. */
export interface EncodedSchedulerJob {
  readonly payload: string;
  readonly group: string;
  readonly priority: number;
  readonly maxAttempts: number;
  readonly backoff: string;
  /** Each fired job's expiry, ms after its firing (-1: none). */
  readonly expireAfterMs: number;
}

const SPEC_FIELDS = new Set(['cron', 'tz', 'every', 'startAt', 'endAt', 'limit']);
const JOB_FIELDS = new Set(['payload', 'group', 'priority', 'maxAttempts', 'backoff', 'expireAfterMs']);

/** Throws InvalidNameError unless `id` is a valid scheduler id (a name: letters, digits, `._-`, at most 128). */
export function assertSchedulerId(id: unknown): asserts id is string {
  assertName('scheduler', id);
}

/** The scheduler and slot a job id was fired for, or undefined for a job that was not fired. */
export function firedBy(jobId: string): FiredBy | undefined {
  // every claimed job's id comes through here: most have no '@', which is cheaper to ask than the pattern
  if (!jobId.includes('@')) return undefined;
  const match = FIRED_JOB_ID.exec(jobId);
  return match ? { id: match[1]!, slot: Number(match[2]) } : undefined;
}

function instant(field: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
    throw new InvalidArgumentError(`${field} must be an instant (epoch ms, a Date or ISO 8601 text), got ${shown(value)}`);
  }
  return ms;
}

function assertTimeZone(tz: unknown): asserts tz is string {
  if (typeof tz !== 'string' || tz === '') throw new InvalidArgumentError(`tz must be an IANA time zone such as "Europe/Berlin", got ${shown(tz)}`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new InvalidArgumentError(`tz must be an IANA time zone such as "Europe/Berlin", got ${shown(tz)}`);
  }
}

const patterns = new Map<string, Cron>();

/** The croner pattern for `cron` in `tz`, parsed once (a small cache: the firing side reads it per slot). */
function cronOf(cron: string, tz: string | undefined): Cron {
  const key = `${tz ?? ''} ${cron}`;
  let pattern = patterns.get(key);
  if (!pattern) {
    pattern = new Cron(cron, { paused: true, ...(tz === undefined ? {} : { timezone: tz }) });
    if (patterns.size >= 256) patterns.delete(patterns.keys().next().value!);
    patterns.set(key, pattern);
  }
  return pattern;
}

/**
 * Checks a spec and returns it as stored. Throws InvalidArgumentError naming the field: both or
 * neither of `cron` and `every`, a cron pattern croner refuses or that never fires, a bad time
 * zone, `tz` without `cron`, `every` under 100 ms, a bad instant, `endAt` before `startAt`, a
 * `limit` under 1, an unknown field.
 */
export function checkSpec(spec: unknown): StoredSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new InvalidArgumentError('the spec must be an object: {cron} or {every}');
  const s = spec as Record<string, unknown>;
  for (const field of Object.keys(s)) {
    if (!SPEC_FIELDS.has(field)) throw new InvalidArgumentError(`unknown spec field ${shown(field)}: a spec takes ${[...SPEC_FIELDS].join(', ')}`);
  }
  const has = (field: string): boolean => s[field] !== undefined;
  if (has('cron') && has('every')) throw new InvalidArgumentError('give cron or every, not both');
  if (!has('cron') && !has('every')) throw new InvalidArgumentError('a spec needs cron or every');
  const out: { -readonly [K in keyof StoredSpec]: StoredSpec[K] } = {};
  if (has('cron')) {
    const cron = s.cron;
    if (typeof cron !== 'string' || cron.trim() === '') throw new InvalidArgumentError(`cron must be a cron pattern, got ${shown(cron)}`);
    const fields = cron.trim().split(/\s+/).length;
    if (!cron.trim().startsWith('@') && fields !== 5 && fields !== 6) {
      throw new InvalidArgumentError(`cron must have 5 fields, or 6 with seconds first, got ${fields} in ${shown(cron)}`);
    }
    if (has('tz')) assertTimeZone(s.tz);
    let next: Date | null;
    try {
      next = cronOf(cron.trim(), s.tz as string | undefined).nextRun(new Date(0));
    } catch (error) {
      throw new InvalidArgumentError(`cron ${shown(cron)} is not a valid pattern: ${(error as Error).message}`);
    }
    if (next === null) throw new InvalidArgumentError(`cron ${shown(cron)} never fires`);
    out.cron = cron.trim();
    if (has('tz')) out.tz = s.tz as string;
  } else {
    if (has('tz')) throw new InvalidArgumentError('tz is for cron; an every spec has none');
    const every = s.every;
    if (typeof every !== 'number' || !Number.isSafeInteger(every) || every < MIN_EVERY_MS) {
      throw new InvalidArgumentError(`every must be an integer number of ms, at least ${MIN_EVERY_MS}, got ${shown(every)}`);
    }
    out.every = every;
  }
  if (has('startAt')) out.startAt = instant('startAt', s.startAt);
  if (has('endAt')) out.endAt = instant('endAt', s.endAt);
  if (out.startAt !== undefined && out.endAt !== undefined && out.endAt < out.startAt) {
    throw new InvalidArgumentError('endAt must not be before startAt');
  }
  if (has('limit')) {
    const limit = s.limit;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${shown(limit)}`);
    out.limit = limit;
  }
  return out;
}

/**
 * Checks the job a scheduler fires and encodes it as the scripts take it, with the queue's
 * defaults and payload cap. Throws a typed error (EMQARG, EMQNAME, EMQPAYLOAD, EMQTOOLARGE).
 */
export function encodeSchedulerJob(job: unknown, defaults: JobDefaults, maxPayloadBytes: number): EncodedSchedulerJob {
  if (typeof job !== 'object' || job === null || Array.isArray(job)) throw new InvalidArgumentError('the job must be an object: {payload, group?, priority?, maxAttempts?, backoff?, expireAfterMs?}');
  const j = job as Record<string, unknown>;
  for (const field of Object.keys(j)) {
    if (!JOB_FIELDS.has(field)) throw new InvalidArgumentError(`unknown job field ${shown(field)}: a scheduler's job takes ${[...JOB_FIELDS].join(', ')}`);
  }
  if (!('payload' in j)) throw new InvalidArgumentError("a scheduler's job needs a payload");
  const { payload, ...options } = j;
  const encoded = encodeJob(payload, options, defaults, maxPayloadBytes);
  const [, text, group, , , priority, maxAttempts, backoff] = encoded;
  return { payload: text, group, priority, maxAttempts, backoff, expireAfterMs: encoded[14] === '' ? -1 : Number(encoded[14].slice(1)) };
}

/**
 * The first slot of `spec` strictly after `after` (epoch ms), no earlier than `startAt` and no
 * later than `endAt`; null when there is none. An `every` spec's slots are `anchor + k * every`
 * (k >= 0); a cron spec's are croner's, in its time zone.
 */
export function slotAfter(spec: StoredSpec, anchor: number, after: number): number | null {
  const from = spec.startAt !== undefined ? Math.max(after, spec.startAt - 1) : after;
  let slot: number | null;
  if (spec.every !== undefined) {
    slot = from < anchor ? anchor : anchor + (Math.floor((from - anchor) / spec.every) + 1) * spec.every;
  } else if (spec.cron !== undefined) {
    slot = cronOf(spec.cron, spec.tz).nextRun(new Date(from))?.getTime() ?? null;
  } else {
    slot = null;
  }
  return slot !== null && spec.endAt !== undefined && slot > spec.endAt ? null : slot;
}

/** The stored spec of a row's `k`, or undefined when it is not one (then the scheduler fires no more). */
export function parseStoredSpec(text: string): StoredSpec | undefined {
  try {
    return checkSpec(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A scheduler's row (get-scheduler.lua, list-schedulers.lua) as its record. */
export function decodeScheduler<Payload>(id: string, row: Record<string, string>): SchedulerRecord<Payload> {
  const spec = parseStoredSpec(row.k ?? '') ?? {};
  const num = (value: string | undefined): number | null => (value === undefined ? null : Number(value));
  return {
    id,
    ...spec,
    job: {
      payload: JSON.parse(row.d ?? 'null') as Payload,
      ...(row.g ? { group: row.g } : {}),
      priority: Number(row.p ?? 0),
      maxAttempts: Number(row.ma ?? 3),
      backoff: decodeBackoff(row.b),
      ...(row.xe ? { expireAfterMs: Number(row.xe) } : {}),
    },
    nextRunAt: num(row.n),
    lastRunAt: num(row.l),
    fired: Number(row.f ?? 0),
    createdAt: Number(row.c ?? 0),
    updatedAt: Number(row.u ?? 0),
  };
}

/** A scheduler due to fire, as a beat reports it (includes/due_schedulers.lua). */
export interface DueScheduler {
  /** The scheduler's id. */
  readonly id: string;
  /** The revision read: the firing is fenced on it. */
  readonly revision: number;
  /** The slot due (epoch ms). */
  readonly slot: number;
  /** The spec, JSON text. */
  readonly spec: string;
  /** The anchor of an `every` spec (epoch ms), -1 for none. */
  readonly anchor: number;
}

/**
 * The next slot of a due scheduler once `slot` fires at server time `now`: the first after both,
 * so slots missed while no runtime fired are not fired one by one (the one due fires once, as the
 * catch-up); -1 when there is none (or its spec is unreadable: it fires no more).
 */
export function nextAfterFiring(due: DueScheduler, now: number): number {
  const spec = parseStoredSpec(due.spec);
  if (!spec) return -1;
  return slotAfter(spec, due.anchor, Math.max(due.slot, now)) ?? -1;
}

/** What an upsert writes, worked out from the row it read (fenced on its revision). */
export interface UpsertPlan {
  /** The revision read (-1: no such scheduler). */
  readonly expected: number;
  /** The spec as the row's `k`. */
  readonly spec: string;
  /** The anchor of an `every` spec (-1: none). */
  readonly anchor: number;
  /** The limit (-1: none). */
  readonly limit: number;
  /** The next slot (-1: it fires no more). */
  readonly nextSlot: number;
}

/**
 * How to upsert `spec` over `row` (the scheduler's row, {} for none) at server time `now`. The
 * same spec again keeps the next slot it has (a repeat, or a new job only: no slot skipped or
 * fired twice). A changed spec starts at its first slot from now, always after the last slot
 * fired; an `every` spec keeps its anchor while its interval and start stay, else it is anchored
 * at `startAt` or now (its first slot fires at once).
 */
export function planUpsert(spec: StoredSpec, row: Record<string, string>, now: number): UpsertPlan {
  const text = JSON.stringify(spec);
  const exists = row.v !== undefined;
  const expected = exists ? Number(row.v) : -1;
  const limit = spec.limit ?? -1;
  const before = exists ? parseStoredSpec(row.k ?? '') : undefined;
  let anchor = -1;
  if (spec.every !== undefined) {
    const same = before?.every === spec.every && before.startAt === spec.startAt && row.an !== undefined;
    anchor = same ? Number(row.an) : (spec.startAt ?? now);
  }
  if (exists && row.k === text) return { expected, spec: text, anchor, limit, nextSlot: row.n === undefined ? -1 : Number(row.n) };
  const last = row.l === undefined ? -Infinity : Number(row.l);
  const nextSlot = slotAfter(spec, anchor, Math.max(now - 1, last)) ?? -1;
  return { expected, spec: text, anchor, limit, nextSlot };
}
