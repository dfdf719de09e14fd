import type { Context, Env, MiddlewareHandler } from 'hono';

/**
 * Refuses a request body over `maxBytes` by calling `tooLarge`, on any runtime, without rebuilding
 * the request. A declared Content-Length is judged from the header, before any of the body is
 * read (the runtime's framing holds the body to it). A body without one (`Transfer-Encoding:
 * chunked`, as `fetch` sends a stream) is read here, counting, until it ends or passes the limit;
 * its text goes into hono's body cache, where `c.req.json()` and the validators find it.
 *
 * Why not hono's `bodyLimit`: on a chunked body it rebuilds the request with the global `Request`
 * (`new Request(c.req.raw, { body })`). Under @hono/node-server with `overrideGlobalObjects:
 * false` that is undici's, whose brand check refuses the adapter's lightweight request ("Cannot
 * read private member #state"): every chunked enqueue was a 500 on Node.
 *
 * @example
 * app.on('POST', '/upload', bodyLimit(1024 * 1024, (c) => problem(c, 'EMQTOOLARGE', 'over 1 MiB')));
 */
export function bodyLimit<E extends Env>(
  maxBytes: number,
  tooLarge: (c: Context<E>) => Response | Promise<Response>,
): MiddlewareHandler<E> {
  return async (c, next) => {
    const raw = c.req.raw;
    const declared = raw.headers.get('content-length');
    if (declared !== null && !raw.headers.has('transfer-encoding')) {
      return Number(declared) > maxBytes ? tooLarge(c) : next();
    }
    const body = raw.body;
    if (!body) return next();
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let size = 0;
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      // Not cancelled: on Node that destroys the socket before the 413 is written; the adapter
      // drains what is left after answering (@hono/node-server, autoCleanupIncoming).
      if (size > maxBytes) {
        reader.releaseLock();
        return tooLarge(c);
      }
      // decoded as it comes (`stream`: a character cut between chunks waits for its rest), so no
      // copy of the whole body is made
      text += decoder.decode(value, { stream: true });
    }
    text += decoder.decode();
    // hono keeps a promise there (its own type says string): `c.req.json()` chains on it
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    return next();
  };
}
