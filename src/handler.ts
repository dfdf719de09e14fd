import type { Job } from './job.js';
import { startProcess } from './telemetry.js';

/**
 * A job handler: resolves to complete the job; throws or rejects to retry it with its backoff.
 * Throw UnrecoverableError to send it straight to dead, RetryAfterError to retry after an exact
 * delay. `signal` aborts when the consumer loses the lease, times the handler out, or stops.
 *
 * @example
 * const handler: Handler<{ to: string }> = async (job, { signal }) => {
 *   await fetch('https://mail.example/send', { method: 'POST', body: JSON.stringify(job.payload), signal });
 * };
 */
export type Handler<Payload = unknown> = (job: Job<Payload>, context: HandlerContext) => Promise<void> | void;

/** What a handler gets besides its job. */
export interface HandlerContext {
  /** Aborts when the lease is lost (fenced off), the handler times out, or the consumer stops. */
  readonly signal: AbortSignal;
}

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

/** How a handler's run ended, as the settle scripts need it. */
export type Outcome =
  | {
      /** Done: completed. */
      readonly kind: 'complete';
    }
  | {
      /** Failed this attempt: retried, or dead when it was the last. */
      readonly kind: 'retry';
      /** What the row keeps as its last error. */
      readonly error: string;
      /** Retry after exactly this many ms instead of the job's backoff. */
      readonly delayMs?: number;
    }
  | {
      /** Failed for good: straight to dead. */
      readonly kind: 'fail';
      /** What the row keeps as its last error. */
      readonly error: string;
    };

const COMPLETE: Outcome = { kind: 'complete' };

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

/** The outcome a thrown value stands for. */
export function outcomeOf(error: unknown): Outcome {
  if (error instanceof UnrecoverableError) return { kind: 'fail', error: errorText(error) };
  if (error instanceof RetryAfterError && Number.isSafeInteger(error.delayMs) && error.delayMs >= 0) {
    return { kind: 'retry', error: errorText(error), delayMs: error.delayMs };
  }
  return { kind: 'retry', error: errorText(error) };
}

/** Thrown into the outcome when a handler runs past its timeout. */
export class HandlerTimeoutError extends Error {
  constructor(
    /** The timeout the handler ran past, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`the handler ran past its timeout of ${timeoutMs} ms`);
    this.name = 'HandlerTimeoutError';
  }
}

/**
 * The context a handler gets, its signal made on first read: most handlers never read it, and
 * making an AbortSignal costs microseconds per job (13% of a consumer's CPU with no-op handlers).
 * Aborting the controller works either way.
 */
export function contextOf(controller: AbortController): HandlerContext {
  return {
    get signal(): AbortSignal {
      return controller.signal;
    },
  };
}

/**
 * Runs `handler` on `job` and says how it ended: a resolve completes; a throw, a rejection or
 * running past `timeoutMs` (0 = no timeout) retries; UnrecoverableError fails for good. Never
 * throws: nothing a handler does escapes into the loop that called it. With `queue`, the run is a
 * `process <queue>` span when OpenTelemetry is there (README, "Telemetry").
 */
export async function runHandler<Payload>(
  handler: Handler<Payload>,
  job: Job<Payload>,
  options: { controller: AbortController; timeoutMs?: number; onTimeout?: () => void; queue?: string },
): Promise<Outcome> {
  const timeoutMs = options.timeoutMs ?? 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const span = options.queue === undefined ? undefined : startProcess(options.queue, job);
  try {
    // called now, not a microtask later: a caller that goes on to send its next claim would
    // otherwise hold the handler's start back by that whole send (a socket write)
    let run: Promise<void> | void;
    try {
      run = span ? span.run(() => handler(job, contextOf(options.controller))) : handler(job, contextOf(options.controller));
    } catch (error) {
      run = Promise.reject(error);
    }
    if (timeoutMs > 0) {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          options.onTimeout?.();
          reject(new HandlerTimeoutError(timeoutMs));
        }, timeoutMs);
      });
      await Promise.race([run, timeout]);
    } else {
      await run;
    }
    span?.end(COMPLETE);
    return COMPLETE;
  } catch (error) {
    const outcome = outcomeOf(error);
    span?.end(outcome, error);
    return outcome;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
