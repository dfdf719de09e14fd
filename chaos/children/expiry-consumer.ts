// A consumer process for the expiry-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (its beats, every 500 ms, sweep the
// queue's due expiries even while it is paused), the handler of chaos/lib/expiry-jobs.ts logging
// every run's start (wall clock and the claim's server time) and end in the run log the parent
// reads (a file: a restarted Redis neither loses nor replays a record).
import { EXPIRY_LEASE_MS, EXPIRY_QUEUE, type ExpiryPayload, expiryHandler } from '../lib/expiry-jobs.js';
import { runLoggedConsumer } from '../lib/logged-jobs.js';

runLoggedConsumer<ExpiryPayload>(EXPIRY_QUEUE, EXPIRY_LEASE_MS, expiryHandler);
