import { EmqError, shown } from '../../src/errors.js';

/** A broken promise of a fuzzer, by the name of its count in the scenario's result. */
export type FuzzFault = 'server_errors' | 'refused_requests_that_wrote' | 'hangs' | 'invariant_violations' | 'handles_leaked';

/** How one generated call ended within its time limit. */
export type Ended<T> = { readonly kind: 'resolved'; readonly value: T } | { readonly kind: 'threw'; readonly error: unknown } | { readonly kind: 'hung' };

/**
 * Runs `work` (a sync throw counts as a rejection) and says how it ended within `ms`: resolved,
 * threw, or hung. The timer is cleared either way, so a fuzzer leaves none behind.
 *
 * @example
 * const ended = await within(5_000, () => queue.add(payload, options));
 */
export async function within<T>(ms: number, work: () => Promise<T> | T): Promise<Ended<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Ended<T>>((resolve) => (timer = setTimeout(() => resolve({ kind: 'hung' }), ms)));
  try {
    return await Promise.race([
      Promise.resolve()
        .then(work)
        .then(
          (value): Ended<T> => ({ kind: 'resolved', value }),
          (error: unknown): Ended<T> => ({ kind: 'threw', error }),
        ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A thrown value as one line for a report: its class, code and message. */
export function describeError(error: unknown): string {
  if (error instanceof EmqError) return `${error.name} ${error.code}: ${error.message.split('\n')[0]}`;
  if (error instanceof Error) return `${error.name}: ${error.message.split('\n')[0]}`;
  return `thrown ${shown(error)}`;
}

/** A value as a short text for a report, whatever it is (a BigInt, a cycle, a symbol...): as an error message shows it. */
export function shortText(value: unknown): string {
  return shown(value).slice(0, 80);
}

/** How many faults a tally keeps a description of, for the report. */
const SAMPLES = 8;

/**
 * A fuzzer's counts: cases run per kind, typed refusals per error code, exit codes, and each broken promise
 * with the first few cases that broke it (what was called, and how it ended); with FUZZ_VERBOSE
 * set in the environment, every one of them is printed to stderr as it happens.
 *
 * @example
 * tally.ran('queue-call');
 * if (ended.kind === 'hung') tally.broke('hangs', `add(${shown}) took over 5 s`);
 */
export class FuzzTally {
  readonly cases: Record<string, number> = {};
  readonly refusals: Record<string, number> = {};
  readonly exits: Record<string, number> = {};
  readonly faults: Record<FuzzFault, number> = {
    server_errors: 0,
    refused_requests_that_wrote: 0,
    hangs: 0,
    invariant_violations: 0,
    handles_leaked: 0,
  };
  readonly samples: string[] = [];

  /** One case of `kind` ran. */
  ran(kind: string): void {
    this.cases[kind] = (this.cases[kind] ?? 0) + 1;
  }

  /** A typed refusal, by its code. */
  refused(code: string): void {
    this.refusals[code] = (this.refusals[code] ?? 0) + 1;
  }

  /** A command line's exit code. */
  exited(code: number): void {
    this.exits[code] = (this.exits[code] ?? 0) + 1;
  }

  /** A broken promise, with what broke it. */
  broke(fault: FuzzFault, what: string): void {
    this.faults[fault]++;
    if (process.env.FUZZ_VERBOSE) console.error(`${fault}: ${what}`.slice(0, 400));
    if (this.samples.length < SAMPLES) this.samples.push(`${fault}: ${what}`.slice(0, 400));
  }
}
