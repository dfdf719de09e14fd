import type { Context, Env, MiddlewareHandler } from 'hono';
import { problem } from './problem.js';

const encoder = new TextEncoder();

/**
 * Whether `a` equals `b`, in time that does not depend on where they differ: both are hashed with
 * SHA-256 (Web Crypto, on Node and in Workers) and the digests compared byte by byte.
 *
 * @example
 * if (!(await constantTimeEqual(given, expected))) return unauthorized();
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  const dx = new Uint8Array(x);
  const dy = new Uint8Array(y);
  let diff = 0;
  for (let i = 0; i < dx.length; i++) diff |= dx[i]! ^ dy[i]!;
  return diff === 0;
}

/**
 * Requires `Authorization: Bearer <token>` when `token(c)` gives one; answers 401
 * `{error: {code: "EMQAUTH"}}` otherwise.
 *
 * @example
 * app.use('*', bearerAuth((c) => c.env.EMQ_TOKEN));
 */
export function bearerAuth<E extends Env>(token: (c: Context<E>) => string | undefined): MiddlewareHandler<E> {
  return async (c, next) => {
    const expected = token(c);
    if (expected === undefined) return next();
    const header = c.req.header('Authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !(await constantTimeEqual(match[1]!, expected))) {
      c.header('WWW-Authenticate', 'Bearer realm="echomq"');
      return problem(c, 'EMQAUTH', match ? 'the bearer token is wrong' : 'this API needs Authorization: Bearer <EMQ_TOKEN>');
    }
    return next();
  };
}
