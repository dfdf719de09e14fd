/**
 * Every timer the project arms from a computed time goes through here. setTimeout takes a delay
 * of at most 2^31-1 ms (24.8 days) on Node, in browsers, workerd, Deno and Bun; a longer one runs
 * after 1 ms (Node also prints a TimeoutOverflowWarning), so a consumer parked on a job due in 30
 * days would wake every millisecond. A timer here waits at most the cap at a time and re-arms from
 * a monotonic clock until its whole delay has passed.
 */

/** The longest delay setTimeout honours, in ms. */
export const TIMER_CAP_MS = 2 ** 31 - 1;

let capMs = TIMER_CAP_MS;

/**
 * Sets the longest stretch a timer waits before it re-arms (the default: TIMER_CAP_MS) and
 * returns a function that puts the previous one back. For tests: a short cap proves the re-arm
 * with a real clock.
 *
 * @example
 * const restore = setTimerCap(200);
 * try { ... } finally { restore(); }
 */
export function setTimerCap(ms: number): () => void {
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > TIMER_CAP_MS) throw new RangeError(`a timer cap is an integer from 1 to ${TIMER_CAP_MS}, got ${ms}`);
  const previous = capMs;
  capMs = ms;
  return () => {
    capMs = previous;
  };
}

/** An armed timer. */
export interface Timer {
  /** Disarms it: `fire` will not run (a no-op once it has). */
  cancel(): void;
}

/** Options of startTimer and sleep. */
export interface TimerOptions {
  /** Node only: the timer does not keep the process alive (ignored where timers have no unref). */
  readonly unref?: boolean;
}

type Handle = ReturnType<typeof setTimeout>;

function unrefOf(handle: Handle): void {
  const maybe = handle as unknown as { unref?: () => void };
  if (typeof maybe.unref === 'function') maybe.unref();
}

/**
 * Runs `fire` once `delayMs` has passed (a delay that is not a finite number above 0 runs it on the
 * next timer turn, Infinity never), whatever its length.
 *
 * @example
 * const timer = startTimer(() => void beat(), dueAt - now);
 * timer.cancel();
 */
export function startTimer(fire: () => void, delayMs: number, options: TimerOptions = {}): Timer {
  if (delayMs === Infinity) return { cancel: () => {} };
  const endAt = performance.now() + (delayMs > 0 ? delayMs : 0);
  let handle: Handle | undefined;
  const arm = (): void => {
    const left = endAt - performance.now();
    // whole ms up: a fraction is cut by the timer, which would fire before the delay has passed
    handle = left > capMs ? setTimeout(arm, capMs) : setTimeout(fire, Math.max(0, Math.ceil(left)));
    if (options.unref) unrefOf(handle);
  };
  arm();
  return { cancel: () => clearTimeout(handle) };
}

/**
 * Runs `fire` every `everyMs` until cancelled, whatever the interval's length.
 *
 * @example
 * const renewal = startInterval(() => void renew(), 10_000);
 * renewal.cancel();
 */
export function startInterval(fire: () => void, everyMs: number, options: TimerOptions = {}): Timer {
  if (everyMs <= capMs && everyMs >= 1) {
    const handle = setInterval(fire, everyMs);
    if (options.unref) unrefOf(handle);
    return { cancel: () => clearInterval(handle) };
  }
  let current: Timer | undefined;
  let cancelled = false;
  const next = (): void => {
    current = startTimer(() => {
      if (cancelled) return;
      next();
      fire();
    }, Math.max(1, everyMs), options);
  };
  next();
  return {
    cancel: () => {
      cancelled = true;
      current?.cancel();
    },
  };
}

/**
 * Resolves once `ms` has passed, at once when `signal` aborts (or already has).
 *
 * @example
 * await sleep(25 * 4 ** failures);
 */
export function sleep(ms: number, options: TimerOptions & { readonly signal?: AbortSignal } = {}): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = startTimer(done, ms, options);
    signal?.addEventListener('abort', done, { once: true });
  });
}
