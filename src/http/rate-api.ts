import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { InvalidArgumentError } from '../errors.js';
import type { AnyQueue } from '../open-queue.js';
import { checkHoldMs, checkRateLimit } from '../rate-limits.js';
import { problem } from './problem.js';
import { groupRateRoute, holdGroupRoute, holdUngroupedRoute, queueRateRoute } from './rate-routes.js';

/** What the rate routes need of the app that serves them (`E`: its hono environment). */
export interface RateWiring<E extends Env> {
  /** The queue of a request by its name, a Queue or a PartitionedQueue (the app's cache, src/http/queue-cache.ts). */
  readonly queueOf: (c: Context<E>, name: string) => Promise<AnyQueue>;
}

/**
 * What a validator tells a hook: the target, whether it passed, and the value it read (zod-validator
 * passes it on failure too; @hono/zod-openapi's Hook type leaves it out). Typed loosely on
 * purpose: a hook typed with the route's own input would steer the route's inferred input.
 */
interface Validated {
  readonly target: string;
  readonly success: boolean;
  readonly data?: unknown;
}

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

/** A hold body's ms, checked as the core checks it; a body that is no object is left to the schema. */
const checkHoldBody = (body: unknown): unknown =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? checkHoldMs((body as { ms?: unknown }).ms) : undefined;

/**
 * Serves the rate routes (rate-routes.ts) on `app`, over the Queue methods the TypeScript API
 * has: each a thin call. A body the schema refuses is answered 400 EMQARG with the message the
 * Queue's own check gives it (`limit must be an integer >= 1, got 0`), so a bad limit reads the
 * same over HTTP, from the CLI and in TypeScript; anything else refused reads as every route's.
 *
 * @example
 * registerRateRoutes(app, { queueOf });
 */
export function registerRateRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: RateWiring<E>): void {
  const { queueOf } = wiring;
  /** The hook of a route whose body `check` checks: the core's message first, the app's default hook else. */
  const coreMessages =
    (check: (body: unknown) => unknown) =>
    (result: Validated, c: Context<E>) => {
      const message = !result.success && result.target === 'json' ? refusal(check, result.data) : undefined;
      // the app's own hook for every other target and message: params, an unknown field
      return message === undefined ? app.defaultHook?.(result as AppHookResult<E>, c) : problem(c, 'EMQARG', message);
    };

  app.openapi(
    queueRateRoute,
    async (c) => {
      const { queue } = c.req.valid('param');
      const rate = c.req.valid('json');
      await (await queueOf(c, queue)).setRateLimit(rate);
      return c.json({ queue, rate }, 200);
    },
    coreMessages(checkRateLimit),
  );

  app.openapi(
    groupRateRoute,
    async (c) => {
      const { queue, group } = c.req.valid('param');
      const rate = c.req.valid('json');
      await (await queueOf(c, queue)).setGroupRateLimit(group, rate);
      return c.json({ queue, group, rate }, 200);
    },
    coreMessages(checkRateLimit),
  );

  app.openapi(
    holdGroupRoute,
    async (c) => {
      const { queue, group } = c.req.valid('param');
      const { ms } = c.req.valid('json');
      const heldUntil = await (await queueOf(c, queue)).holdGroup(group, ms);
      return c.json({ queue, group, heldUntil }, 200);
    },
    coreMessages(checkHoldBody),
  );

  app.openapi(
    holdUngroupedRoute,
    async (c) => {
      const { queue } = c.req.valid('param');
      const { ms } = c.req.valid('json');
      const heldUntil = await (await queueOf(c, queue)).holdGroup(null, ms);
      return c.json({ queue, group: null, heldUntil }, 200);
    },
    coreMessages(checkHoldBody),
  );
}
