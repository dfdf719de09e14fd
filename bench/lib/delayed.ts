import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchContext, benchQueueName, type Figures, type Impl } from './context.js';
import { bullQueue, bullWorker, echoQueue } from './impls.js';
import { latencies, sleep, until } from './stats.js';

/** A delayed case: `n` jobs due `dueInMs` after they are added, added in `ticks` equal batches `everyMs` apart. */
export interface DelayedSpec {
  readonly n: number;
  readonly dueInMs: number;
  readonly ticks: number;
  readonly everyMs: number;
  readonly concurrency: number;
}

/**
 * Lateness of delayed jobs: each job's due time is fixed by the bench (wall clock, which Redis
 * TIME also reads on this machine), and lateness = handler start minus due time. The consumer
 * runs (parked) before the first job is added.
 */
export async function delayedLateness(ctx: BenchContext, impl: Impl, spec: DelayedSpec): Promise<Figures> {
  const name = benchQueueName('delayed');
  const lateness: number[] = [];
  const handler = async (job: { due: number }): Promise<void> => {
    lateness.push(Date.now() - job.due);
  };
  let addBatch: (due: number, count: number) => Promise<unknown>;
  let stop: () => Promise<void>;
  if (impl === 'echomq') {
    const producer = echoQueue(ctx, name);
    const worker = echoQueue<{ due: number }>(ctx, name);
    const consumer = new Consumer<{ due: number }>(worker.transport, worker.queue, (job) => handler(job.payload), {
      concurrency: spec.concurrency,
    }).start();
    addBatch = (due, count) =>
      producer.queue.addBulk(Array.from({ length: count }, () => ({ payload: { due }, runAt: due })));
    stop = async () => {
      await consumer.stop();
      await Promise.all([worker.transport.close(), producer.transport.close()]);
    };
  } else {
    const queue = bullQueue(ctx, name);
    const worker = bullWorker(ctx, name, async (job) => handler(job.data as { due: number }), { concurrency: spec.concurrency });
    await worker.waitUntilReady();
    void worker.run();
    addBatch = async (due, count) => {
      // BullMQ's due time is the job's timestamp plus its delay: give it both so it is `due` exactly
      const now = Date.now();
      const opts = { timestamp: now, delay: Math.max(0, due - now) };
      for (let from = 0; from < count; from += 1000) {
        await queue.addBulk(Array.from({ length: Math.min(1000, count - from) }, () => ({ name: 'job', data: { due }, opts })));
      }
    };
    stop = async () => {
      await worker.close();
      await queue.close();
    };
  }
  await sleep(300); // the consumer is up and parked
  const perTick = Math.ceil(spec.n / spec.ticks);
  const t0 = Date.now();
  const adds: Array<Promise<unknown>> = [];
  for (let k = 0, added = 0; added < spec.n; k++) {
    const wait = t0 + k * spec.everyMs - Date.now();
    if (wait > 0) await sleep(wait);
    const count = Math.min(perTick, spec.n - added);
    adds.push(addBatch(Date.now() + spec.dueInMs, count));
    added += count;
  }
  await Promise.all(adds);
  await until(() => lateness.length >= spec.n, 30_000, `${spec.n} delayed jobs`);
  await stop();
  return { n: spec.n, ...latencies(lateness) };
}
