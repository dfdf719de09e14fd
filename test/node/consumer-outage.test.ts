import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { freePort, startLocalRedis } from '../../src/node/local-redis.js';
import { sleep, until } from '../helpers.js';

describe('the consumer when Redis goes away', () => {
  it('backs off without spinning or crashing, and resumes when Redis is back', async () => {
    const port = await freePort();
    const env = { PATH: process.env.PATH };
    let server = await startLocalRedis({ env, port });
    const url = server.url;
    const errors: number[] = [];
    const done: string[] = [];
    const consumer = Consumer.connect(url, 'outage', (job) => void done.push(job.id), {
      beatMs: 1_000,
      hooks: { onError: () => errors.push(performance.now()) },
    }).start();
    const producer = IoredisTransport.connect(url, { maxRetriesPerRequest: 0 });
    const queue = new Queue(producer, 'outage');
    try {
      await queue.add('before');
      for (let i = 0; i < 200 && done.length < 1; i++) await sleep(10);
      expect(done).toEqual(['JOB:1']);

      await server.stop();
      await sleep(2_000);
      // 100 ms doubling: a handful of errors in 2 s, not a spin of thousands
      expect(errors.length).toBeLessThan(40);
      expect(consumer.running).toBe(true);

      server = await startLocalRedis({ env, port });
      for (let i = 0; i < 300; i++) {
        try {
          await queue.add('after'); // the restarted Redis is empty: this is JOB:1 again
          break;
        } catch {
          await sleep(20);
        }
      }
      for (let i = 0; i < 1_000 && done.length < 2; i++) await sleep(10);
      // the handler's start is seen before its settle is recorded (one more round trip, longer
      // under load): wait for the record, then check it ran once and completed once
      await until(async () => (await queue.stats()).counts.completed >= 1, 5_000);
      expect(done).toEqual(['JOB:1', 'JOB:1']);
      expect((await queue.stats()).counts).toMatchObject({ completed: 1, pending: 0, active: 0 });
    } finally {
      await consumer.stop(1_000);
      await producer.close();
      await server.stop();
    }
  }, 30_000);
});
