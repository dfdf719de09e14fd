export { JobCancelledError } from './errors.js';
import { DEFAULT_MAX_RESULT_BYTES, encodeProgress, encodeResult } from './encode.js';
import type { EmqError } from './errors.js';
import type { Job } from './job.js';
import { StepError } from './errors.js';
import { JobSteps, type StepHost, type Suspension } from './steps/job-steps.js';
import type { Steps } from './steps/steps.js';
import { startProcess } from './telemetry/telemetry.js';
import { startTimer, type Timer } from './timers.js';
import { errorText, RateLimitedError, RetryAfterError, UnrecoverableError } from './handler-errors.js';

export { errorText, RateLimitedError, RetryAfterError, UnrecoverableError } from './handler-errors.js';

/**
 * A job handler: resolves to complete the job, and what it resolves with is the job's result
 * (JSON, at most the queue's `maxResultBytes`, 64 KiB by default; `undefined`: no result): kept on
 * the completed row, read back by `getJob` and `GET job`. A result JSON cannot carry, or one over
 * the cap, fails the job for good (dead) instead, since running it again would redo its work.
 * Throws or rejects to retry it with its backoff: UnrecoverableError sends it straight to dead,
 * RetryAfterError retries after an exact delay. `signal` aborts when the consumer loses the
 * lease, times the handler out, or stops; `progress` reports how far it got.
 *
 * @example
 * const handler: Handler<{ to: string }, { messageId: string }> = async (job, { signal, progress }) => {
 *   const res = await fetch('https://mail.example/send', { method: 'POST', body: JSON.stringify(job.payload), signal });
 *   await progress(90);
 *   return { messageId: res.headers.get('x-message-id') ?? '' };
 * };
 */
export type Handler<Payload = unknown, Result = unknown> = (job: Job<Payload>, context: HandlerContext) => Promise<Result> | Result;

/** What a handler gets besides its job. */
export interface HandlerContext {
  /** Aborts when the lease is lost (fenced off), the handler times out, or the consumer stops. */
  readonly signal: AbortSignal;
  /**
   * Writes the job's progress, which `getJob` and `GET job` show as `progress`: a number from 0
   * to 100, or a small JSON value (at most 4 KiB as JSON: `{ page: 3, of: 10 }`). One round trip
   * per call, not batched with anything: report as often as that is worth (on the edge each call
   * is a subrequest). Fenced by the job's lease like a settle: resolves true when written, false
   * when the lease is no longer this holder's (reaped, removed), which wrote nothing (a Node
   * consumer then aborts `signal` too). Rejects with InvalidArgumentError (EMQARG), writing
   * nothing, for anything else (a number out of range, undefined, a value JSON cannot carry, one
   * over 4 KiB). The value stays on the row until a later report or run replaces it, through
   * completion, retries and death. In a BatchConsumer's handler it writes the value to every job
   * of the batch, and resolves true only when every one was written.
   *
   * @example
   * for (const [i, page] of pages.entries()) { await render(page); await progress(Math.round((100 * (i + 1)) / pages.length)); }
   */
  progress(value: unknown): Promise<boolean>;
  /**
   * The job's durable steps (docs/guides/steps.md): `step.run` runs a function once across every
   * run of the job, `step.sleep` and `step.waitForEvent` suspend it holding no slot, `step.invoke`
   * runs a child job and resumes with its result. Made on first read. Not in a BatchConsumer's
   * handler (a StepError there).
   */
  readonly step: Steps;
}

/** How long a RateLimitedError holds when its holdMs is not an integer >= 1. */
const DEFAULT_HOLD_MS = 1000;

