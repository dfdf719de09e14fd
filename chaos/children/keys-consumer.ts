// A consumer process for the keys-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (a beat every 500 ms: its reaper ends
// a killed consumer's runs once their 1 s leases lapse, giving their keys' slots back), the handler
// of chaos/lib/keys-jobs.ts logging every run's start and end in the run log the parent reads (a
// file: a restarted Redis neither loses nor replays a record).
import { Consumer } from '../../src/node/consumer/index.js';
import { KEYS_LEASE_MS, KEYS_QUEUE, type KeysPayload, keysHandler } from '../lib/keys-jobs.js';
import { RunLog } from '../lib/run-log.js';

const [url, logPath] = process.argv.slice(2);
const consumer = Consumer.connect<KeysPayload>(url!, KEYS_QUEUE, keysHandler(new RunLog(logPath!)), {
  concurrency: 8,
  leaseMs: KEYS_LEASE_MS,
  beatMs: 500,
  log: false,
  queue: { keepCompletedMs: -1 },
}).start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
