import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Handler } from '../../src/handler.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { checkInvariants } from '../invariants.js';
import { until, useRedis } from '../helpers.js';

/**
 * Durable steps on the parked Node consumer (docs/design/steps.md): with a 10 s beat, a sleep
 * resumes on its due time and a wait times out on its deadline, woken by the schedule bell and the
 * next due time the scripts answer, not by a beat; an event resumes a waiter at once through the
 * doorbell; the hook says where each run parked.
 */
describe('durable steps on the parked consumer', () => {
  const redis = useRedis();
  const running: Array<Consumer<never>> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  function consume<P>(queue: string, handler: Handler<P>, parked: string[]): Consumer<P> {
    const consumer = new Consumer<P>(IoredisTransport.connect(inject('redisUrl')), queue, handler, {
      beatMs: 10_000,
      concurrency: 10,
      ownsTransport: true,
      hooks: { onSuspended: (job, { step, state }) => parked.push(`${job.id} ${step} ${state}`) },
    }).start();
    running.push(consumer as unknown as Consumer<never>);
    return consumer;
  }

  it('resumes a sleep on its due time, times a wait out on its deadline, and resumes a waiter on its event at once', async () => {
    const queue = redis.queue<{ wait: boolean }>();
    const times: Record<string, number> = {};
    const parked: string[] = [];
    consume<{ wait: boolean }>(
      queue.name,
      async (job, { step }) => {
        await step.sleep('nap', 300);
        times[`${job.id} woke`] ??= Date.now();
        const got = await step.waitForEvent('go', { event: 'go', match: { id: job.id }, timeoutMs: job.payload.wait ? 400 : 60_000 });
        times[`${job.id} went on`] ??= Date.now();
        return got;
      },
      parked,
    );
    const timesOut = await queue.add({ wait: true });
    const gets = await queue.add({ wait: false });
    await until(async () => (await queue.getJob(gets.id))?.state === 'awaiting', 5_000);
    const sent = Date.now();
    expect(await queue.sendEvent('go', { id: gets.id })).toMatchObject({ resumed: 1 });
    await until(async () => (await queue.getJob(gets.id))?.state === 'completed', 3_000);
    await until(async () => (await queue.getJob(timesOut.id))?.state === 'completed', 5_000);
    const slept = (await queue.getJob(timesOut.id))!.steps![0]!;
    // woken by its due time, well before the 10 s beat; never before it
    expect(times[`${timesOut.id} woke`]! - slept.until!).toBeLessThan(1_000);
    expect(slept.finishedAt!).toBeGreaterThanOrEqual(slept.until!);
    const wait = (await queue.getJob(timesOut.id))!.steps![1]!;
    expect(wait).toMatchObject({ state: 'timed-out' });
    expect(times[`${timesOut.id} went on`]! - wait.until!).toBeLessThan(1_000);
    expect(times[`${gets.id} went on`]! - sent).toBeLessThan(1_000);
    expect((await queue.getJob(gets.id))!.result).toEqual({ id: gets.id });
    expect((await queue.getJob(timesOut.id))!.result).toBeNull();
    expect(parked).toEqual(expect.arrayContaining([`${timesOut.id} nap scheduled`, `${timesOut.id} go awaiting`, `${gets.id} go awaiting`]));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
