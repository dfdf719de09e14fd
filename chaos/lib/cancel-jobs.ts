import { JobCancelledError, RateLimitedError, UnrecoverableError, type Handler } from '../../src/handler.js';
import { StepSuspended } from '../../src/steps/job-steps.js';
import { resultOf, workFor } from './logged-jobs.js';
import type { RunLog } from './run-log.js';

export { resultOf };

/** The cancel-faults scenario's queue. */
export const CANCEL_QUEUE = 'chaos-cancel';

/**
 * What a run does once its signal aborts with JobCancelledError, one per way a run's settle can
 * end (each must end the job cancelled, whatever it says): `throw` the reason (a retry), `return`
 * its result as if done (a complete), throw UnrecoverableError (a fail), throw RateLimitedError
 * (a release, the group held), or suspend at a durable sleep (a suspend).
 */
export const ON_ABORT = ['throw', 'return', 'unrecoverable', 'rate-limited', 'suspend'] as const;
export type OnAbort = (typeof ON_ABORT)[number];

/** A job of the scenario: how long a run works and what it does when told to stop. */
export interface CancelPayload {
  readonly n: number;
  /** How long a run works, ms, unless its signal aborts first. */
  readonly workMs: number;
  readonly onAbort: OnAbort;
  /** Fails its first attempt (after its work): retried after its backoff, so a cancel can find it scheduled. */
  readonly failOnce?: boolean;
  /** A durable sleep this long first (`step.sleep`): the job suspends, scheduled, and runs again after it. */
  readonly napMs?: number;
}

/**
 * The scenario's handler, logging each run's start (before anything else) and end in `log`: a
 * durable sleep first for the jobs that take one, then `workMs` of work that stops as soon as the
 * signal aborts. Told its job was cancelled (JobCancelledError), it stops at once and does what
 * its payload's `onAbort` says; aborted for another reason (its lease lost, the consumer
 * stopping), it throws that reason. A job that fails once throws on its first attempt after its
 * work. Else it returns its n doubled.
 */
export function cancelHandler(log: RunLog): Handler<CancelPayload> {
  return async (job, { signal, step }) => {
    const { id, token, attempt } = job;
    const pid = process.pid;
    let abortedAt: number | undefined;
    const heard = (): void => void (abortedAt = Date.now());
    log.append({ k: 's', id, token, attempt, pid, at: Date.now(), aborted: signal.aborted });
    if (signal.aborted) heard();
    else signal.addEventListener('abort', heard, { once: true });
    const end = (outcome: string): void => {
      const reason = signal.reason as unknown;
      const abortedBy = signal.aborted ? (reason instanceof Error ? reason.name : typeof reason) : undefined;
      log.append({ k: 'e', id, token, attempt, pid, at: Date.now(), outcome, ...(abortedBy ? { abortedBy, abortedAt } : {}) });
    };
    try {
      const { n, workMs, onAbort, failOnce, napMs } = job.payload;
      if (napMs !== undefined && !signal.aborted) await step.sleep('nap', napMs);
      await workFor(workMs, signal);
      if (signal.aborted) {
        const reason = signal.reason as unknown;
        if (!(reason instanceof JobCancelledError)) throw reason;
        switch (onAbort) {
          case 'throw':
            throw reason;
          case 'return':
            end('returned');
            return resultOf(n);
          case 'unrecoverable':
            throw new UnrecoverableError(`chaos: stopped, cancelled (${reason.reason})`);
          case 'rate-limited':
            throw new RateLimitedError(200, 'chaos: stopped, cancelled');
          case 'suspend':
            await step.sleep('after-cancel', 200);
            break;
        }
      }
      if (failOnce && attempt < 2) throw new Error('chaos: fails its first attempt');
      end('returned');
      return resultOf(n);
    } catch (error) {
      end(error instanceof StepSuspended ? 'suspended' : `threw ${error instanceof Error ? error.name : typeof error}`);
      throw error;
    } finally {
      signal.removeEventListener('abort', heard);
    }
  };
}
