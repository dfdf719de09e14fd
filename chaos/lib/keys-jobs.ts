import { type Handler, UnrecoverableError } from '../../src/handler.js';
import { type ClaimedRunStart, resultOf, workFor } from './logged-jobs.js';
import type { RunLog } from './run-log.js';

export { resultOf };

/** The keys-faults scenario's queue. */
export const KEYS_QUEUE = 'chaos-keys';

/** The lease the scenario's consumers claim under, ms (renewed every third of it while a run goes on). */
export const KEYS_LEASE_MS = 1_000;

/** A job of the scenario: how long a run works, and how it fails when it is meant to. */
export interface KeysPayload {
  readonly n: number;
  /** How long a run works, ms, unless its signal aborts first (a long one outlives several leases). */
  readonly workMs: number;
  /** Fails its first attempt (after its work): retried after its backoff, and completes. */
  readonly failOnce?: boolean;
  /** Fails for good (UnrecoverableError, after its work): dead by design, its keys given back. */
  readonly failForGood?: boolean;
}

/** A run's start as the keys handler logs it (see ClaimedRunStart). */
export type KeysRunStart = ClaimedRunStart;

/** The error a job meant to fail for good dies with. */
export const FAILS_FOR_GOOD = 'chaos: fails for good';

/**
 * The scenario's handler: logs the run's start in `log` before anything else (the job, its claim,
 * the process, the wall clock and the claim's server time), works `workMs` (stopping if the signal
 * aborts: its lease lost, and then throws the reason), fails a `failOnce` job's first attempt and
 * every attempt of a `failForGood` one (UnrecoverableError), else returns its n doubled; logs the
 * run's end before the handler returns or throws (so before its settle).
 */
export function keysHandler(log: RunLog): Handler<KeysPayload> {
  return async (job, { signal }) => {
    const { id, token, attempt } = job;
    const pid = process.pid;
    const start: KeysRunStart = { k: 's', id, token, attempt, pid, at: Date.now(), aborted: signal.aborted, claimedAt: job.leaseUntil - KEYS_LEASE_MS };
    log.append(start);
    const end = (outcome: string): void => {
      const reason = signal.reason as unknown;
      const abortedBy = signal.aborted ? (reason instanceof Error ? reason.name : typeof reason) : undefined;
      log.append({ k: 'e', id, token, attempt, pid, at: Date.now(), outcome, ...(abortedBy ? { abortedBy } : {}) });
    };
    try {
      const { n, workMs, failOnce, failForGood } = job.payload;
      await workFor(workMs, signal);
      if (signal.aborted) throw signal.reason;
      if (failForGood) throw new UnrecoverableError(FAILS_FOR_GOOD);
      if (failOnce && attempt < 2) throw new Error('chaos: fails its first attempt');
      end('returned');
      return resultOf(n);
    } catch (error) {
      end(`threw ${error instanceof Error ? error.name : typeof error}`);
      throw error;
    }
  };
}
