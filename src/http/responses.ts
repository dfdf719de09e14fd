import { z } from '@hono/zod-openapi';
import { type EmqErrorCode, errorCodes } from '../errors.js';
import type { JobRecord } from '../job.js';
import { rateLimits } from './rate-schemas.js';
import { backoffOptions } from './schemas.js';

/**
 * The HTTP API's response shapes. They type the handlers (a route answers only what it declares)
 * and fill the OpenAPI document; nothing validates them at run time.
 */

// Object.keys loses the keys' literal type; the table's keys are exactly EmqErrorCode.
const codes = Object.keys(errorCodes) as [EmqErrorCode, ...EmqErrorCode[]];

/** Every error the API answers: `{error: {code, message}}`. */
export const errorBody = z
  .object({
    error: z.object({
      code: z.enum([...codes, 'EMQINTERNAL']),
      message: z.string(),
    }),
  })
  .openapi('Error');

const jobState = z.enum(['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting', 'awaiting', 'cancelled']);

/** A flow's links as a job shows them (src/flows/flow.ts). */
const parentRef = z
  .object({ queue: z.string(), id: z.string(), onFailure: z.enum(['fail-parent', 'ignore', 'remove', 'wait']) })
  .openapi('ParentRef');
const childOutcome = z
  .object({
    queue: z.string(),
    id: z.string(),
    state: z.enum(['unfinished', 'completed', 'failed']),
    result: z.unknown().optional(),
    error: z.string().optional(),
  })
  .openapi('ChildOutcome');

/** The scheduler that fired a job and the slot it fired it for (`FiredBy`). */
const firedBy = z
  .object({
    id: z.string().openapi({ description: "the scheduler's id" }),
    slot: z.number().int().openapi({ description: 'the slot it was fired for, epoch ms' }),
  })
  .openapi('FiredBy');

/** One durable step of a job (`StepRecord`, docs/guides/steps.md). */
const stepRecord = z
  .object({
    index: z.number().int().openapi({ description: "its place in the handler's order, from 1" }),
    name: z.string(),
    kind: z.enum(['run', 'sleep', 'wait', 'invoke']),
    state: z.enum(['done', 'failed', 'sleeping', 'waiting', 'timed-out', 'invoking']),
    result: z.unknown().optional().openapi({ description: "a run step's result, a wait's event data" }),
    error: z.string().optional().openapi({ description: "the error a run step's last try threw" }),
    attempts: z.number().int().openapi({ description: "how many times a run step's function ran" }),
    startedAt: z.number().int().optional().openapi({ description: 'epoch ms (server clock)' }),
    finishedAt: z.number().int().optional().openapi({ description: 'epoch ms (server clock)' }),
    until: z.number().int().optional().openapi({ description: "a sleep's due time, a wait's timeout, epoch ms" }),
    event: z.string().optional().openapi({ description: 'the event a wait waits for' }),
    eventId: z.string().optional().openapi({ description: 'the id of the event it took' }),
    child: z.object({ queue: z.string(), id: z.string() }).optional().openapi({ description: "an invoke's child" }),
  })
  .openapi('Step');

