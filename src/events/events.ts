/**
 * The queue's events stream as readers see it: what each event means, its fields by name, and the
 * decoder from the stream's short fields (docs/design.md, "Events").
 *
 * The stream `emq:{q}:events` holds one entry per script call that made transitions: its events in
 * the order they happened, each starting with its field `e` (an entry of one event is that event's
 * fields alone). So the events of one batch (a claim of a hundred jobs) share one entry id: a
 * reader resumes after an entry id once it has every event of that entry, and a page never splits
 * an entry.
 */
import type { RateLimit } from '../queue/rate-limits.js';
import { InvalidArgumentError, shown } from '../errors.js';
import type { FiredBy } from '../job.js';

/** The events settings a queue has before any `setEvents`: lua/includes/events_settings.lua's. */
export const DEFAULT_EVENTS_SETTINGS: EventsSettings = { maxLen: 10_000, resultBytes: 1024 };

/** The most entries `setEvents({ maxLen })` takes. */
export const MAX_EVENTS_MAX_LEN = 10_000_000;
/** The most bytes `setEvents({ resultBytes })` takes: 1 MiB. */
export const MAX_EVENT_RESULT_BYTES = 1_048_576;

/**
 * A queue's events settings, stored with the queue so every runtime applies the same ones.
 *
 * @example
 * await queue.setEvents({ maxLen: 1000 }); // keep about the last thousand entries
 * await queue.setEvents({ maxLen: 0 }); // events off: nothing is written, the stream is deleted
 */
export interface EventsSettings {
  /**
   * About how many entries the stream keeps (`XADD ... MAXLEN ~`; Redis trims whole macro nodes,
   * so it may hold up to about 100 more), 0 to 10,000,000; 0 turns events off. An entry holds the
   * events of one script call, so a queue that works in batches keeps more events than entries.
   * Default 10,000.
   */
  readonly maxLen: number;
  /**
   * The most bytes of a job's result a `completed` event carries, 0 to 1 MiB; a longer result is
   * left out (`resultOmitted`: read it from the job). Default 1024.
   */
  readonly resultBytes: number;
}

/** What every event carries (see QueueEvent). */
export interface QueueEventBase {
  /**
   * The id of its stream entry, `<ms>-<seq>`: the events of one script call (a batch) share it.
   * Pass it as `after` to read what came after the whole entry.
   */
  readonly id: string;
  /** When it happened: the Redis server's time, epoch ms (the entry id's first part). */
  readonly time: number;
}

/** What every event about one job carries (see QueueEvent). */
export interface JobEventBase extends QueueEventBase {
  /** The job, `JOB:...`. */
  readonly jobId: string;
  /** Its group, when it has one. */
  readonly group?: string;
}

/**
 * One event of a queue's events stream: `event` names the transition and decides the other fields.
 * About a job (`jobId`, `group`): `added` (enqueued, claimable; `scheduler` when a scheduler
 * fired it), `scheduled` (enqueued with a delay,
 * `dueAt`), `promoted` (a scheduled job fell due), `active` (claimed; `attempt`), `progress`
 * (`progress`), `completed` (`result`, or `resultOmitted` when it was over the queue's
 * `resultBytes`), `retried` (`error`, and `dueAt`, when it is due again), `dead` (`error`: its
 * attempts used up, or failed for good), `stalled` (its lease lapsed and was reaped: a `dead`
 * follows when that was its last attempt), `released` (given back unstarted, or a flow parent
 * whose children have all finished: `children`), `waiting` (a flow parent waits for its
 * `children`), `removed`,
 * `reprocessed`, `replaced` (a not yet started job took a later add's payload and delay,
 * `dedupe.replace`; `dueAt` when it is scheduled). About the queue: `paused`, `resumed`, `group-paused`, `group-resumed` (`group`),
 * `limit` (`group`, `limit`, null when lifted), `rate` (the queue's rate limit, or a `group`'s:
 * `rate`, null when lifted), `held` (a `group`, or the ungrouped jobs when none, `heldUntil`), `cleaned` (`count` jobs of `state`) and `drained`
 * (`count` jobs), one event per chunk of the call.
 *
 * @example
 * const { events } = await queue.readEvents({ after: '0' });
 * for (const e of events) if (e.event === 'dead') console.log(`${e.jobId} died: ${e.error}`);
 */
