import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type EmqErrorCode, EmqError, errorCodes } from '../errors.js';

/** The body of every error the API answers: `{error: {code, message}}`. */
export interface ErrorBody {
  readonly error: { readonly code: EmqErrorCode | 'EMQINTERNAL'; readonly message: string };
}

/** The JSON error response for `code`, with the status the error table gives it. */
export function problem(c: Context, code: EmqErrorCode, message: string): Response {
  const body: ErrorBody = { error: { code, message } };
  return c.json(body, errorCodes[code] as ContentfulStatusCode);
}

/** The response for anything thrown in a route: typed errors by their table, others as 500. */
export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof EmqError) return problem(c, error.code, error.message);
  const body: ErrorBody = { error: { code: 'EMQINTERNAL', message: 'internal error (see the server log)' } };
  return c.json(body, 500);
}