/** A job as the API shows it. */
export const jobView = z
  .object({
    id: z.string().openapi({ description: 'the id every other route takes: `JOB:` and the id given or made' }),
    state: jobState,
    attempt: z.number().int().openapi({ description: "the latest attempt of this run: claims since the enqueue or the last reprocess, 0 before the first (a handler's `job.attempt`)" }),
    maxAttempts: z.number().int().openapi({ description: 'attempts allowed per run' }),
    attemptsStarted: z.number().int().openapi({ description: "every claim that ran, across every run (BullMQ's attemptsStarted)" }),
    payload: z.unknown(),
    group: z.string().optional(),
    priority: z.number().int(),
    backoff: backoffOptions,
    error: z.string().optional().openapi({ description: 'the last error an attempt ended with' }),
    createdAt: z.number().int().openapi({ description: 'epoch ms' }),
    runAt: z.number().int().optional().openapi({ description: 'epoch ms, while scheduled' }),
    leaseUntil: z.number().int().optional().openapi({ description: 'epoch ms, while active' }),
    finishedAt: z.number().int().optional().openapi({ description: 'epoch ms, once completed or dead' }),
    result: z.unknown().optional().openapi({
      description: "what the handler resolved with (JSON), once completed, kept as long as the completed row; absent when it returned nothing",
    }),
    progress: z.unknown().optional().openapi({
      description: 'the last progress a run reported: a number from 0 to 100 or a small JSON value; absent when none was',
    }),
    scheduler: firedBy.optional().openapi({ description: 'the scheduler that fired it and the slot, when a scheduler did (its id is `JOB:<scheduler>@<slot>`)' }),
    parent: parentRef.optional().openapi({ description: "a flow child's parent" }),
    children: z.array(childOutcome).optional().openapi({ description: "a flow parent's children, each with its state and result or error" }),
    flow: z
      .object({ total: z.number().int(), done: z.number().int() })
      .optional()
      .openapi({ description: "a flow parent's count: the children it waits for, and how many have finished" }),
    steps: z.array(stepRecord).optional().openapi({ description: 'its durable steps in order, for a job that recorded any' }),
    timeoutAt: z.number().int().optional().openapi({ description: 'epoch ms, while it waits for an event with a timeout' }),
    timeoutMs: z.number().int().optional().openapi({ description: "its own handler timeout in ms, over the consumer's; absent: the consumer's" }),
    keys: z.array(z.string()).optional().openapi({ description: 'its concurrency keys: it starts only while each is under its limit' }),
    expiresAt: z.number().int().optional().openapi({ description: 'when it expires unless started by then (server ms); absent: no expiry' }),
    cancelReason: z.string().optional().openapi({ description: 'why it was cancelled: on a cancelled job, and on an active one whose cancel was asked and whose run has not ended yet' }),
  })
  .openapi('Job');

export type JobView = z.infer<typeof jobView>;

/** `View` when it has exactly the fields of `Record`, else never. */
type SameFields<View, Record> = [Exclude<keyof View, keyof Record> | Exclude<keyof Record, keyof View>] extends [never] ? View : never;

/**
 * A job as the API shows it: its JobRecord as it is, which JSON carries without the fields it
 * leaves undefined. Nothing is picked field by field, so a body cannot drop a field the record
 * has; and the return type is `never` unless the `Job` schema (the OpenAPI document) declares
 * exactly the record's fields, so a field added to JobRecord does not compile until it is documented.
 */
export const jobViewOf = (job: JobRecord): SameFields<JobView, JobRecord> => job;

const enqueuedId = z.string().openapi({ description: 'the id every other route takes: `JOB:` and the id given or made' });
/** What became of one job of an enqueue: `add`'s EnqueueResult, the same shape for one job and in bulk. */
export const enqueueResult = z
  .object({
    id: enqueuedId,
    state: z.enum(['pending', 'scheduled', 'duplicate', 'replaced']).openapi({
      description:
        '`duplicate`: a job with this id or holding this dedupe key exists, nothing was written (`id` is its); `replaced`: that job, not yet started, took this payload and delay (`dedupe.replace`)',
    }),
  })
  .openapi('EnqueueResult');
export const enqueued = z.object({ id: enqueuedId, state: z.enum(['pending', 'scheduled']) });
export const duplicate = z.object({ id: enqueuedId, state: z.enum(['duplicate', 'replaced']) });
/** One result per job of the request, in its order. */
export const enqueuedBulk = z.object({ jobs: z.array(enqueueResult) });
/** A queue's jobs per state (`QueueCounts`): the stats route's and the listing's. */
const queueCounts = z.object({
  pending: z.number().int(),
  scheduled: z.number().int(),
  active: z.number().int(),
  dead: z.number().int(),
  completed: z.number().int().openapi({ description: 'completed since the queue began (a counter)' }),
  waiting: z.number().int().openapi({ description: 'flow parents waiting for their children, and jobs waiting for an invoked child' }),
  awaiting: z.number().int().openapi({ description: 'jobs waiting for an event (step.waitForEvent)' }),
  sleeping: z.number().int().openapi({ description: 'scheduled jobs in a durable sleep (step.sleep), counted in scheduled too' }),
  cancelled: z.number().int().openapi({ description: 'jobs ended by a cancel, until removed or cleaned' }),
});
/** Jobs completed and sent to dead per minute of the last hour (`LastHour`): the stats route's and the listing's. */
// min and max, not length: the OpenAPI generator writes minItems and maxItems for these only
const minuteBuckets = (what: string) =>
  z.array(z.number().int()).min(60).max(60).openapi({ description: `jobs ${what} in each minute, oldest first, the current minute (still counting) last` });
