import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue, floorConnection } from '../lib/impls.js';
import { latencies, sleep, until } from '../lib/stats.js';

/**
 * `wake-latency`: one parked consumer (one slot, nothing to do); a job is enqueued and the time
 * from just before the enqueue call to the handler's start is one sample. Between samples the
 * consumer gets a few ms to finish and park again.
 *
 * The `floor` is the doorbell alone: one connection parked on a BLPOP of a key, re-parked as soon
 * as its reply arrives; another LPUSHes a token, and a sample is from just before the LPUSH to
 * the BLPOP's reply arriving in JS. Connections made as echomq's are; the same samples, warm-up
 * and pauses.
 */
export const wakeLatency: BenchCase = {
  name: 'wake-latency',
  impls: ['echomq', 'bullmq', 'floor'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const n = sized(ctx, { full: 500, quick: 100, smoke: 10 });
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
    } else if (impl === 'floor') {
      ({ add, stop } = await parkedPop(ctx, name, handler));
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
    return { n, ...latencies(samples, 3) };
  },
};

/**
 * The floor: a loop parked on BLPOP of `key` that calls `onReply` as each reply arrives and parks
 * again at once, and `add`, an LPUSH of a token from a second connection. `stop` ends the loop
 * (a last token it does not count) and closes both connections.
 */
async function parkedPop(
  ctx: BenchContext,
  key: string,
  onReply: () => Promise<void>,
): Promise<{ add: (i: number) => Promise<unknown>; stop: () => Promise<void> }> {
  const parked = floorConnection(ctx);
  const pusher = floorConnection(ctx);
  await Promise.all([parked.redis.ping(), pusher.redis.ping()]);
  const STOP = 'stop';
  const loop = (async () => {
    for (;;) {
      const reply = await parked.redis.blpop(key, 0);
      if (reply?.[1] === STOP) return;
      await onReply();
    }
  })();
  return {
    add: () => pusher.redis.lpush(key, '1'),
    stop: async () => {
      await pusher.redis.lpush(key, STOP);
      await loop;
      await Promise.all([parked.close(), pusher.close()]);
    },
  };
}
