import { z } from '@hono/zod-openapi';
import { MAX_DEDUPE_KEY, MAX_PRIORITY } from '../encode.js';
import { isEventId } from '../events/decode.js';

/** The longest `?wait` of the enqueue route, in ms. */
export const MAX_WAIT_MS = 30_000;

/**
 * The HTTP API's request shapes shared by several families of routes, one source for validation
 * and for the OpenAPI document (the `*-routes.ts` files carry them). Objects are strict: an
 * unknown field is a 400, not a silently ignored typo. `z` comes from @hono/zod-openapi so
 * `.openapi()` exists before any schema uses it.
 */
/** A queue, group or scheduler name. */
export const name = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, "letters, digits, '.', '_' or '-', 1 to 128 characters");

/** A concurrency key's name (`org:7`): a queue name's letters and `:` (assertKeyName in encode.ts). */
export const keyName = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, "letters, digits, '.', '_', ':' or '-', 1 to 128 characters");

/** A job id an enqueue may give (with or without its `JOB:` prefix). */
export const jobId = z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, "letters, digits, '.', '_', ':' or '-', 1 to 200 characters");

/**
 * The id of a job to act on: an id an enqueue may give, that of a job a scheduler fired,
 * `JOB:<scheduler>@<slot>` (which no enqueue may give; `jobIdOf` in encode.ts), or one a partition
 * of a partitioned queue made, `JOB:<seq>~<partition>`.
 */
const existingJobId = z
  .string()
  .regex(
    /^(?:[A-Za-z0-9._:-]{1,200}|JOB:[A-Za-z0-9._-]{1,128}@\d{1,16}|JOB:\d{1,16}~\d{1,4})$/,
    "letters, digits, '.', '_', ':' or '-', 1 to 200 characters, a fired job's JOB:<scheduler>@<slot>, or a partition's JOB:<seq>~<partition>",
  );

/** `/v1/queues/{queue}...` */
export const queueParams = z.object({ queue: name });
/** `/v1/queues/{queue}/groups/{group}...` */
export const groupParams = z.object({ queue: name, group: name });
/** `/v1/queues/{queue}/jobs/{id}...`: `id` with or without its `JOB:` prefix, or a fired job's. */
export const jobParams = z.object({ queue: name, id: existingJobId });
/** `/v1/queues/{queue}/schedulers/{id}`: a scheduler's id is a name. */
export const schedulerParams = z.object({ queue: name, id: name });

/** A backoff spelled out; a job read back shows its backoff in the same shape. */
export const backoffOptions = z
  .object({
    type: z.enum(['fixed', 'exponential']),
    delayMs: z.number().int().min(0),
    maxDelayMs: z.number().int().min(0).optional(),
    jitter: z.number().min(0).max(1).optional(),
  })
  .strict();

/** A dedupe key and its window (`DedupeOptions`): an add while it holds is a duplicate, or with `replace` a debounce. */
export const dedupeOptions = z
  .object({
    key: z
      .string()
      .min(1)
      .max(MAX_DEDUPE_KEY)
      .regex(/^\P{Cc}*$/u, 'no control characters')
      .openapi({ description: `1 to ${MAX_DEDUPE_KEY} characters, no control characters` }),
    ttlMs: z.number().int().min(1).optional().openapi({ description: 'the key holds this long after the add, even when the job finishes sooner; absent: until the job completes or dies' }),
    replace: z.boolean().optional().openapi({ description: 'a job of the key not yet started takes this payload and delay (debounce), answering `replaced`' }),
  })
  .strict()
  .openapi('Dedupe');

