import { createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { ConnectionError, Queue } from '../../src/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { freePort, startLocalRedis } from '../../src/node/local-redis.js';
import { passwordRedis, silentPort } from '../fixtures/unreachable.js';
import { queueName } from '../helpers.js';

/** What `act` rejected with, and after how long. */
async function failure(act: () => Promise<unknown>): Promise<{ error: ConnectionError; ms: number }> {
  const started = performance.now();
  try {
    await act();
  } catch (error) {
    return { error: error as ConnectionError, ms: performance.now() - started };
  }
  throw new Error('expected a rejection');
}

describe('a Redis that cannot be reached', () => {
  let silent: Awaited<ReturnType<typeof silentPort>>;
  let locked: Awaited<ReturnType<typeof passwordRedis>>;
  let closed: number;
  beforeAll(async () => {
    silent = await silentPort();
    locked = await passwordRedis('s3cret-never-shown');
    closed = await freePort();
  });
  afterAll(async () => {
    await silent.close();
    await locked.stop();
  });

  it('fails queue.add within connectTimeoutMs, naming the URL and the cause', async () => {
    const cases: Array<{ url: string; reason: string; shown: string; words: RegExp }> = [
      { url: `redis://127.0.0.1:${closed}`, reason: 'refused', shown: `redis://127.0.0.1:${closed}`, words: /within 600 ms: connection refused \(connect ECONNREFUSED/ },
      { url: `redis://127.0.0.1:${silent.port}`, reason: 'timeout', shown: `redis://127.0.0.1:${silent.port}`, words: /within 600 ms: no answer/ },
      { url: 'redis://nonexistent.invalid', reason: 'dns', shown: 'redis://nonexistent.invalid:6379', words: /within 600 ms: host name not found \(getaddrinfo ENOTFOUND/ },
    ];
    for (const { url, reason, shown, words } of cases) {
      const transport = IoredisTransport.connect(url, { connectTimeoutMs: 600 });
      try {
        const { error, ms } = await failure(() => new Queue(transport, queueName()).add({ to: 'a@example.com' }));
        expect(error, url).toBeInstanceOf(ConnectionError);
        expect(error).toMatchObject({ code: 'EMQREDIS', status: 503, reason, url: shown });
        expect(error.message).toContain(`cannot reach Redis at ${shown}`);
        expect(error.message).toMatch(words);
        expect(ms, url).toBeGreaterThanOrEqual(550);
        expect(ms, url).toBeLessThan(1_500);
      } finally {
        await transport.close();
      }
    }
  });

  it('fails at once on refused credentials, naming the URL without its password', async () => {
    for (const [url, shown, said] of [
      [`redis://127.0.0.1:${locked.port}`, `redis://127.0.0.1:${locked.port}`, /NOAUTH/],
      [`redis://:wrong-password@127.0.0.1:${locked.port}`, `redis://:***@127.0.0.1:${locked.port}`, /WRONGPASS/],
      [`redis://default:wrong-password@127.0.0.1:${locked.port}`, `redis://default:***@127.0.0.1:${locked.port}`, /WRONGPASS/],
    ] as const) {
      const transport = IoredisTransport.connect(url, { connectTimeoutMs: 5_000 });
      try {
        const { error, ms } = await failure(() => new Queue(transport, queueName()).stats());
        expect(error).toBeInstanceOf(ConnectionError);
        expect(error).toMatchObject({ reason: 'auth', url: shown });
        expect(error.message).toMatch(new RegExp(`^cannot reach Redis at ${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: authentication failed`));
        expect(error.message).toMatch(said);
        expect(error.message).not.toContain('wrong-password');
        expect(ms).toBeLessThan(1_000); // not the 5 s: retrying cannot mend a password
      } finally {
        await transport.close();
      }
    }
    // the right password connects
    const transport = IoredisTransport.connect(`redis://:s3cret-never-shown@127.0.0.1:${locked.port}`);
    await expect(new Queue(transport, queueName()).stats()).resolves.toMatchObject({ paused: false });
    await transport.close();
  });

  it('fails at once on a TLS handshake that cannot succeed', async () => {
    // a plain-text server: the TLS client reads its banner as a record with a wrong version
    const sockets: Socket[] = [];
    const plain = createServer((socket) => sockets.push(socket.end('+OK not TLS\r\n')));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const port = (plain.address() as { port: number }).port;
    const transport = IoredisTransport.connect(`rediss://127.0.0.1:${port}`, { connectTimeoutMs: 5_000 });
    try {
      const { error, ms } = await failure(() => transport.ping());
      expect(error).toMatchObject({ reason: 'tls', url: `rediss://127.0.0.1:${port}` });
      expect(error.message).toMatch(/: TLS failed \(/);
      expect(ms).toBeLessThan(1_000);
    } finally {
      await transport.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('answers once Redis is up when it comes up within the wait', async () => {
    const port = await freePort();
    const transport = IoredisTransport.connect(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 5_000 });
    const stats = new Queue(transport, queueName()).stats();
    const redis = await startLocalRedis({ env: { PATH: process.env.PATH }, port });
    try {
      await expect(stats).resolves.toMatchObject({ counts: { pending: 0 } });
    } finally {
      await transport.close();
      await redis.stop();
    }
  });

  it('after a lost connection, fails requests within connectTimeoutMs with the URL, and answers again once it is back', async () => {
    const port = await freePort();
    const env = { PATH: process.env.PATH };
    let redis = await startLocalRedis({ env, port });
    const transport = IoredisTransport.connect(redis.url, { connectTimeoutMs: 700 });
    const queue = new Queue(transport, queueName());
    try {
      await queue.add('before');
      await redis.stop();
      const { error, ms } = await failure(() => queue.add('during'));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error.message).toMatch(new RegExp(`^cannot reach Redis at redis://127\\.0\\.0\\.1:${port} within 700 ms: connection lost, then connection refused`));
      expect(ms).toBeLessThan(1_500);
      expect(error.message).not.toMatch(/max retries per request/);

      redis = await startLocalRedis({ env, port });
      await expect(queue.stats()).resolves.toMatchObject({ counts: { pending: 0 } }); // a fresh server
    } finally {
      await transport.close();
      await redis.stop();
    }
  });

  it('fails a request on a closed transport at once, saying so', async () => {
    const transport = IoredisTransport.connect(`redis://127.0.0.1:${closed}`, { connectTimeoutMs: 5_000 });
    await transport.close();
    const { error, ms } = await failure(() => transport.ping());
    expect(error).toMatchObject({ reason: 'closed' });
    expect(ms).toBeLessThan(200);
  });

  it('words the Upstash transport\'s failures the same way', async () => {
    const transport = UpstashTransport.connect({ url: `http://127.0.0.1:${closed}`, token: 'never-shown', retry: false });
    const { error } = await failure(() => new Queue(transport, queueName()).stats());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ reason: 'refused', url: `http://127.0.0.1:${closed}` });
    expect(error.message).toMatch(new RegExp(`^cannot reach Redis at http://127\\.0\\.0\\.1:${closed}: connection refused \\(`));
    const stalled = UpstashTransport.connect({ url: `http://127.0.0.1:${silent.port}`, token: 'never-shown', timeoutMs: 300 });
    const timedOut = await failure(() => stalled.ping());
    expect(timedOut.error).toMatchObject({ reason: 'timeout' });
    expect(timedOut.error.message).toMatch(/within 300 ms: no answer/);
  });
});
