import { QueueEvents } from 'bullmq';
import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { bullConnection, bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { latencies, sleep } from '../lib/stats.js';

/**
 * `wait-latency`: one parked consumer (one slot) whose handler returns a result; a producer
 * enqueues a job and waits for its outcome, and the time from just before the enqueue to the
 * waiter holding the result is one sample. echomq: `queue.addAndWait` (the enqueue, then a wait
 * parked on the events stream's XREAD BLOCK); BullMQ: `queue.add` then
 * `job.waitUntilFinished(queueEvents)`, its documented way, with the QueueEvents connected before
 * the first sample. Between samples a few ms so both sides are parked again. Both keep completed
 * jobs (an hour): BullMQ's waitUntilFinished fails with "Missing key" for a job removed as it
 * completes, and echomq's waiter reads a result too large for its event from the row.
 */
export const waitLatency: BenchCase = {
  name: 'wait-latency',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 500, quick: 100, smoke: 10 });
    const name = benchQueueName('wait');
    const handler = async (job: { data?: { i: number }; payload?: { i: number } }): Promise<{ i: number }> => ({
      i: (job.payload ?? job.data)!.i,
    });
    let addAndWait: (i: number) => Promise<unknown>;
    let stop: () => Promise<void>;
    if (impl === 'echomq') {
      const producer = echoQueue<{ i: number }>(ctx, name, { keepCompletedMs: 3_600_000 });
      const worker = echoQueue<{ i: number }>(ctx, name, { keepCompletedMs: 3_600_000 });
      const consumer = new Consumer(worker.transport, worker.queue, handler, {}).start();
      addAndWait = async (i) => (await producer.queue.addAndWait({ i }, { timeoutMs: 5_000 })).result;
      stop = async () => {
        await consumer.stop();
        await Promise.all([worker.transport.close(), producer.transport.close()]);
      };
    } else {
      const queue = bullQueue(ctx, name);
      const events = new QueueEvents(name, { connection: bullConnection(ctx) });
      await events.waitUntilReady();
      const worker = bullWorker(ctx, name, handler, { removeOnComplete: { age: 3_600 } });
      await worker.waitUntilReady();
      void worker.run();
      addAndWait = async (i) => (await queue.add('job', { i })).waitUntilFinished(events, 5_000);
      stop = async () => {
        await worker.close();
        await events.close();
        await queue.close();
      };
    }
    const samples: number[] = [];
    const first = (await addAndWait(-1)) as { i: number }; // warm: connections up, scripts loaded
    if (first.i !== -1) throw new Error(`wait-latency: the warm-up job's result was ${JSON.stringify(first)}`);
    for (let i = 0; i < n; i++) {
      await sleep(3 + (i % 4));
      const t = performance.now();
      const result = (await addAndWait(i)) as { i: number };
      samples.push(performance.now() - t);
      if (result.i !== i) throw new Error(`wait-latency: job ${i}'s result was ${JSON.stringify(result)}`);
    }
    await stop();
    return { n, ...latencies(samples, 3) };
  },
};
