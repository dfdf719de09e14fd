import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, inject, it } from 'vitest';
import { InvalidNameError, type Job, Queue } from '../../src/index.js';
import { BatchConsumer, Consumer, connectQueue, IoredisTransport } from '../../src/node/index.js';
import { queueName, until, useRedis } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');

/** The ioredis status of the transport under a Queue (end: closed). */
const statusOf = (queue: Pick<Queue<unknown>, 'transport'>): string => (queue.transport as IoredisTransport).redis.status;

describe('connecting and closing', () => {
  const redis = useRedis();
  const url = inject('redisUrl');

  it('connectQueue: `await using` closes the connection it opened at the end of the block', async () => {
    const name = queueName();
    let queue: Queue<{ to: string }> | undefined;
    {
      await using mail = connectQueue<{ to: string }>(url, name);
      queue = mail;
      await mail.add({ to: 'a@example.com' });
      expect(statusOf(mail)).toBe('ready');
    }
    expect(statusOf(queue)).toBe('end');
    await expect(queue.add({ to: 'b@example.com' })).rejects.toMatchObject({ code: 'EMQREDIS', reason: 'closed' });
    await queue.close(); // harmless twice
    expect((await redis.queue({ name }).stats()).counts.pending).toBe(1);
  });

  it('a producer process exits on its own once its queue is closed', async () => {
    const name = queueName();
    redis.queue({ name }); // cleaned up after
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/producer-exits.ts', url, name], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    expect(out.trim()).toBe('JOB:1');
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it('queue.close() leaves a transport it was given open: that one is the caller\'s', async () => {
    const transport = IoredisTransport.connect(url);
    try {
      {
        await using queue = new Queue(transport, queueName());
        await queue.stats();
      }
      expect(transport.redis.status).toBe('ready');
      await transport.ping();
    } finally {
      await transport.close();
    }
  });

  it('connectQueue closes what it opened when the name is bad', () => {
    expect(() => connectQueue(url, 'bad name')).toThrow(InvalidNameError);
    expect(() => connectQueue(url, 'q', { connectTimeoutMs: 0 })).toThrow(/connectTimeoutMs must be an integer >= 1/);
  });

  it('Consumer.connect and BatchConsumer.connect: `await using` stops the consumer and closes its connection', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    const seen: number[] = [];
    let consumers: Array<Consumer<number> | BatchConsumer<number>> = [];
    {
      await using single = Consumer.connect<number>(url, queue.name, (job: Job<number>) => void seen.push(job.payload), { log: false }).start();
      await using batch = BatchConsumer.connect<number>(url, queue.name, async (jobs) => void jobs.forEach((j) => seen.push(j.payload)), { batchSize: 2, log: false }).start();
      consumers = [single, batch];
      await until(async () => (await queue.stats()).counts.completed === 3);
    }
    expect(seen.sort()).toEqual([1, 2, 3]);
    for (const consumer of consumers) {
      expect(consumer.running).toBe(false);
      expect(statusOf(consumer.queue)).toBe('end');
    }
  });
});
