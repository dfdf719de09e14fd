import { QueueEvents } from 'bullmq';
import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized } from '../lib/context.js';
import { bullConnection, bullQueue, bullWorker, echoQueue, floorConnection } from '../lib/impls.js';
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
 *
 * The `floor` is the same four trips through Redis with nothing else on them: the producer
 * LPUSHes the job to a list a consumer connection is parked on with BLPOP (producer to Redis,
 * Redis to consumer), the consumer LPUSHes the result to a list the producer's waiting connection
 * is parked on (consumer to Redis, Redis to producer). A sample is from just before the LPUSH to
 * the result in JS. Connections made as echomq's are; the same samples, warm-up and pauses.
 */
export const waitLatency: BenchCase = {
  name: 'wait-latency',
  impls: ['echomq', 'bullmq', 'floor'],
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
    } else if (impl === 'floor') {
      ({ addAndWait, stop } = await pingPong(ctx, name));
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

/**
 * The floor: a consumer connection parked on BLPOP of `<key>:jobs` that LPUSHes what it pops to
 * `<key>:results` (from a connection of its own) and parks again; `addAndWait` LPUSHes `{i}` and
 * waits on a parked BLPOP of `<key>:results` for it. `stop` ends the loop (a last token it does not
 * answer) and closes the connections.
 */
async function pingPong(ctx: BenchContext, key: string): Promise<{ addAndWait: (i: number) => Promise<unknown>; stop: () => Promise<void> }> {
  const [parked, answer, pusher, waiter] = [floorConnection(ctx), floorConnection(ctx), floorConnection(ctx), floorConnection(ctx)];
  await Promise.all([parked, answer, pusher, waiter].map((c) => c.redis.ping()));
  const STOP = 'stop';
  const loop = (async () => {
    for (;;) {
      const reply = await parked.redis.blpop(`${key}:jobs`, 0);
      if (!reply || reply[1] === STOP) return;
      const job = JSON.parse(reply[1]) as { i: number };
      await answer.redis.lpush(`${key}:results`, JSON.stringify({ i: job.i }));
    }
  })();
  return {
    addAndWait: async (i) => {
      const [, popped] = await Promise.all([pusher.redis.lpush(`${key}:jobs`, JSON.stringify({ i })), waiter.redis.blpop(`${key}:results`, 5)]);
      if (!popped) throw new Error(`wait-latency floor: no result for ${i} in 5 s`);
      return JSON.parse(popped[1]) as { i: number };
    },
    stop: async () => {
      await pusher.redis.lpush(`${key}:jobs`, STOP);
      await loop;
      await Promise.all([parked, answer, pusher, waiter].map((c) => c.close()));
    },
  };
}
