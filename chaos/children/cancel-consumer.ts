// A consumer process for the cancel-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (so it hears a running job's cancel
// at once, on the queue's cancel channel, and at its next lease renewal), the handler of
// chaos/lib/cancel-jobs.ts logging every run's start and end, and each onCancelled hook, in the
// run log the parent reads (a file: a restarted Redis neither loses nor replays a record).
import { Consumer } from '../../src/node/consumer/index.js';
import { CANCEL_QUEUE, type CancelPayload, cancelHandler } from '../lib/cancel-jobs.js';
import { RunLog } from '../lib/run-log.js';

const [url, logPath] = process.argv.slice(2);
const log = new RunLog(logPath!);
const consumer = Consumer.connect<CancelPayload>(url!, CANCEL_QUEUE, cancelHandler(log), {
  concurrency: 8,
  leaseMs: 1_000,
  beatMs: 500,
  log: false,
  queue: { keepCompletedMs: -1 },
  hooks: { onCancelled: (job) => log.append({ k: 'h', id: job.id, hook: 'cancelled', pid: process.pid, at: Date.now() }) },
}).start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
