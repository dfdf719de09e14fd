/**
 * The job controls' part of `npm start` (docs/guides/job-controls.md): a job with a timeout of its
 * own beside one without, on the `timeouts` queue and a Node consumer that has none. The first's
 * handler is aborted at its 200 ms with JobTimeoutError (one attempt: it dies); the second runs
 * its second to the end.
 */
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