/** One job: the payload and its options beside it, as `add` takes them (`BulkJob` in TypeScript). */
export const enqueueBody = z
  .object({
    payload: z.unknown().refine((v) => v !== undefined, 'payload is required'),
    id: jobId.optional(),
    group: name.optional(),
    delayMs: z.number().int().min(0).optional(),
    runAt: z.union([z.number().int().min(0), z.iso.datetime({ offset: true })]).optional(),
    priority: z.number().int().min(0).max(MAX_PRIORITY).optional(),
    maxAttempts: z.number().int().min(1).max(1_000_000).optional(),
    backoffMs: z.number().int().min(0).optional().openapi({ deprecated: true, description: 'the same as a number `backoff`' }),
    // a number is a fixed delay in ms, as `add` takes it: a TypeScript BulkJob as JSON is a valid job here
    backoff: z.union([z.number().int().min(0), backoffOptions]).optional(),
    dedupe: dedupeOptions.optional(),
    timeoutMs: z.number().int().min(1).optional().openapi({ description: "the job's own handler timeout in ms, over the consumer's: at its deadline the attempt fails as a retry" }),
    keys: z.array(keyName).min(1).max(4).optional().openapi({ description: 'concurrency keys the job counts against beside its group: it starts only while each is under its limit (setKeyLimit)' }),
    expireAfterMs: z.number().int().min(1).optional().openapi({ description: 'not started this many ms after the add (server clock), the job never starts: dead with EMQEXPIRED' }),
    expireAt: z.union([z.number().int().min(0), z.iso.datetime({ offset: true })]).optional().openapi({ description: 'as expireAfterMs, at this time (epoch ms or ISO 8601)' }),
  })
  .strict()
  .refine((b) => !(b.expireAfterMs !== undefined && b.expireAt !== undefined), 'give expireAfterMs or expireAt, not both')
  .refine((b) => !(b.delayMs !== undefined && b.runAt !== undefined), 'give delayMs or runAt, not both')
  .refine((b) => !(b.dedupe !== undefined && b.id !== undefined), 'give dedupe or id, not both')
  .refine((b) => !(b.backoffMs !== undefined && b.backoff !== undefined), 'give backoffMs or backoff, not both');

/** The most jobs in one bulk enqueue. */
/**
 * The enqueue routes' `Idempotency-Key` header: the same key again answers what the first request
 * answered and writes nothing, so a client may retry after an ambiguous failure (design.md,
 * "Requests that may run twice").
 */
export const idempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, "letters, digits, '.', '_', ':' or '-', 1 to 200 characters")
    .optional()
    .openapi({ description: 'Retry safely: the same key again answers the first response and writes nothing (24 hours)' }),
});

export const MAX_BULK = 1000;

export const bulkBody = z.object({ jobs: z.array(enqueueBody).min(1).max(MAX_BULK) }).strict();

export const limitBody = z.object({ limit: z.number().int().min(0).nullable() }).strict();

export const deadQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    // documented by hand: the generator asks the schema whether it takes null, and null coerces
    // to 0, so it would document `integer or null`
    offset: z.coerce.number().int().min(0).default(0).openapi({ type: 'integer', minimum: 0, default: 0 }),
  })
  .strict();

/** An events stream entry id, `<ms>-<seq>` (each below 2^64), or `0` for the start of the stream. */
const eventId = z
  .string()
  .refine(isEventId, 'an event id <ms>-<seq> or 0')
  .openapi({ type: 'string', pattern: '^(0|\\d{1,20}-\\d{1,20})$', example: '1767225600000-0' });

/** `GET /v1/queues/{queue}/events`: after which entry, and how many events at most. */
export const eventsQuery = z
  .object({
    after: eventId.default('0').openapi({ description: 'the entry id to read after (exclusive): `next` of the page before; 0 (default) from the start' }),
    limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ type: 'integer', minimum: 1, maximum: 1000, default: 100 }),
  })
  .strict();

/** `GET /v1/queues/{queue}/events/stream`: where to start when no Last-Event-ID header says. */
export const eventsStreamQuery = z
  .object({
    after: eventId.optional().openapi({ description: 'the entry id to start after; a Last-Event-ID header wins; neither: from now' }),
  })
  .strict();

/** The SSE route's headers: the id of the last message received, sent by a reconnecting EventSource. */
export const eventsStreamHeaders = z.object({
  'last-event-id': eventId.optional().openapi({ description: 'resume after this entry id (an EventSource sends it when it reconnects)' }),
});

/** The enqueue route's query: how long to wait for the job to finish, in ms. */
export const enqueueQuery = z
  .object({
    wait: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .openapi({ type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, description: 'wait up to this many ms for the job to finish (the Worker waits at most 20,000)' }),
  })
  .strict();

export type EnqueueBody = z.infer<typeof enqueueBody>;
