import { z } from 'zod';
import { MAX_PRIORITY } from '../encode.js';

/**
 * The HTTP API's request shapes, one source for validation (through hono's validator) and for
 * the OpenAPI document. Objects are strict: an unknown field is a 400, not a silently ignored
 * typo.
 */
const name = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, "letters, digits, '.', '_' or '-', 1 to 128 characters");

export const queueParams = z.object({ queue: name });
export const groupParams = z.object({ queue: name, group: name });
export const jobParams = z.object({
  queue: name,
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, "letters, digits, '.', '_', ':' or '-', 1 to 200 characters"),
});

const backoff = z
  .object({
    type: z.enum(['fixed', 'exponential']),
    delayMs: z.number().int().min(0),
    maxDelayMs: z.number().int().min(0).optional(),
    jitter: z.number().min(0).max(1).optional(),
  })
  .strict();

/** One job: the payload and its options. */
export const enqueueBody = z
  .object({
    payload: z.unknown().refine((v) => v !== undefined, 'payload is required'),
    id: z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, "letters, digits, '.', '_', ':' or '-', 1 to 200 characters").optional(),
    group: name.optional(),
    delayMs: z.number().int().min(0).optional(),
    runAt: z.union([z.number().int().min(0), z.iso.datetime({ offset: true })]).optional(),
    priority: z.number().int().min(0).max(MAX_PRIORITY).optional(),
    maxAttempts: z.number().int().min(1).max(1_000_000).optional(),
    backoffMs: z.number().int().min(0).optional(),
    backoff: backoff.optional(),
  })
  .strict()
  .refine((b) => !(b.delayMs !== undefined && b.runAt !== undefined), 'give delayMs or runAt, not both')
  .refine((b) => !(b.backoffMs !== undefined && b.backoff !== undefined), 'give backoffMs or backoff, not both');

/** The most jobs in one bulk enqueue. */
export const MAX_BULK = 1000;

export const bulkBody = z.object({ jobs: z.array(enqueueBody).min(1).max(MAX_BULK) }).strict();

export const limitBody = z.object({ limit: z.number().int().min(0).nullable() }).strict();

export const deadQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();

export type EnqueueBody = z.infer<typeof enqueueBody>;
