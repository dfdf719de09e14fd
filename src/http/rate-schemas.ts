import { z } from '@hono/zod-openapi';
import { MAX_RATE_MS } from '../queue/rate-limits.js';

/**
 * The shapes of rate limits over HTTP, one each for what a request sends and a response shows
 * (`RateLimit`, `Throttled`, `RateLimits` of src/queue/rate-limits.ts as JSON; docs/design.md, "Rate
 * limits and holds"). A file of their own: the stats response and the rate routes both use them.
 */

/** A rate limit, as a body sends it and a response shows it: strict, an unknown field is a 400. */
export const rateLimit = z
  .object({
    limit: z.number().int().min(1).openapi({ description: 'the most job starts (claims) in any window of periodMs' }),
    periodMs: z.number().int().min(1).max(MAX_RATE_MS).openapi({ description: `the window, ms (1 to ${MAX_RATE_MS}: a week), on the Redis server's clock` }),
  })
  .strict()
  .openapi('RateLimit');

/** A rate limit, or null for none (a union, not `.nullable()`: that would make the named schema itself nullable). */
export const rateLimitOrNone = z.union([rateLimit, z.null()]);

/** Something that may not start jobs until a time: at its rate limit, or held. */
export const throttled = z
  .object({
    group: z.string().nullable().openapi({ description: 'the group; null for the queue-wide limit (ungrouped false) or the ungrouped jobs (ungrouped true)' }),
    ungrouped: z.boolean().openapi({ description: 'whether it is the ungrouped jobs' }),
    until: z.number().int().openapi({ description: 'when it may start a job again, epoch ms (server time)' }),
    heldUntil: z.number().int().nullable().openapi({ description: 'when its hold ends (a hold route, or a handler\'s RateLimitedError), epoch ms; null when not held' }),
  })
  .openapi('Throttled');

/** A queue's rate limits and what is throttled now (`Queue.rateLimits()`). */
export const rateLimits = z
  .object({
    queue: rateLimitOrNone.openapi({ description: "the queue's own limit, over every group; null for none" }),
    groups: z.record(z.string(), rateLimit).openapi({ description: "each group's limit, by group" }),
    throttled: z.array(throttled).readonly().openapi({ description: 'what may not start jobs yet, soonest first (at most 1000)' }),
  })
  .openapi('RateLimits');
