import type { Handler } from '../../src/handler.js';
import { type ClaimedRunStart, resultOf, workFor } from './logged-jobs.js';
import type { RunLog } from './run-log.js';

export { resultOf };

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

/** A run's start as the expiry handler logs it (see ClaimedRunStart). */
export type ExpiryRunStart = ClaimedRunStart;

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
