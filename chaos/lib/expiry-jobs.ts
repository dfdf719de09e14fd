import type { Handler } from '../../src/handler.js';
import type { RunLog, RunStart } from './run-log.js';

/** The expiry-faults scenario's queue. */
export const EXPIRY_QUEUE = 'chaos-expiry';

/** The lease the scenario's consumers claim under, ms: a run's claim time is its `leaseUntil` less this. */
export const EXPIRY_LEASE_MS = 1_000;

/** A job of the scenario: how long a run works, and whether its first attempt fails. */
export interface ExpiryPayload {
  readonly n: number;
  /** How long a run works, ms, unless its signal aborts first. */
  readonly workMs: number;
  /** Fails its first attempt (after its work): retried after its backoff, often past its expiry. */
  readonly failOnce?: boolean;
}

/**
 * A run's start as the expiry handler logs it: a RunStart (its process's wall clock in `at`) and
 * its claim's time by the server's clock (`claimedAt`: the claim reply's `now`, which the job's
 * `leaseUntil` is that plus the lease). A claim answered again from its request key (its first
 * reply lost) carries the repeat's `now`: later than the claim, never earlier.
 */
export type ExpiryRunStart = RunStart & { readonly claimedAt: number };

/** What a completed job's result is: its n doubled. */
export const resultOf = (n: number): { n: number } => ({ n: n * 2 });

/** Resolves after `ms`, or as soon as `signal` aborts (at once when it has). */
function workFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The scenario's handler: logs the run's start in `log` before anything else (the job, its claim,
 * the process, the wall clock and the claim's server time), works `workMs` (stopping if the signal
 * aborts: its lease lost, and then throws the reason), fails a `failOnce` job's first attempt,
 * and returns its n doubled; logs the run's end.
 */
export function expiryHandler(log: RunLog): Handler<ExpiryPayload> {
  return async (job, { signal }) => {
    const { id, token, attempt } = job;
    const pid = process.pid;
    const start: ExpiryRunStart = { k: 's', id, token, attempt, pid, at: Date.now(), aborted: signal.aborted, claimedAt: job.leaseUntil - EXPIRY_LEASE_MS };
    log.append(start);
    const end = (outcome: string): void => log.append({ k: 'e', id, token, attempt, pid, at: Date.now(), outcome });
    try {
      const { n, workMs, failOnce } = job.payload;
      await workFor(workMs, signal);
      if (signal.aborted) throw signal.reason;
      if (failOnce && attempt < 2) throw new Error('chaos: fails its first attempt');
      end('returned');
      return resultOf(n);
    } catch (error) {
      end(`threw ${error instanceof Error ? error.name : typeof error}`);
      throw error;
    }
  };
}
