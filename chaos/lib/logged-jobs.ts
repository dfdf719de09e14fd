import type { Handler } from '../../src/handler.js';
import { Consumer, type ConsumerHooks } from '../../src/node/consumer/index.js';
import { RunLog, type RunStart } from './run-log.js';

/**
 * What the jobs of the run-logged scenarios share (cancel-faults, expiry-faults, keys-faults:
 * chaos/lib/cancel-jobs.ts, expiry-jobs.ts, keys-jobs.ts): work that stops when a run's signal
 * aborts, a completed job's result, a run start with its claim's server time, and the consumer
 * process (chaos/children/) that runs them and logs every run in the file the parent reads.
 */

/** What a completed job's result is: its n doubled. */
export const resultOf = (n: number): { n: number } => ({ n: n * 2 });

/** Resolves after `ms`, or as soon as `signal` aborts (at once when it has). */
export function workFor(ms: number, signal: AbortSignal): Promise<void> {
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
 * A run's start as a handler that knows its lease logs it: a RunStart (its process's wall clock in
 * `at`) and its claim's time by the server's clock (`claimedAt`: the claim reply's `now`, which the
 * job's `leaseUntil` is that plus the lease). A claim answered again from its request key (its
 * first reply lost) carries the repeat's `now`: later than the claim, never earlier.
 */
export type ClaimedRunStart = RunStart & { readonly claimedAt: number };

/**
 * The body of a consumer process (chaos/children/), killed by its parent (SIGKILL by PID) at
 * random: reads the Redis URL and the run log's path from its arguments, runs one Consumer of
 * `queue` over ioredis (8 at a time, a beat every 500 ms, completed jobs kept) with the handler
 * `handlerOf` makes over the run log (and the hooks `hooksOf` makes, if any), prints `ready`, and
 * stops on SIGTERM.
 */
export function runLoggedConsumer<P>(queue: string, leaseMs: number, handlerOf: (log: RunLog) => Handler<P>, hooksOf?: (log: RunLog) => ConsumerHooks<P>): void {
  const [url, logPath] = process.argv.slice(2);
  const log = new RunLog(logPath!);
  const consumer = Consumer.connect<P>(url!, queue, handlerOf(log), {
    concurrency: 8,
    leaseMs,
    beatMs: 500,
    log: false,
    queue: { keepCompletedMs: -1 },
    ...(hooksOf ? { hooks: hooksOf(log) } : {}),
  }).start();
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
}