/** How a handler's run ended, as the settle scripts need it. */
export type Outcome =
  | {
      /** Done: completed. */
      readonly kind: 'complete';
      /**
       * The handler's result as JSON text, what the completed row keeps (`r`); absent when it
       * returned nothing. Within the queue's `maxResultBytes` (`Leases` fails the job for good
       * otherwise, as a runtime does for a result it cannot store).
       */
      readonly result?: string;
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
    }
  | {
      /**
       * Rate limited (RateLimitedError): given back without spending an attempt, its group (or the
       * ungrouped lane) held for `holdMs`.
       */
      readonly kind: 'hold';
      /** Why, for hooks and logs (the row keeps no error: the attempt did not count). */
      readonly error: string;
      /** How long to hold the job's group, ms (>= 1). */
      readonly holdMs: number;
    }
  | {
      /**
       * Suspended at a durable step (a sleep, a wait for an event, an invoke: src/steps/): the job
       * leaves active holding no slot, its steps kept, and runs again when the step is over. Not an
       * attempt.
       */
      readonly kind: 'suspend';
      /** The step it stopped at and how, as lua/suspend.lua takes it. */
      readonly step: Suspension;
    };

const COMPLETE: Outcome = { kind: 'complete' };

/**
 * The outcome of a handler that resolved with `value`: complete with it as the job's result (none
 * for undefined); or, when JSON cannot carry it or it is over `maxResultBytes`, failed for good
 * (dead, not retried: running it again would redo its work), with an error naming the size and
 * the cap, or why it is not JSON.
 *
 * @example
 * completion({ rows: 3 }, 65_536); // { kind: 'complete', result: '{"rows":3}' }
 * completion(10n, 65_536); // { kind: 'fail', error: "PayloadError (EMQPAYLOAD): the handler's result is not JSON-serialisable: ..." }
 */
export function completion(value: unknown, maxResultBytes: number): Outcome {
  try {
    const result = encodeResult(value, maxResultBytes);
    return result === undefined ? COMPLETE : { kind: 'complete', result };
  } catch (error) {
    return { kind: 'fail', error: resultError(error as EmqError) };
  }
}

/** The error a row keeps for a result that could not be stored: the class, its code, and why it is not retried. */
export function resultError(error: EmqError): string {
  return `${error.name} (${error.code}): ${error.message}; failed for good: running the job again would redo its work`;
}

