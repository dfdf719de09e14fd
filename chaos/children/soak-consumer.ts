// A consumer in a child process for the soak scenario (chaos/scenarios/soak.ts), run with
// --expose-gc. It consumes from the soak's own Redis (which the parent kills and restarts) and
// keeps its records in another, the run's shared Redis (never killed), so the records survive a
// restart and add nothing to the queue's keyspace:
// - `<track>:runs`, hash `<id>|<token>` -> runs: each handler run, counted before it works (a token
//   run twice would be two holders of one attempt);
// - `<track>:ok`, hash id -> n: a handler run that returned (the job's complete was sent);
// - `<track>:died`, set of ids: a `revive` job's first run, which fails for good (its reprocess
//   then completes).
// A line `sample` on stdin answers one line `mem {"rss":..,"heapUsed":..}` on stdout, after a
// full GC when the process has one, so the parent reads memory that is live, not garbage.
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { RetryAfterError, UnrecoverableError } from '../../src/handler.js';
import { Consumer } from '../../src/node/consumer/index.js';

/** A soak job: `ms` of work, and how it fails on purpose. */
export interface SoakPayload {
  readonly n: number;
  readonly ms: number;
  /** retry: fails its first attempt; later: asks to run again in 50 ms; dead: fails for good; revive: fails for good once. */
  readonly kind?: 'retry' | 'later' | 'dead' | 'revive';
}

const [queueUrl, queue, trackUrl, track, keepCompletedMs] = process.argv.slice(2);
const tracker = new Redis(trackUrl!);
const consumer = Consumer.connect<SoakPayload>(
  queueUrl!,
  queue!,
  async (job) => {
    await tracker.hincrby(`${track}:runs`, `${job.id}|${job.token}`, 1);
    await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
    const kind = job.payload.kind;
    if (kind === 'dead') throw new UnrecoverableError('soak: fails for good');
    if (kind === 'revive' && (await tracker.sadd(`${track}:died`, job.id)) === 1) throw new UnrecoverableError('soak: fails for good once');
    if (kind === 'retry' && job.attempt < 2) throw new Error('soak: fails its first attempt');
    if (kind === 'later' && job.attempt < 2) throw new RetryAfterError('soak: later', 50);
    await tracker.hset(`${track}:ok`, job.id, job.payload.n);
  },
  { concurrency: 8, leaseMs: 1_000, beatMs: 500, queue: { keepCompletedMs: Number(keepCompletedMs) } },
).start();

const gc = (globalThis as { gc?: () => void }).gc;
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'sample') return;
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`mem ${JSON.stringify({ rss, heapUsed })}\n`);
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => void consumer.stop().then(() => process.exit(0)));
