import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { latencies, sleep, until } from '../lib/stats.js';

/**
 * `wake-latency`: one parked consumer (one slot, nothing to do); a job is enqueued and the time
 * from just before the enqueue call to the handler's start is one sample. Between samples the
 * consumer gets a few ms to finish and park again.
 */
export const wakeLatency: BenchCase = {
  name: 'wake-latency',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = ctx.quick ? 100 : 500;
    const name = benchQueueName('wake');
    const starts: number[] = [];
    const handler = async (): Promise<void> => {
      starts.push(performance.now());
    };
    let add: (i: number) => Promise<unknown>;
    let stop: () => Promise<void>;
    if (impl === 'echomq') {
      const producer = echoQueue(ctx, name);
      const worker = echoQueue(ctx, name);
      const consumer = new Consumer(worker.transport, worker.queue, handler, {}).start();
      add = (i) => producer.queue.add({ i });
      stop = async () => {
        await consumer.stop();
        await Promise.all([worker.transport.close(), producer.transport.close()]);
      };
    } else {
      const queue = bullQueue(ctx, name);
      const worker = bullWorker(ctx, name, handler);
      await worker.waitUntilReady();
      void worker.run();
      add = (i) => queue.add('job', { i });
      stop = async () => {
        await worker.close();
        await queue.close();
      };
    }
    const samples: number[] = [];
    await add(-1); // warm: connections up, scripts loaded
    await until(() => starts.length === 1, 5_000, 'the warm-up job');
    for (let i = 0; i < n; i++) {
      await sleep(3 + (i % 4)); // settled and parked again
      const t = performance.now();
      await add(i);
      await until(() => starts.length === i + 2, 5_000, `wake sample ${i}`, 0);
      samples.push(starts[i + 1]! - t);
    }
    await stop();
    return { n, ...latencies(samples) };
  },
};
