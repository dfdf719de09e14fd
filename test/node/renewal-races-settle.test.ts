import { describe, expect, inject, it } from 'vitest';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { until, useRedis } from '../helpers.js';

/**
 * A renewal goes out on the consumer's connection while the settle of the same job rides behind
 * the park's BLPOP on the other: Redis may run the settle first and the renewal after (it finds
 * the lease ended), and the renewal's reply may be read first. The settle's outcome stands: a
 * completed job is reported completed only, never also fenced.
 */
describe('a renewal that races its job\'s settle', () => {
  const redis = useRedis();

  it('never reports a completed job as fenced (renewals every 2 ms over 1,500 jobs)', async () => {
    const queue = redis.queue<number>({ keepCompletedMs: -1 });
    const completed = new Set<string>();
    const fencedAfterCompleted: string[] = [];
    const consumer = new Consumer<number>(
      IoredisTransport.connect(inject('redisUrl')),
      queue.name,
      () => new Promise((resolve) => setTimeout(resolve, 3)),
      {
        concurrency: 10,
        leaseMs: 30_000,
        renewMs: 2,
        hooks: {
          onCompleted: (job) => void completed.add(`${job.id}|${job.token}`),
          onFenced: (job) => void (completed.has(`${job.id}|${job.token}`) && fencedAfterCompleted.push(job.id)),
        },
      },
    ).start();
    try {
      for (let i = 0; i < 1_500; i += 500) await queue.addBulk(Array.from({ length: 500 }, (_, j) => ({ payload: i + j })));
      // Redis records the last completions a moment before their replies reach the hooks: wait for both
      await until(async () => completed.size === 1_500 && (await queue.stats()).counts.completed === 1_500, 60_000);
      expect(fencedAfterCompleted).toEqual([]);
    } finally {
      await consumer.stop();
    }
  });
});
