import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { InvalidArgumentError } from '../errors.js';
import type { Validated } from './openapi-parts.js';
import { problem } from './problem.js';

/** The result the app's default hook takes: the same object, as @hono/zod-openapi types it. */
type AppHookResult<E extends Env> = Parameters<NonNullable<OpenAPIHono<E>['defaultHook']>>[0];

/** The message `check` refuses `value` with, or undefined when it takes it. */
function refusal(check: (value: unknown) => unknown, value: unknown): string | undefined {
  try {
    check(value);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
}

/**
 * The validation hook of a route whose JSON body the Queue checks with `check` (checkRateLimit,
 * checkHoldMs): a body the schema refuses is answered 400 EMQARG with the core's own message
 * (`limit must be an integer >= 1, got 0`), so it reads the same over HTTP, from the CLI and in
 * TypeScript; every other refusal (params, bad JSON, a field the core does not name) goes to the
 * app's default hook.
 *
 * @example
 * app.openapi(groupRateRoute, handler, coreMessages(app, checkRateLimit));
 */
export function coreMessages<E extends Env>(app: OpenAPIHono<E>, check: (body: unknown) => unknown) {
  return (result: Validated, c: Context<E>) => {
    const message = !result.success && result.target === 'json' ? refusal(check, result.data) : undefined;
    return message === undefined ? app.defaultHook?.(result as AppHookResult<E>, c) : problem(c, 'EMQARG', message);
  };
}
