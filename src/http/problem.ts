import type { Context, TypedResponse } from 'hono';
import { type EmqErrorCode, EmqError, errorCodes } from '../errors.js';

/** The body of every error the API answers: `{error: {code, message}}`. */
export interface ErrorBody {
  /** What went wrong. */
  readonly error: {
    /** A code of the error table (`EMQARG`, `EMQNOTFOUND`...), or `EMQINTERNAL` for a bug of ours. */
    readonly code: EmqErrorCode | 'EMQINTERNAL';
    /** What a person reads: the field or id at fault, and why. */
    readonly message: string;
  };
}

/** A JSON error response typed with its status, so a route may answer only what it declares. */
export type ProblemResponse<Code extends EmqErrorCode> = Response & TypedResponse<ErrorBody, (typeof errorCodes)[Code], 'json'>;

/**
 * The JSON error response for `code`, with the status the error table gives it.
 *
 * @example
 * if (!job) return problem(c, 'EMQNOTFOUND', `no job ${id} in queue ${queue}`); // 404
 */
export function problem<Code extends EmqErrorCode>(c: Context, code: Code, message: string): ProblemResponse<Code> {
  const body: ErrorBody = { error: { code, message } };
  return c.json(body, errorCodes[code]);
}

/**
 * The response for anything thrown in a route: typed errors by their table, others as 500.
 *
 * @example
 * app.onError((error, c) => errorResponse(c, error));
 */
export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof EmqError) return problem(c, error.code, error.message);
  const body: ErrorBody = { error: { code: 'EMQINTERNAL', message: 'internal error (see the server log)' } };
  return c.json(body, 500);
}
