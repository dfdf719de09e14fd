/**
 * What a handler throws to steer its job, and how anything it throws is kept as text: apart from
 * src/handler.ts so the steps (src/steps/) use them without a cycle.
 */

/** Thrown by a handler: the job fails for good and goes straight to dead, attempts left or not. */
export class UnrecoverableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}

/** Thrown by a handler: retry after exactly `delayMs` instead of the job's backoff. */
export class RetryAfterError extends Error {
  constructor(
    message: string,
    /** How long to wait before the next attempt, in ms (an integer >= 0; else the job's backoff). */
    readonly delayMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RetryAfterError';
  }
}

/**
 * Thrown by a handler when what its job calls is rate limiting it (an HTTP 429, say): the job goes
 * back to its lane without spending an attempt, and its group (the ungrouped lane, for an
 * ungrouped job) is held for `holdMs`: none of its jobs starts until then, other groups flow.
 * The same as `queue.holdGroup(group, holdMs)` plus giving the job back, in the settle's request.
 *
 * @example
 * const res = await fetch(url, { signal });
 * if (res.status === 429) throw new RateLimitedError(retryAfterMs(res.headers.get('retry-after')) ?? 1_000);
 */
export class RateLimitedError extends Error {
  constructor(
    /** How long to hold the job's group, in ms (an integer >= 1; else 1000). */
    readonly holdMs: number,
    message = `rate limited: holding the group for ${holdMs} ms`,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RateLimitedError';
  }
}

/** The longest error text kept on a row. */
const MAX_ERROR_CHARS = 4000;

/** An error (or anything thrown) as the text a row keeps: name, message, first stack lines. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const stack = error.stack ?? `${error.name}: ${error.message}`;
    return stack.slice(0, MAX_ERROR_CHARS);
  }
  let text: string;
  try {
    text = typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    text = String(error);
  }
  return `thrown: ${text}`.slice(0, MAX_ERROR_CHARS);
}

