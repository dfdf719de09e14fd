import { performance } from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { freePort, startLocalRedis } from '../../src/node/local-redis.js';
import { silentPort } from '../fixtures/unreachable.js';
import { queueName, sleep, until } from '../helpers.js';

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

  it('says so once each: connected, lost (with the cause), back, whatever fails meanwhile', async () => {
    const port = await freePort();
    const env = { PATH: process.env.PATH };
    let server = await startLocalRedis({ env, port });
    const url = server.url;
    const lines: string[] = [];
    const errors: unknown[] = [];
    const name = queueName('outage');
    const consumer = Consumer.connect(url, name, () => {}, {
      beatMs: 300,
      connectTimeoutMs: 500,
      log: (line) => lines.push(line),
      hooks: { onError: (error) => errors.push(error) },
    }).start();
    try {
      await until(() => lines.length >= 1);
      expect(lines).toEqual([`consumer of ${name}: connected to ${url}`]);

      await server.stop(); // the test's own redis-server, by its PID
      await sleep(3_000); // many failed beats and parks meanwhile
      expect(errors.length).toBeGreaterThan(2);
      expect(lines).toHaveLength(2);
      expect(lines[1]!.startsWith(`consumer of ${name}: lost ${url}: cannot reach Redis at ${url}`), lines[1]).toBe(true);
      expect(lines[1]).toMatch(/: connection lost.*; retrying until it answers$/);
      expect(lines[1]).not.toMatch(/max retries per request/);

      server = await startLocalRedis({ env, port });
      await until(() => lines.length >= 3, 10_000);
      expect(lines[2]!.startsWith(`consumer of ${name}: ${url} is back after `), lines[2]).toBe(true);
      expect(lines[2]).toMatch(/ after \d+\.\d s$/);
      await sleep(500);
      expect(lines).toHaveLength(3);
    } finally {
      await consumer.stop(1_000);
      await server.stop();
    }
  }, 30_000);

  it('reports a Redis it cannot reach at start within connectTimeoutMs, once, and connects when it comes up', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const lines: Array<{ line: string; at: number }> = [];
    const started = performance.now();
    const consumer = Consumer.connect(url, queueName(), () => {}, {
      beatMs: 300,
      connectTimeoutMs: 400,
      log: (line) => lines.push({ line, at: performance.now() - started }),
    }).start();
    let server: Awaited<ReturnType<typeof startLocalRedis>> | undefined;
    try {
      await until(() => lines.length >= 1, 2_000);
      expect(lines[0]!.line).toContain(`: cannot reach Redis at ${url} within 400 ms: connection refused (connect ECONNREFUSED 127.0.0.1:${port}); retrying until it answers`);
      expect(lines[0]!.at).toBeLessThan(1_000);
      await sleep(1_500);
      expect(lines).toHaveLength(1);

      server = await startLocalRedis({ env: { PATH: process.env.PATH }, port });
      await until(() => lines.length >= 2, 10_000);
      expect(lines[1]!.line).toContain(`: connected to ${url} after `);
    } finally {
      await consumer.stop(1_000);
      await server?.stop();
    }
  });

  it('reports a port that accepts and never answers as no answer, and logs to stderr when no log is given', async () => {
    const silent = await silentPort();
    const errorLines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errorLines.push(String(line)));
    const consumer = Consumer.connect(`redis://127.0.0.1:${silent.port}`, queueName(), () => {}, { connectTimeoutMs: 400 }).start();
    try {
      await until(() => errorLines.length >= 1, 2_000);
      expect(errorLines[0]!.startsWith('[emq] consumer of '), errorLines[0]).toBe(true);
      expect(errorLines[0]).toContain(`: cannot reach Redis at redis://127.0.0.1:${silent.port} within 400 ms: no answer`);
    } finally {
      spy.mockRestore();
      await consumer.stop(1_000);
      await silent.close();
    }
  });
});
