import { afterEach, describe, expect, inject, it } from 'vitest';
import { JobTimeoutError } from '../../src/handler.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { checkInvariants } from '../invariants.js';
import { sleep, until, useRedis } from '../helpers.js';

/**
 * A job's own timeout on the parked Node consumer (`EnqueueOptions.timeoutMs`): it overrides the
 * consumer's (none here), aborts the handler's signal with JobTimeoutError at the deadline, and the
 * attempt fails as a retry; a handler that ignores its signal finishes later, and its result is
 * not recorded (the run was settled as a retry at the deadline).
 */
describe('a job’s own timeout on the parked consumer', () => {
  const redis = useRedis();
  const running: Array<Consumer<never>> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(2_000)));
  });

  it('aborts at the job’s deadline with JobTimeoutError and retries; a handler that ignores it has its result dropped', async () => {
    const queue = redis.queue<{ obey: boolean }>();
    const reasons: unknown[] = [];
    let ignoredFinished = 0;
    const consumer = new Consumer<{ obey: boolean }>(
      IoredisTransport.connect(inject('redisUrl')),
      queue.name,
      async (job, { signal }) => {
        if (job.attempt > 1) return 'second try';
        if (job.payload.obey) {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          reasons.push(signal.reason);
          throw signal.reason;
        }
        await sleep(400);
        ignoredFinished++;
        return 'too late';
      },
      { concurrency: 4, ownsTransport: true, beatMs: 10_000 },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    const obeys = await queue.add({ obey: true }, { timeoutMs: 150, backoff: 0 });
    const ignores = await queue.add({ obey: false }, { timeoutMs: 150, backoff: 0 });
    const untimed = await queue.add({ obey: false });
    await until(async () => (await Promise.all([obeys.id, ignores.id, untimed.id].map((id) => queue.getJob(id)))).every((j) => j?.state === 'completed'), 5_000);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(JobTimeoutError);
    expect((await queue.getJob(obeys.id))!).toMatchObject({ result: 'second try', attemptsStarted: 2 });
    expect((await queue.getJob(ignores.id))!).toMatchObject({ result: 'second try', attemptsStarted: 2 });
    // the job without a timeout of its own ran to its end under the consumer's (none)
    expect((await queue.getJob(untimed.id))!).toMatchObject({ result: 'too late', attemptsStarted: 1 });
    await until(() => ignoredFinished >= 2, 3_000);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
