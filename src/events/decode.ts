/** Entry ids and the decoder of the stream's short fields into QueueEvents (docs/design.md, "Events"). */
import { InvalidArgumentError, shown } from '../errors.js';
import { EVENT_NAMES, type QueueEvent } from './events.js';
import type { RateLimit } from '../queue/rate-limits.js';

const ENTRY_ID = /^(\d{1,20})-(\d{1,20})$/;
const MAX_ID_PART = 2n ** 64n - 1n;

/**
 * Whether `id` is an entry id a reader may pass as `after`: `<ms>-<seq>`, each a decimal below
 * 2^64 (what Redis accepts), or `0` for the start of the stream.
 */
export function isEventId(id: unknown): id is string {
  if (id === '0') return true;
  if (typeof id !== 'string') return false;
  const match = ENTRY_ID.exec(id);
  return match !== null && BigInt(match[1]!) <= MAX_ID_PART && BigInt(match[2]!) <= MAX_ID_PART;
}

/** Throws InvalidArgumentError unless `id` is an `after` a reader may pass (see isEventId). */
export function assertEventId(id: unknown): asserts id is string {
  if (!isEventId(id)) throw new InvalidArgumentError(`after must be an event id <ms>-<seq> or 0, got ${shown(id)}`);
}

const number = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return Number(text);
};

/** A rate limit event's `l` and `p`: null when lifted (both ''), undefined when malformed. */
const rateOf = (f: ReadonlyMap<string, string>): RateLimit | null | undefined => {
  const l = f.get('l');
  const p = f.get('p');
  if (l === '' && p === '') return null;
  const limit = number(l);
  const periodMs = number(p);
  return limit !== undefined && periodMs !== undefined ? { limit, periodMs } : undefined;
};

const json = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
};

/**
 * One event from its fields (each name once; `id` its entry's), or undefined when it is not one
 * this version knows (a name a newer script writes) or lacks a field its name requires.
 */
