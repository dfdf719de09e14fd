/**
 * The queue's events stream as readers see it: what each event means and its fields by name; the
 * decoder from the stream's short fields is decode.ts (docs/design.md, "Events").
 *
 * The stream `emq:{q}:events` holds one entry per script call that made transitions: its events in
 * the order they happened, each starting with its field `e` (an entry of one event is that event's
 * fields alone). So the events of one batch (a claim of a hundred jobs) share one entry id: a
 * reader resumes after an entry id once it has every event of that entry, and a page never splits
 * an entry.
 */
import type { RateLimit } from '../queue/rate-limits.js';
import type { FiredBy, FinishedState } from '../job.js';

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
 * `dedupe.replace`; `dueAt` when it is scheduled), `step` (a durable step's `name` and `state`), `cancelled` and `cancelling` (`reason`: a job ended
 * by a cancel, and a running one whose cancel was asked). About the queue: `paused`, `resumed`, `group-paused`, `group-resumed` (`group`),
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
      /**
       * A durable step (docs/guides/steps.md) recorded or changed: `name` the step's, `state` where
       * it stands now (a run step `done` or `failed`; a sleep `sleeping` then `done`; a wait
       * `waiting`, then `done` or `timedout`; an invoke `invoking`, then `done`).
       */
      readonly event: 'step';
      /** The step's name. */
      readonly name: string;
      /** Its state. */
      readonly state: string;
    })
  | (JobEventBase & {
      /**
       * cancelled: ended by a cancel (`queue.cancel`), or a running job's settle after its cancel was
       * asked; cancelling: a running job's cancel was asked, its holder told (docs/guides/job-controls.md).
       */
      readonly event: 'cancelled' | 'cancelling';
      /** The cancel's reason. */
      readonly reason: string;
    })
  | (JobEventBase & {
      /** A claim found a concurrency key it names at its limit or its rate: it waits, parked on that key, until the key has room. */
      readonly event: 'parked';
      /** The key at its limit. */
      readonly key: string;
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
      /** A concurrency key's limit changed (`setKeyLimit`). */
      readonly event: 'key-limit';
      /** The key. */
      readonly key: string;
      /** Its limit now, null when lifted. */
      readonly limit: number | null;
    })
  | (QueueEventBase & {
      /** A concurrency key's rate limit changed (`setKeyRateLimit`). */
      readonly event: 'key-rate';
      /** The key. */
      readonly key: string;
      /** The limit now, null when lifted. */
      readonly rate: RateLimit | null;
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
      readonly state: FinishedState;
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
  'step',
  'cancelled',
  'cancelling',
  'parked',
  'key-limit',
  'key-rate',
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
