// A consumer in a child process for the chaos scenarios, killed by its parent (SIGKILL by PID) at
// random: each handler run records its attempt (job id and lease token) in Redis before it works,
// so the parent can tell a re-run (a new token) from two holders of one attempt (the same token);
// a run that completes returns the payload's n doubled, the result the parent checks on the row.
import { Redis } from 'ioredis';
import { RetryAfterError, UnrecoverableError } from '../../src/handler.js';
import { Consumer } from '../../src/node/consumer/index.js';

const [url, queue, runsKey] = process.argv.slice(2);
const redis = new Redis(url!);
const consumer = Consumer.connect<{ n: number; ms: number; fail?: 'retry' | 'dead' | 'later' }>(
  url!,
  queue!,
  async (job) => {
    await redis.hincrby(runsKey!, `${job.id}|${job.token}`, 1);
    await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
    if (job.payload.fail === 'dead') throw new UnrecoverableError('chaos: fails for good');
    if (job.payload.fail === 'retry' && job.attempt < 2) throw new Error('chaos: fails its first attempt');
    if (job.payload.fail === 'later' && job.attempt < 2) throw new RetryAfterError('chaos: later', 50);
    return { n: job.payload.n * 2 };
  },
  { concurrency: 8, leaseMs: 1_000, beatMs: 500, queue: { keepCompletedMs: -1 } },
).start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