function decodeOne(id: string, time: number, f: ReadonlyMap<string, string>): QueueEvent | undefined {
  const event = f.get('e');
  if (event === undefined || !EVENT_NAMES.has(event)) return undefined;
  const base = { id, time };
  const group = f.get('g');
  const attempt = number(f.get('a'));
  switch (event) {
    case 'paused':
    case 'resumed':
      return { ...base, event };
    case 'group-paused':
    case 'group-resumed':
      return group === undefined ? undefined : { ...base, event, group };
    case 'limit': {
      const l = f.get('l');
      const limit = l === '' ? null : number(l);
      return group === undefined || limit === undefined ? undefined : { ...base, event, group, limit };
    }
    case 'key-limit': {
      const key = f.get('k');
      const l = f.get('l');
      const limit = l === '' ? null : number(l);
      return key === undefined || limit === undefined ? undefined : { ...base, event, key, limit };
    }
    case 'rate': {
      const rate = rateOf(f);
      return rate === undefined ? undefined : { ...base, event, ...(group === undefined ? {} : { group }), rate };
    }
    case 'key-rate': {
      const key = f.get('k');
      const rate = rateOf(f);
      return key === undefined || rate === undefined ? undefined : { ...base, event, key, rate };
    }
    case 'held': {
      const heldUntil = number(f.get('u'));
      return heldUntil === undefined ? undefined : { ...base, event, ...(group === undefined ? {} : { group }), heldUntil };
    }
    case 'cleaned': {
      const count = number(f.get('n'));
      const state = f.get('s');
      return count === undefined || (state !== 'completed' && state !== 'dead' && state !== 'cancelled') ? undefined : { ...base, event, count, state };
    }
    case 'drained': {
      const count = number(f.get('n'));
      return count === undefined ? undefined : { ...base, event, count };
    }
  }
  const jobId = f.get('j');
  if (jobId === undefined || !jobId.startsWith('JOB:')) return undefined;
  const job = { ...base, jobId, ...(group === undefined ? {} : { group }) };
  const withAttempt = attempt === undefined ? {} : { attempt };
  switch (event) {
    case 'added': {
      const id = f.get('k');
      const slot = number(f.get('d'));
      return id === undefined || slot === undefined ? { ...job, event } : { ...job, event, scheduler: { id, slot } };
    }
    case 'promoted':
    case 'removed':
    case 'reprocessed':
      return { ...job, event };
    case 'released': {
      const children = number(f.get('n'));
      return children === undefined ? { ...job, event } : { ...job, event, children };
    }
    case 'waiting': {
      const children = number(f.get('n'));
      return children === undefined ? undefined : { ...job, event, children };
    }
    case 'step': {
      const name = f.get('n');
      const state = f.get('s');
      return name === undefined || state === undefined ? undefined : { ...job, event, name, state };
    }
    case 'scheduled': {
      const dueAt = number(f.get('d'));
      return dueAt === undefined ? undefined : { ...job, event, dueAt };
    }
    case 'replaced': {
      const dueAt = number(f.get('d'));
      return dueAt === undefined ? { ...job, event } : { ...job, event, dueAt };
    }
    case 'active':
      return attempt === undefined ? undefined : { ...job, event, attempt };
    case 'progress': {
      const p = f.get('p');
      const progress = p === undefined ? undefined : json(p);
      return progress === undefined ? undefined : { ...job, event, ...withAttempt, progress: progress.value };
    }
    case 'completed': {
      const r = f.get('r');
      const result = r === undefined ? undefined : json(r);
      if (r !== undefined && result === undefined) return undefined;
      return { ...job, event, ...withAttempt, ...(result === undefined ? {} : { result: result.value }), resultOmitted: f.get('rt') === '1' };
    }
    case 'retried': {
      const error = f.get('x');
      const dueAt = number(f.get('d'));
      return error === undefined || dueAt === undefined ? undefined : { ...job, event, ...withAttempt, error, dueAt };
    }
    case 'dead': {
      const error = f.get('x');
      return error === undefined ? undefined : { ...job, event, ...withAttempt, error };
    }
    case 'stalled':
      return { ...job, event, ...withAttempt };
    case 'parked': {
      const key = f.get('k');
      return key === undefined ? undefined : { ...job, event, key };
    }
    case 'cancelled':
    case 'cancelling': {
      const reason = f.get('x');
      return reason === undefined ? undefined : { ...job, event, reason };
    }
  }
  return undefined;
}

/** What an entry holds: the events it decodes to, and how many of its events did not decode. */
export interface DecodedEntry {
  /** Its events, in order. */
  readonly events: QueueEvent[];
  /** Events this version does not know, or that lack a field their name requires: left out. */
  readonly skipped: number;
}

/**
 * The events of one stream entry, from its id and its flat field-value list as XRANGE or XREAD
 * give it: each event starts at a field `e`. An event of a name this version does not know (a newer
 * script's), or missing a field its name requires, is left out and counted in `skipped`, so a
 * reader goes on past it; the keyspace checker counts them as violations.
 *
 * @example
 * decodeEntry('1700000000000-0', ['e', 'active', 'j', 'JOB:1', 'a', '1'])
 * // { events: [{ id: '1700000000000-0', time: 1700000000000, event: 'active', jobId: 'JOB:1', attempt: 1 }], skipped: 0 }
 */
export function decodeEntry(id: string, fields: readonly string[]): DecodedEntry {
  const time = Number(id.slice(0, id.indexOf('-')));
  const events: QueueEvent[] = [];
  let skipped = 0;
  let current: Map<string, string> | undefined;
  const close = (): void => {
    if (current === undefined) return;
    const decoded = decodeOne(id, time, current);
    if (decoded) events.push(decoded);
    else skipped++;
  };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    // fields before the first `e` make an event without a name, which is skipped
    if (name === 'e' || current === undefined) {
      close();
      current = new Map();
    }
    current.set(name, fields[i + 1]!);
  }
  close();
  return { events, skipped };
}
