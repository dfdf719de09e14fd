// A consumer process for the expiry-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (its beats, every 500 ms, sweep the
// queue's due expiries even while it is paused), the handler of chaos/lib/expiry-jobs.ts logging
// every run's start (wall clock and the claim's server time) and end in the run log the parent
// reads (a file: a restarted Redis neither loses nor replays a record).
import { Consumer } from '../../src/node/consumer/index.js';
import { EXPIRY_LEASE_MS, EXPIRY_QUEUE, type ExpiryPayload, expiryHandler } from '../lib/expiry-jobs.js';
import { RunLog } from '../lib/run-log.js';

const [url, logPath] = process.argv.slice(2);
const consumer = Consumer.connect<ExpiryPayload>(url!, EXPIRY_QUEUE, expiryHandler(new RunLog(logPath!)), {
  concurrency: 8,
  leaseMs: EXPIRY_LEASE_MS,
  beatMs: 500,
  log: false,
  queue: { keepCompletedMs: -1 },
}).start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