export type QueueEvent =
  | (JobEventBase & {
      /** Enqueued, claimable now: by an enqueue, or by a scheduler firing a slot. */
      readonly event: 'added';
      /** The scheduler that fired it and the slot, when a scheduler did (`Queue.upsertScheduler`). */
      readonly scheduler?: FiredBy;
    })
  | (JobEventBase & {
      /** promoted: a scheduled job fell due; removed; reprocessed: dead, back to be claimed. */
      readonly event: 'promoted' | 'removed' | 'reprocessed';
    })
  | (JobEventBase & {
      /** Claimable again: given back unstarted, or a flow parent whose children have all finished (`children` set). */
      readonly event: 'released';
      /** A flow parent's count of the children it waited for; absent for a job given back. */
      readonly children?: number;
    })
  | (JobEventBase & {
      /** A flow parent written (`Flows.add`), or waiting again (a child that failed it reprocessed): it waits for its children. */
      readonly event: 'waiting';
      /** How many children it waits for. */
      readonly children: number;
    })
  | (JobEventBase & {
      /** Enqueued with a delay. */
      readonly event: 'scheduled';
      /** When it falls due (server time, epoch ms). */
      readonly dueAt: number;
    })
  | (JobEventBase & {
      /** A later add with its dedupe key and `replace` gave it its payload and delay (debounce). */
      readonly event: 'replaced';
      /** When it falls due (server time, epoch ms), when the replace scheduled it; absent: claimable now. */
      readonly dueAt?: number;
    })
  | (JobEventBase & {
      /** Claimed: a handler runs it. */
      readonly event: 'active';
      /** This run's attempt, from 1 (`Job.attempt`). */
      readonly attempt: number;
    })
  | (JobEventBase & {
      /** Its handler reported progress. */
      readonly event: 'progress';
      /** The attempt that reported it, when known. */
      readonly attempt?: number;
      /** What the handler reported, parsed from its JSON. */
      readonly progress: unknown;
    })
  | (JobEventBase & {
      /** Its handler finished: the job is completed. */
      readonly event: 'completed';
      /** The attempt that completed it. */
      readonly attempt?: number;
      /** Its result, parsed from its JSON, when the event carries one. */
      readonly result?: unknown;
      /** True when the result was over the queue's `resultBytes` and left out: read it from the job. */
      readonly resultOmitted: boolean;
    })
  | (JobEventBase & {
      /** An attempt failed and the job will run again. */
      readonly event: 'retried';
      /** The attempt that failed. */
      readonly attempt?: number;
      /** What it failed with. */
      readonly error: string;
      /** When it is due again (server time, epoch ms): the event's own time when it is claimable at once. */
      readonly dueAt: number;
    })
  | (JobEventBase & {
      /** The job is dead: its attempts used up, failed for good, or its last lease lapsed. */
      readonly event: 'dead';
      /** The attempt that ended it. */
      readonly attempt?: number;
      /** What it failed with (`lease expired` for a lapsed lease). */
      readonly error: string;
    })
  | (JobEventBase & {
      /** Its lease lapsed and was reaped: back to be claimed, or a `dead` event follows. */
      readonly event: 'stalled';
      /** The attempt whose lease lapsed. */
      readonly attempt?: number;
    })
  | (QueueEventBase & {
      /** The queue was paused or resumed. */
      readonly event: 'paused' | 'resumed';
    })
  | (QueueEventBase & {
      /** A group was paused or resumed. */
      readonly event: 'group-paused' | 'group-resumed';
      /** The group. */
      readonly group: string;
    })
  | (QueueEventBase & {
      /** A group's limit changed. */
      readonly event: 'limit';
      /** The group. */
      readonly group: string;
      /** Its limit now, null when lifted. */
      readonly limit: number | null;
    })
  | (QueueEventBase & {
      /** A rate limit changed: the group's, or the queue's own when `group` is absent. */
      readonly event: 'rate';
      /** The group, absent for the queue's own limit. */
      readonly group?: string;
      /** The limit now, null when lifted. */
      readonly rate: RateLimit | null;
    })
  | (QueueEventBase & {
      /** A group (absent: the ungrouped jobs) was held (holdGroup, or a handler's RateLimitedError). */
      readonly event: 'held';
      /** The group, absent for the ungrouped jobs. */
      readonly group?: string;
      /** When the hold ends (server ms). */
      readonly heldUntil: number;
    })
  | (QueueEventBase & {
      /** One chunk of a clean deleted finished jobs. */
      readonly event: 'cleaned';
      /** How many. */
      readonly count: number;
      /** Which kind. */
      readonly state: 'completed' | 'dead';
    })
  | (QueueEventBase & {
      /** One chunk of a drain deleted waiting jobs. */
      readonly event: 'drained';
      /** How many. */
      readonly count: number;
    });

/** The name of an event (`QueueEvent['event']`). */
export type QueueEventName = QueueEvent['event'];

/** Every event name the scripts write, in no particular order. */
export const EVENT_NAMES: ReadonlySet<string> = new Set<QueueEventName>([
  'added',
  'scheduled',
  'promoted',
  'active',
  'progress',
  'completed',
  'retried',
  'dead',
  'stalled',
  'released',
  'waiting',
  'removed',
  'reprocessed',
  'replaced',
  'paused',
  'resumed',
  'group-paused',
  'group-resumed',
  'limit',
  'rate',
  'held',
  'cleaned',
  'drained',
]);

/** A page of events (`Queue.readEvents`). */
export interface EventsPage {
  /** The events read, oldest first: the events of whole entries. */
  readonly events: QueueEvent[];
  /** The id of the last entry read, or the `after` asked for when none was: pass it as the next `after`. */
  readonly next: string;
}

/** Where to read from, and how much (`Queue.readEvents`). */
export interface ReadEventsOptions {
  /** Read the entries after this entry id (exclusive), `<ms>-<seq>`; `'0'` (the default) from the start. */
  readonly after?: string;
  /**
   * The most events, 1 to 1000 (default 100); a page holds whole entries, and at least one (an
   * entry holds at most 500 events).
   */
  readonly limit?: number;
}

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
    case 'rate': {
      const l = f.get('l');
      const p = f.get('p');
      const limit = number(l);
      const periodMs = number(p);
      const rate = l === '' && p === '' ? null : limit !== undefined && periodMs !== undefined ? { limit, periodMs } : undefined;
      return rate === undefined ? undefined : { ...base, event, ...(group === undefined ? {} : { group }), rate };
    }
    case 'held': {
      const heldUntil = number(f.get('u'));
      return heldUntil === undefined ? undefined : { ...base, event, ...(group === undefined ? {} : { group }), heldUntil };
    }
    case 'cleaned': {
      const count = number(f.get('n'));
      const state = f.get('s');
      return count === undefined || (state !== 'completed' && state !== 'dead') ? undefined : { ...base, event, count, state };
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