/** The outcome a thrown value stands for. */
export function outcomeOf(error: unknown): Outcome {
  if (error instanceof UnrecoverableError || error instanceof StepError) return { kind: 'fail', error: errorText(error) };
  if (error instanceof RateLimitedError) {
    const holdMs = Number.isSafeInteger(error.holdMs) && error.holdMs >= 1 ? error.holdMs : DEFAULT_HOLD_MS;
    return { kind: 'hold', error: errorText(error), holdMs };
  }
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
 * Thrown into the outcome when a handler runs past its job's own timeout (`EnqueueOptions.timeoutMs`),
 * and the reason its signal aborts with: the attempt fails as a retry.
 */
export class JobTimeoutError extends HandlerTimeoutError {
  constructor(timeoutMs: number) {
    super(timeoutMs);
    this.message = `the job ran past its own timeout of ${timeoutMs} ms`;
    this.name = 'JobTimeoutError';
  }
}

/** The error a run past `timeoutMs` ends with: the job's own timeout's when it is the job's (`own`). */
export const timeoutErrorOf = (timeoutMs: number, own: number | undefined): HandlerTimeoutError =>
  own === timeoutMs ? new JobTimeoutError(timeoutMs) : new HandlerTimeoutError(timeoutMs);

/**
 * Writes a progress value for the job (or the batch) a context was made for, fenced by its lease:
 * true when written, false when the lease is lost. The runtime supplies it (`Leases.progress`).
 */
export type ProgressWriter = (value: unknown) => Promise<boolean>;

/** Without a lease to write under (a handler run on its own, in a test): checks the value, writes nothing. */
const noProgress: ProgressWriter = async (value) => {
  encodeProgress(value);
  return false;
};

/**
 * The context a handler gets, its signal made on first read: most handlers never read it, and
 * making an AbortSignal costs microseconds per job (13% of a consumer's CPU with no-op handlers).
 * Aborting the controller works either way. `progress` is what the runtime writes progress with.
 */
export function contextOf(controller: AbortController, progress: ProgressWriter = noProgress, job?: Job, steps?: StepHost): HandlerContext & { readonly steps: JobSteps | undefined } {
  return new RunContext(controller, progress, job, steps);
}

/** contextOf's context: its getter is the class's, where an object literal's made a closure a job. */
class RunContext implements HandlerContext {
  readonly #controller: AbortController;
  /** The job's steps once the handler read `step` (undefined until then). */
  steps: JobSteps | undefined;

  constructor(
    controller: AbortController,
    readonly progress: ProgressWriter,
    private readonly job: Job | undefined,
    private readonly host: StepHost | undefined,
  ) {
    this.#controller = controller;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get step(): Steps {
    if (!this.job) throw new StepError('context', "a BatchConsumer's handler has no steps: durable steps run one job at a time (a Consumer, the Worker, a serverless adapter)");
    this.steps ??= new JobSteps(this.job, this.host);
    return this.steps;
  }
}

/**
 * The outcome of a run whose steps suspended it (a sleep, a wait, an invoke), once the step
 * records it started have landed (a settle must not overtake them); undefined for a run that did
 * not suspend.
 */
async function suspensionOf(steps: JobSteps | undefined): Promise<Outcome | undefined> {
  if (!steps) return undefined;
  await steps.idle();
  return steps.suspension ? { kind: 'suspend', step: steps.suspension } : undefined;
}

/**
 * Runs `handler` on `job` and says how it ended: a resolve completes, its value the job's result
 * (see `completion`: a result that cannot be stored fails the job for good); a throw, a rejection
 * or running past `timeoutMs` (0 = no timeout) retries; UnrecoverableError fails for good. Never
 * throws: nothing a handler does escapes into the loop that called it. With `queue`, the run is a
 * `process <queue>` span when OpenTelemetry is there (README, "Telemetry"). `progress` writes the
 * handler's progress reports (default: checked, never written).
 */
export async function runHandler<Payload>(
  handler: Handler<Payload>,
  job: Job<Payload>,
  options: {
    controller: AbortController;
    timeoutMs?: number;
    onTimeout?: () => void;
    queue?: string;
    progress?: ProgressWriter;
    /** The largest result stored, in UTF-8 bytes of JSON (default 64 KiB). */
    maxResultBytes?: number;
    /** Where the job's durable steps are recorded (`Leases.steps`); without it a step is a StepError. */
    steps?: StepHost;
  },
): Promise<Outcome> {
  const timeoutMs = options.timeoutMs ?? 0;
  let timer: Timer | undefined;
  let context: ReturnType<typeof contextOf> | undefined;
  const span = options.queue === undefined ? undefined : startProcess(options.queue, job);
  try {
    // called now, not a microtask later: a caller that goes on to send its next claim would
    // otherwise hold the handler's start back by that whole send (a socket write)
    let run: unknown;
    context = contextOf(options.controller, options.progress, job as Job, options.steps);
    try {
      const ctx = context;
      run = span ? span.run(() => handler(job, ctx)) : handler(job, ctx);
    } catch (error) {
      run = Promise.reject(error);
    }
    let value: unknown;
    if (timeoutMs > 0) {
      const timeout = new Promise<never>((_, reject) => {
        timer = startTimer(() => {
          options.onTimeout?.();
          reject(timeoutErrorOf(timeoutMs, job.timeoutMs));
        }, timeoutMs);
      });
      value = await Promise.race([run, timeout]);
    } else {
      value = await run;
    }
    const suspended = await suspensionOf(context.steps);
    const outcome = suspended ?? (value === undefined ? COMPLETE : completion(value, options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES));
    span?.end(outcome, outcome.kind === 'complete' || outcome.kind === 'suspend' ? undefined : outcome.error);
    return outcome;
  } catch (error) {
    const outcome = (await suspensionOf(context?.steps)) ?? outcomeOf(error);
    span?.end(outcome, outcome.kind === 'suspend' ? undefined : error);
    return outcome;
  } finally {
    timer?.cancel();
  }
}