const lastHour = z
  .object({
    minute: z.number().int().openapi({ description: "when the last bucket's minute began (epoch ms, the Redis server's clock); a partitioned queue's buckets are its partitions' added up minute by minute" }),
    completed: minuteBuckets('completed'),
    dead: minuteBuckets('sent to dead (attempts used up, failed for good, a lease reaped on its last attempt)'),
  })
  .openapi('LastHour');
export const queueStats = z.object({
  queue: z.string(),
  paused: z.boolean(),
  counts: queueCounts,
  rateLimits: rateLimits.openapi({ description: "the queue's rate limit and its groups', and what is throttled now (at its limit or held)" }),
  lastHour,
});
/** One queue of the registry at a glance (`QueueOverview`): what `/metrics` shows of it, as JSON. */
const queueOverview = z
  .object({
    queue: z.string(),
    partitions: z.number().int().optional().openapi({ description: 'its count of partitions, for a partitioned queue (the row sums them); absent otherwise' }),
    paused: z.boolean().openapi({ description: 'whether it is paused (a partitioned queue: every partition is)' }),
    counts: queueCounts,
    deadTotal: z.number().int().openapi({ description: 'jobs ever sent to dead (a counter, unlike `counts.dead`)' }),
    retriedTotal: z.number().int().openapi({ description: 'failed attempts sent to run again (the `retried` events)' }),
    stalledTotal: z.number().int().openapi({ description: 'leases that lapsed and were reaped (the `stalled` events)' }),
    firedTotal: z.number().int().openapi({ description: 'scheduler slots fired, each enqueuing one job' }),
    rateLimitedTotal: z.number().int().openapi({ description: 'times a group, the ungrouped jobs or the queue reached its rate limit' }),
    lastHour,
  })
  .openapi('QueueOverview');
/** Every queue of the registry, sorted by name. */
export const queueList = z.object({ queues: z.array(queueOverview) });
export const removed = z.object({ id: z.string(), removed: z.literal(true) });
export const reprocessed = z.object({ id: z.string(), state: z.literal('pending') });
export const deadJobs = z.object({ jobs: z.array(jobView) });
export const queuePaused = z.object({ queue: z.string(), paused: z.literal(true) });
export const queueResumed = z.object({ queue: z.string(), paused: z.literal(false) });
export const groupPaused = z.object({ queue: z.string(), group: z.string(), paused: z.literal(true) });
export const groupResumed = z.object({ queue: z.string(), group: z.string(), paused: z.literal(false) });
export const groupLimit = z.object({ queue: z.string(), group: z.string(), limit: z.number().int().nullable() });
export const healthy = z.object({ ok: z.literal(true) });

/** One event as the API shows it: `QueueEvent` as JSON (the fields besides these depend on `event`). */
export const queueEvent = z
  .looseObject({
    id: z.string().openapi({ description: "its stream entry's id, `<ms>-<seq>`: the events of one script call share it" }),
    time: z.number().int().openapi({ description: 'epoch ms, the Redis server time' }),
    event: z.string().openapi({ description: 'added, scheduled, promoted, active, progress, completed, retried, dead, stalled, released, removed, reprocessed, replaced, step, cancelled, cancelling, paused, resumed, group-paused, group-resumed, limit, rate, held, cleaned, drained' }),
    scheduler: firedBy.optional().openapi({ description: '`added` of a job a scheduler fired: the scheduler and the slot' }),
  })
  .openapi('QueueEvent');
/** A page of events: whole entries, oldest first. */
export const eventsPage = z.object({
  events: z.array(queueEvent),
  next: z.string().openapi({ description: 'the last entry id read (`after` when none was): the next page\'s `after`' }),
});
/** `?wait`: the job finished within it. */
export const waitedCompleted = z.object({ id: enqueuedId, state: z.literal('completed'), result: z.unknown().optional() });
export const waitedDead = z.object({ id: enqueuedId, state: z.literal('dead'), error: z.string() });
/** `POST /jobs?wait=`: the job was cancelled (`queue.cancel`) before it finished. */
export const waitedCancelled = z.object({ id: enqueuedId, state: z.literal('cancelled'), reason: z.string() });
/** `?wait`: the job did not finish within it; its state then. */
export const waitedNot = z.object({ id: enqueuedId, state: jobState });
