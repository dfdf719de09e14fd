import type { z } from '@hono/zod-openapi';
import { errorBody } from './responses.js';

/** A JSON response of `schema`, for a route's `responses`. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });

/** A required JSON request body of `schema`, for a route's `request`. */
export const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });

/** An optional JSON request body of `schema` (a request without one validates as `{}`), for a route's `request`. */
export const optionalBody = <T extends z.ZodType>(schema: T) => ({ required: false, content: { 'application/json': { schema } } });

/** An error response (`{error: {code, message}}`). */
export const failure = (description: string) => json(errorBody, description);

/** The refusals every route may answer. */
export const refusals = {
  400: failure('bad input (EMQARG): nothing was written'),
  401: failure('no bearer token, or a wrong one (EMQAUTH)'),
  503: failure('Redis does not answer (EMQREDIS), or the server is not configured to serve (EMQCONFIG)'),
};

/** The refusal of a route a partitioned queue cannot serve (its events: one stream a partition). */
export const partitionRefusal = {
  409: failure('the queue is partitioned and this route reads one events stream (EMQPARTITION): each partition has its own'),
};

/**
 * What a validator tells a route's own hook: the target, whether it passed, the value it read
 * (zod-validator passes it on failure too; @hono/zod-openapi's Hook type leaves it out) and the
 * issues. Typed loosely on purpose: a hook typed with the route's own input would steer the
 * route's inferred input.
 */
export interface Validated {
  readonly target: string;
  readonly success: boolean;
  readonly data?: unknown;
  readonly error?: { readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> };
}
