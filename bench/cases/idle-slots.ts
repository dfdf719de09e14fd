import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized, startMeter } from '../lib/context.js';
import { echoQueue, groupQueue, groupWorker } from '../lib/impls.js';
import { latch, round, sleep, until } from '../lib/stats.js';

const SLOTS = 10;

/**
 * `idle-slots`: one long job holds one of ten slots, nothing else is there to claim. Redis
 * commands per second over the window (INFO commandstats delta), with each implementation's
 * default lease and beat: what an idle consumer costs its Redis.
 */
export const idleSlots: BenchCase = {
  name: 'idle-slots',
  impls: ['echomq', 'groupmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const windowMs = sized(ctx, { full: 10_000, quick: 3_000, smoke: 500 });
    const name = benchQueueName('idle');
    const release = latch();
    let running = false;
    const longJob = async (): Promise<void> => {
      running = true;
      await release.promise;
    };
    let stop: () => Promise<void>;
    if (impl === 'echomq') {
      const { transport, queue } = echoQueue(ctx, name);
      const consumer = new Consumer(transport, queue, longJob, { concurrency: SLOTS }).start();
      await queue.add({ long: true });
      stop = async () => {
        release.resolve();
        await consumer.stop();
        await transport.close();
      };
    } else {
      const { redis, queue } = groupQueue(ctx, name);
      const worker = groupWorker(queue, longJob, SLOTS);
      await queue.add({ groupId: 'long', data: { long: true } });
      stop = async () => {
        release.resolve();
        await worker.close();
        await queue.close();
        redis.disconnect();
      };
    }
    await until(() => running, 10_000, 'the long job to start');
    await sleep(200); // settled: the other slots have looked and found nothing
    const meter = await startMeter(ctx);
    await sleep(windowMs);
    const m = await meter.stop();
    await stop();
    return { window_ms: windowMs, commands_per_s: round(m.commands / (m.ms / 1000), 1) };
  },
};
