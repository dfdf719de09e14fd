/**
 * `npm start`: the whole system on this machine. A Redis (REDIS_URL, else a private
 * redis-server), a parked Node consumer with an example handler, and a producer that enqueues a
 * visible mix: grouped jobs under a limit, delayed jobs, a job that fails once then succeeds, and
 * one that ends dead. Progress is printed as it happens; Ctrl-C ends everything cleanly.
 * `--once` exits when the mix is done (the smoke test uses it).
 */
import { performance } from 'node:perf_hooks';
import { Queue, UnrecoverableError, type Job } from '../src/index.js';
import { Consumer, IoredisTransport, startLocalRedis } from '../src/node/index.js';

type DemoJob = { kind: 'email' | 'report' | 'flaky' | 'doomed' | 'reminder'; to: string };

const once = process.argv.includes('--once');
const t0 = performance.now();
const say = (line: string): void => console.log(`${((performance.now() - t0) / 1000).toFixed(2).padStart(6)}s  ${line}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function handle(job: Job<DemoJob>): Promise<void> {
  await sleep(50 + Math.floor(Math.random() * 150));
  if (job.payload.kind === 'flaky' && job.attempts === 1) throw new Error('the mail server hung up (first try only)');
  if (job.payload.kind === 'doomed') {
    if (job.attempts < job.maxAttempts) throw new Error(`no such mailbox (attempt ${job.attempts})`);
    throw new UnrecoverableError('no such mailbox: giving up');
  }
}

async function main(): Promise<void> {
  let redis;
  try {
    redis = await startLocalRedis({ log: say });
  } catch (error) {
    console.error(`npm start: ${(error as Error).message}`);
    process.exit(1);
  }
  const transport = IoredisTransport.connect(redis.url);
  const queue = new Queue<DemoJob>(transport, 'demo', { defaults: { backoff: { type: 'fixed', delayMs: 300 } } });
  if (redis.pid !== undefined) {
    // our private server: start from a clean queue (never on a Redis named by REDIS_URL)
    for (const key of await transport.redis.keys('emq:{demo}:*')) await transport.redis.del(key);
  }
  await queue.pause(); // hold work until the whole mix is in, so the output shows the limits at work

  const consumer = Consumer.connect<DemoJob>(redis.url, 'demo', handle, {
    concurrency: 4,
    queue: { defaults: { backoff: { type: 'fixed', delayMs: 300 } } },
    hooks: {
      onStarted: (job) => say(`start    ${job.id} ${job.payload.kind} ${job.group ?? '(no group)'} attempt ${job.attempts}`),
      onCompleted: (job, { durationMs }) => say(`done     ${job.id} in ${durationMs.toFixed(0)} ms`),
      onRetried: (job, { error }) => say(`retry    ${job.id}: ${error.split('\n')[0]}`),
      onDead: (job, { error }) => say(`dead     ${job.id}: ${error.split('\n')[0]}`),
      onError: (error) => say(`redis    ${(error as Error).message}`),
    },
  }).start();

  const jobs = [
    ...Array.from({ length: 8 }, (_, i) => ({ payload: { kind: 'email', to: `a${i}@tenant-a.test` } as DemoJob, options: { group: 'tenant-a' } })),
    ...Array.from({ length: 4 }, (_, i) => ({ payload: { kind: 'email', to: `b${i}@tenant-b.test` } as DemoJob, options: { group: 'tenant-b' } })),
    ...[1000, 2000, 3000].map((delayMs, i) => ({ payload: { kind: 'reminder', to: `r${i}@later.test` } as DemoJob, options: { delayMs } })),
    { payload: { kind: 'report', to: 'ops@example.test' } as DemoJob, options: {} },
    { payload: { kind: 'flaky', to: 'flaky@example.test' } as DemoJob, options: {} },
    { payload: { kind: 'doomed', to: 'nobody@example.test' } as DemoJob, options: { maxAttempts: 3 } },
  ];
  await queue.setGroupLimit('tenant-a', 2);
  await queue.addBulk(jobs);
  await queue.resume();
  say(`enqueued ${jobs.length} jobs on queue "demo": tenant-a (limit 2), tenant-b, 3 delayed, 1 flaky, 1 doomed`);

  let stopping = false;
  const stop = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await consumer.stop(2_000);
    await transport.close();
    await redis.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  for (;;) {
    await sleep(1000);
    const { counts } = await queue.stats();
    say(`counts   ${JSON.stringify(counts)}`);
    if (counts.pending + counts.scheduled + counts.active === 0 && counts.completed + counts.dead === jobs.length) break;
  }
  say('the mix is done: 17 completed, 1 dead (see above)');
  if (once) return stop(0);
  say(`still consuming "demo" on ${redis.url}; try: REDIS_URL=${redis.url} npx emq enqueue demo '{"kind":"email","to":"you@example.test"}'`);
  say('Ctrl-C stops everything');
}

void main();
