/**
 * Durable steps (docs/guides/steps.md, docs/design/steps.md): a handler written as steps, where a
 * finished step never runs again, a sleep holds no slot and no lease, and a wait for an event
 * resumes the same job. The types a handler and a reader of a job see.
 */

/**
 * A handler's steps (`context.step`). Each call names its step; a job's steps are numbered in
 * the order its handler calls them, and a later run of the job (a retry, a resumption after a
 * sleep, a wait or an invoke, on any runtime) replays the recorded ones in that order.
 *
 * @example
 * const signup: Handler<{ email: string }> = async (job, { step }) => {
 *   const user = await step.run('create account', () => createAccount(job.payload.email));
 *   await step.sleep('give them a day', 86_400_000);
 *   const verified = await step.waitForEvent('verified', { event: 'email.verified', match: { userId: user.id }, timeoutMs: 86_400_000 });
 *   if (verified === null) await step.run('send reminder', () => sendReminder(user));
 * };
 */
export interface Steps {
  /**
   * Runs `fn` once: its result (JSON, within the queue's `maxResultBytes`) is recorded, fenced by
   * the job's lease, before this resolves, and a later run of the job resolves with the recorded
   * result without running `fn` (both as JSON carries it: a Date comes back a string). A throw
   * inside `fn` is recorded as the step's error and rethrown: the job's retry as any throw
   * (UnrecoverableError its death). Each step done restarts the job's attempts, so every step
   * has the job's `maxAttempts`.
   */
  run<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /**
   * Sleeps `ms` (an integer >= 0) by the server's clock: the job leaves active for scheduled,
   * holding no slot and no lease, and its handler runs again from the start when it is due,
   * replaying its recorded steps, on whichever runtime claims it. Not an attempt.
   */
  sleep(name: string, ms: number): Promise<void>;
  /** Sleeps until `at` (epoch ms or a Date; one already past goes on at once), as `sleep`. */
  sleepUntil(name: string, at: number | Date): Promise<void>;
  /**
   * Waits for an event sent to the job's queue (`queue.sendEvent(event, data)`, `POST
   * /v1/queues/:q/events/:event`, `emq send-event`) whose data matches `match`: the job parks in
   * state `awaiting`, holding no slot, and resolves with the event's data, or null once
   * `timeoutMs` has passed without one. An event sent before the wait began is taken too when it
   * was sent after the job was created and is still kept (the send's `keepMs`).
   */
  waitForEvent<T = unknown>(name: string, options: WaitForEventOptions): Promise<T | null>;
  /**
   * Enqueues a child job in `options.queue` and resolves with its result once it completes, the
   * parent holding no slot meanwhile (a flow parent, released exactly once: docs/design/flows.md).
   * A child that dies rejects with InvokedJobError (an UnrecoverableError: the parent dies too,
   * unless it catches it).
   */
  invoke<T = unknown>(name: string, options: InvokeOptions): Promise<T>;
}

/** What `step.waitForEvent` waits for. */
export interface WaitForEventOptions {
  /** The event's name: letters, digits and `._-`, 1 to 128. */
  readonly event: string;
  /**
   * The values the event's data must have, by path (object keys joined by dots): `{ 'user.id':
   * 42 }` matches data `{ user: { id: 42 } }`. Strings, finite numbers and booleans; at most 8.
   * Absent: any event of that name.
   */
  readonly match?: Readonly<Record<string, string | number | boolean>>;
  /** How long to wait, in ms (an integer >= 1); then the step resolves null. Absent: no timeout. */
  readonly timeoutMs?: number;
}

/** The child `step.invoke` enqueues. */
export interface InvokeOptions {
  /** The queue it runs in (not a partitioned queue). */
  readonly queue: string;
  /** Its payload. */
  readonly payload: unknown;
  /** Its id (as `Queue.add`'s); default `<parent id>.<step index>`, so a replay enqueues it once. */
  readonly id?: string;
  /** Its group. */
  readonly group?: string;
  /** Its priority. */
  readonly priority?: number;
  /** Its attempts. */
  readonly maxAttempts?: number;
}

/** The kinds of step. */
export type StepKind = 'run' | 'sleep' | 'wait' | 'invoke';

/**
 * Where a step stands: `done`; `failed` (a run step whose last try threw: it runs again with the
 * job's next attempt); `sleeping`; `waiting` for an event; `timed-out` (a wait whose timeout
 * passed: it resolved null); `invoking` (waiting for its child).
 */
export type StepState = 'done' | 'failed' | 'sleeping' | 'waiting' | 'timed-out' | 'invoking';

/** One recorded step, as `getJob`, `GET job` and a claimed `Job` show it. */
export interface StepRecord {
  /** Its place in the handler's order, from 1. */
  readonly index: number;
  /** Its name, unique within the job. */
  readonly name: string;
  /** What kind of step it is. */
  readonly kind: StepKind;
  /** Where it stands. */
  readonly state: StepState;
  /** A run step's result, a wait's event data, parsed from JSON (undefined for none). */
  readonly result?: unknown;
  /** The error a run step's last try threw. */
  readonly error?: string;
  /** How many times a run step's function ran. */
  readonly attempts: number;
  /** When it started (server time, epoch ms). */
  readonly startedAt?: number;
  /** When it finished (server time, epoch ms). */
  readonly finishedAt?: number;
  /** A sleep's due time, a wait's timeout (server time, epoch ms). */
  readonly until?: number;
  /** The event a wait waits for. */
  readonly event?: string;
  /** The id of the event a wait took. */
  readonly eventId?: string;
  /** An invoke's child. */
  readonly child?: {
    /** Its queue. */
    readonly queue: string;
    /** Its id. */
    readonly id: string;
  };
}

/** What `Queue.sendEvent` answers. */
export interface SentEvent {
  /** The event's id: the one given, or its sequence number in the queue. */
  readonly id: string;
  /** The waiting jobs it resumed (a repeat of a send with an id answers the first's count). */
  readonly resumed: number;
}

/** Options of `Queue.sendEvent`. */
export interface SendEventOptions {
  /**
   * An id for the send (job id alphabet, at most 200): the same id again within a day (or
   * `keepMs`, when longer) answers as the first send and resumes nobody: a send that may run
   * twice is harmless twice.
   */
  readonly id?: string;
  /**
   * How long the event is kept for waits that begin after it, in ms (0 to 7 days; default
   * 10 minutes): a wait recorded a moment after the event it was for still takes it. At most the
   * newest 1000 events of a name are kept.
   */
  readonly keepMs?: number;
}

/** The most steps one job may record. */
export const MAX_STEPS = 1000;
/** The most bytes of JSON one job's step records may hold. */
export const MAX_STEP_BYTES = 4 * 1024 * 1024;
/** How long a sent event is kept by default, in ms. */
export const DEFAULT_EVENT_KEEP_MS = 10 * 60 * 1000;
/** The longest an event may be kept, in ms. */
export const MAX_EVENT_KEEP_MS = 7 * 24 * 60 * 60 * 1000;
