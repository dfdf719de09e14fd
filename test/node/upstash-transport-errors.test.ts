import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/edge/index.js';
import { scripts } from '../../src/generated/scripts.js';
import { Queue, RedisError } from '../../src/index.js';
import { startBridge, type RunningBridge } from '../../src/node/bridge/index.js';
import { queueName } from '../helpers.js';

const TOKEN = 'secret-token-never-in-a-message';

/** A local HTTP server answering every request with `answer` (or never, when it does nothing). */
async function serverThat(answer: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A port nothing listens on: one the system gave out and took back. */
async function closedPort(): Promise<string> {
  const { url, server } = await serverThat(() => {});
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

/** What a call through the transport rejected with, and how long it took. */
async function failure(act: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await act();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('expected a rejection');
}

const call = { script: scripts.counts, keys: ['emq:{x}:meta'], args: [] };

describe('UpstashTransport when Redis does not answer', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('fails a request that gets no answer at its timeout with EMQREDIS, naming the endpoint and not the token', async () => {
    const { url, server } = await serverThat(() => {}); // reads the request, never answers
    servers.push(server);
    const transport = UpstashTransport.connect({ url, token: TOKEN, timeoutMs: 300 });
    for (const act of [() => transport.evalsha([call]), () => transport.eval([call]), () => transport.ping()]) {
      const { error, ms } = await failure(act);
      expect(error).toBeInstanceOf(RedisError);
      expect(error).toMatchObject({ code: 'EMQREDIS', status: 503 });
      expect((error as Error).message).toContain(url);
      expect((error as Error).message).toMatch(/TimeoutError/);
      expect((error as Error).message).not.toContain(TOKEN);
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(2_000);
    }
    // through the core too: what the HTTP layer maps to 503
    await expect(new Queue(transport, queueName('stalled')).stats()).rejects.toMatchObject({ code: 'EMQREDIS' });
  });

  it('bounds the client\'s own retries by the timeout', async () => {
    // a refused connection: the client retries 5 times, backing off about 4.3 s in all
    const transport = UpstashTransport.connect({ url: await closedPort(), token: TOKEN, timeoutMs: 500 });
    const { error, ms } = await failure(() => transport.evalsha([call]));
    expect(error).toMatchObject({ code: 'EMQREDIS' });
    // the deadline passes in a backoff pause (50, 136, 369 ms...): the next try fails at once
    expect(ms).toBeLessThan(500 + 1_100);
  });

  it('turns a refused connection into EMQREDIS with its reason', async () => {
    const url = await closedPort();
    const transport = UpstashTransport.connect({ url, token: TOKEN, retry: false });
    const { error } = await failure(() => transport.evalsha([call]));
    expect(error).toBeInstanceOf(RedisError);
    expect((error as Error).message).toContain(url);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('turns an HTTP error status into EMQREDIS, without the request body in the message', async () => {
    for (const [status, body] of [
      [500, JSON.stringify({ error: 'ERR upstream is down' })],
      [502, '<html>bad gateway</html>'],
      [401, JSON.stringify({ error: 'Unauthorized' })],
    ] as const) {
      const { url, server } = await serverThat((res) => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body));
      servers.push(server);
      const transport = UpstashTransport.connect({ url, token: TOKEN, retry: false });
      const payload = `a payload that must stay out of logs ${status}`;
      const { error } = await failure(() => transport.evalsha([{ ...call, args: [payload] }]));
      expect(error, String(status)).toBeInstanceOf(RedisError);
      expect((error as Error).message).toContain(url);
      expect((error as Error).message).not.toContain(payload);
      expect((error as Error).message).not.toContain(TOKEN);
    }
  });

  it('names no credentials a URL carries', async () => {
    const { url, server } = await serverThat((res) => res.writeHead(503).end('{"error":"busy"}'));
    servers.push(server);
    const port = new URL(url).port;
    const transport = UpstashTransport.connect({ url: `http://user:pass-in-url@127.0.0.1:${port}/?_token=query-token`, token: TOKEN, retry: false });
    const { error } = await failure(() => transport.ping());
    expect(error).toBeInstanceOf(RedisError);
    expect((error as Error).message).toContain(`http://127.0.0.1:${port}`);
    expect((error as Error).message).not.toMatch(/pass-in-url|query-token/);
  });
});

describe('UpstashTransport when Redis answers with an error', () => {
  let bridge: RunningBridge;
  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token: TOKEN });
  });
  afterAll(async () => {
    await bridge.close();
  });

  it('keeps a Redis error reply as that call\'s Error value, beside the other calls\' replies', async () => {
    const transport = UpstashTransport.connect({ url: bridge.url, token: TOKEN });
    const refusing = { script: { ...scripts.counts, lua: "return redis.error_reply('EMQARG refused on purpose')" }, keys: call.keys, args: [] };
    const answering = { script: { ...scripts.counts, lua: "return 'fine'" }, keys: call.keys, args: [] };
    const [bad, good] = await transport.eval([refusing, answering]);
    expect(bad).toBeInstanceOf(Error);
    expect(bad).not.toBeInstanceOf(RedisError);
    expect((bad as Error).message).toMatch(/^EMQARG refused on purpose/);
    expect(good).toBe('fine');
  });
});
