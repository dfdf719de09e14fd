// A consumer process for the cancel-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (so it hears a running job's cancel
// at once, on the queue's cancel channel, and at its next lease renewal), the handler of
// chaos/lib/cancel-jobs.ts logging every run's start and end, and each onCancelled hook, in the
// run log the parent reads (a file: a restarted Redis neither loses nor replays a record).
import { CANCEL_QUEUE, type CancelPayload, cancelHandler } from '../lib/cancel-jobs.js';
import { runLoggedConsumer } from '../lib/logged-jobs.js';

runLoggedConsumer<CancelPayload>(CANCEL_QUEUE, 1_000, cancelHandler, (log) => ({
  onCancelled: (job) => log.append({ k: 'h', id: job.id, hook: 'cancelled', pid: process.pid, at: Date.now() }),
}));
