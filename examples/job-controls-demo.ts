/**
 * The job controls' part of `npm start` (docs/guides/job-controls.md). Timeouts: a job with a
 * timeout of its own beside one without, on the `timeouts` queue and a Node consumer that has none.
 * The first's handler is aborted at its 200 ms with JobTimeoutError (one attempt: it dies); the
 * second runs its second to the end. Cancel and expiry, on the `controls` queue: a running job
 * cancelled (its handler's signal aborts with JobCancelledError within milliseconds, it ends
 * cancelled), a pending one cancelled at once, and one whose expiry came before a consumer could
 * start it (dead, EMQEXPIRED). Concurrency keys, on the `reports` queue: a key's limit and rate
 * holding one organisation's jobs across its users' groups while another's run.
 */
import { performance } from 'node:perf_hooks';
import { JobCancelledError } from '../src/handler.js';
import { Consumer } from '../src/node/index.js';
import { Queue } from '../src/queue/queue.js';
import type { BlockingTransport, Transport } from '../src/transport.js';

/** What the demo needs of the stack. */
export interface TimeoutDemo {
  readonly transport: Transport;
  readonly consumerTransport: BlockingTransport;
  readonly say: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the two jobs to their end; resolves with the line that says how each went. */
export async function runTimeoutDemo(demo: TimeoutDemo): Promise<string> {
  const queue = new Queue<{ workMs: number }>(demo.transport, 'timeouts');
  const consumer = new Consumer<{ workMs: number }>(
    demo.consumerTransport,
    'timeouts',
    async (job, { signal }) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, job.payload.workMs);
        signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)));
      });
      return { worked: job.payload.workMs };
    },
    { concurrency: 2, ownsTransport: true },
  ).start();
  try {
    const timed = await queue.add({ workMs: 1_000 }, { timeoutMs: 200, maxAttempts: 1 });
    const untimed = await queue.add({ workMs: 1_000 });
    const over = async (id: string): Promise<boolean> => ['completed', 'dead'].includes((await queue.getJob(id))?.state ?? '');
    for (let i = 0; i < 100 && !((await over(timed.id)) && (await over(untimed.id))); i++) await sleep(100);
    const a = (await queue.getJob(timed.id))!;
    const b = (await queue.getJob(untimed.id))!;
    return `timeouts: ${a.id} (its own timeoutMs 200) ${a.state}: ${a.error?.split('\n')[0] ?? ''}; ${b.id} (the consumer's, none) ${b.state} with ${JSON.stringify(b.result)}`;
  } finally {
    await consumer.stop(2_000);
  }
}

/** Cancels a running job and a pending one, and lets a third expire; resolves with the line that says how each went. */
export async function runCancelDemo(demo: TimeoutDemo): Promise<string> {
  const queue = new Queue<string>(demo.transport, 'controls');
  // a job not started within 100 ms expires: added before any consumer runs
  const expiring = await queue.add('too late', { expireAfterMs: 100 });
  await sleep(150);
  let aborted: { reason: unknown; at: number } | undefined;
  let started = false;
  const consumer = new Consumer<string>(
    demo.consumerTransport,
    'controls',
    async (job, { signal }) => {
      if (job.payload !== 'long') return 'done';
      started = true;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      aborted = { reason: signal.reason, at: performance.now() };
      throw signal.reason;
    },
    { concurrency: 1, ownsTransport: true },
  ).start();
  try {
    const long = await queue.add('long');
    const waiting = await queue.add('waiting');
    for (let i = 0; i < 100 && !started; i++) await sleep(20);
    const pending = await queue.cancel(waiting.id, { reason: 'not needed' });
    const sentAt = performance.now();
    const running = await queue.cancel(long.id, { reason: 'the user left' });
    for (let i = 0; i < 100 && (await queue.getJob(long.id))?.state !== 'cancelled'; i++) await sleep(20);
    const reason = aborted?.reason instanceof JobCancelledError ? `JobCancelledError (${aborted.reason.reason}) after ${Math.round(aborted.at - sentAt)} ms` : 'no abort';
    const expired = (await queue.getJob(expiring.id))!;
    return [
      `cancel: ${long.id} ${running.state} -> ${(await queue.getJob(long.id))?.state}, its handler aborted with ${reason};`,
      `${waiting.id} ${pending.state} before it started; expiry: ${expired.id} ${expired.state}: ${expired.error?.split(' (')[0] ?? ''}`,
    ].join(' ');
  } finally {
    await consumer.stop(2_000);
  }
}

/**
 * Concurrency keys, on the `reports` queue: org 7's jobs, spread over four users' groups, under a
 * limit of 2 running at once and a rate of 4 starts a second; org 8's jobs beside them are not
 * held back. Resolves with the line that says what the handlers saw.
 */
export async function runKeysDemo(demo: TimeoutDemo): Promise<string> {
  const queue = new Queue<{ org: string }>(demo.transport, 'reports');
  await queue.setKeyLimit('org:7', 2);
  await queue.setKeyRateLimit('org:7', { limit: 4, periodMs: 1_000 });
  // each job's start as the rate counts it: its claim's server time (its lease's end less the lease)
  const starts: Record<string, number[]> = { 'org:7': [], 'org:8': [] };
  const leaseMs = 30_000;
  let running = 0;
  let most = 0;
  const consumer = new Consumer<{ org: string }>(
    demo.consumerTransport,
    'reports',
    async (job) => {
      starts[job.payload.org]!.push(job.leaseUntil - leaseMs);
      if (job.payload.org === 'org:7') most = Math.max(most, ++running);
      await sleep(100);
      if (job.payload.org === 'org:7') running--;
    },
    { concurrency: 8, leaseMs, ownsTransport: true },
  ).start();
  try {
    const began = Date.now();
    for (let i = 0; i < 8; i++) await queue.add({ org: 'org:7' }, { group: `user-${i % 4}`, keys: ['org:7'] });
    for (let i = 0; i < 2; i++) await queue.add({ org: 'org:8' }, { group: `user-${10 + i}`, keys: ['org:8'] });
    for (let i = 0; i < 100 && starts['org:7']!.length + starts['org:8']!.length < 10; i++) await sleep(50);
    const seven = starts['org:7']!;
    const inAnySecond = Math.max(...seven.map((t) => seven.filter((s) => s > t - 1_000 && s <= t).length));
    const eight = Math.round(Math.max(...starts['org:8']!) - began);
    return `keys: org:7 (limit 2, 4 starts a second) ran its ${seven.length} jobs at most ${most} at once and ${inAnySecond} in any second, over ${((Math.max(...seven) - began) / 1_000).toFixed(1)} s; org:8's ${starts['org:8']!.length} started within ${eight} ms`;
  } finally {
    await consumer.stop(2_000);
  }
}
