import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { CLOSE_GRACE_MS, serveApi } from '../../src/node/cli/serve.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { queueName, until, useRedis } from '../helpers.js';

const quiet = (): void => {};

/** The events routes on Node beyond the contract: the shared parked reader, and the bounded mode the Worker runs in. */
describe('the events routes on Node', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function serve(options: Parameters<typeof serveApi>[0] extends infer O ? Omit<O & object, 'transport'> : never = {}) {
    const name = `sse-${randomBytes(4).toString('hex')}`;
    const transport = IoredisTransport.connect(url, { connectionName: name });
    const api = await serveApi({ transport, port: 0, log: quiet, ...options });
    closing.push(async () => {
      await api.close();
      await transport.close();
    });
    return { api, name };
  }

  async function parkedReads(name: string): Promise<number> {
    const list = (await redis.raw.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `) && line.includes(' cmd=xread')).length;
  }

  /** Opens the SSE route; `text()` is what arrived so far, `close()` drops the connection. */
  async function open(at: string): Promise<{ text: () => string; close: () => void; ended: Promise<void> }> {
    const stop = new AbortController();
    const res = await fetch(at, { signal: stop.signal });
    expect(res.status).toBe(200);
    let text = '';
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const ended = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // dropped
      }
    })();
    return { text: () => text, close: () => stop.abort(), ended };
  }

  it('a closing server cuts an SSE stream still open after CLOSE_GRACE_MS, so its close is bounded', async () => {
    const name = `sse-${randomBytes(4).toString('hex')}`;
    const transport = IoredisTransport.connect(url, { connectionName: name });
    closing.push(() => transport.close());
    const api = await serveApi({ transport, port: 0, log: quiet });
    const client = await open(`${api.url}/v1/queues/${queueName('sse-close')}/events/stream`);
    await until(async () => (await parkedReads(name)) === 1);
    const began = performance.now();
    await api.close();
    const took = performance.now() - began;
    // the stream held the connection: the close waited the grace, then cut it (and the client saw its end)
    expect(took).toBeGreaterThanOrEqual(CLOSE_GRACE_MS - 50);
    await client.ended;
  }, 30_000);

  it('SSE clients and ?wait requests of a queue park on one shared XREAD BLOCK, gone once they all leave; events arrive live', async () => {
    const { api, name } = await serve();
    const queue = queueName('sse');
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue}}:*`)), 'none')));
    const clients = await Promise.all(Array.from({ length: 5 }, () => open(`${api.url}/v1/queues/${queue}/events/stream`)));
    await until(async () => (await parkedReads(name)) === 1);
    const waits = Array.from({ length: 5 }, (_, i) =>
      fetch(`${api.url}/v1/queues/${queue}/jobs?wait=300`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: i }) }),
    );
    await until(() => clients.every((c) => (c.text().match(/event: events/g) ?? []).length >= 5));
    expect(await parkedReads(name)).toBe(1);
    expect((await Promise.all(waits)).map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    for (const client of clients) client.close();
    await Promise.all(clients.map((c) => c.ended));
    await until(async () => (await parkedReads(name)) === 0);
  });

  it('in the bounded mode (the Worker’s) an SSE response closes after streamMs, with a heartbeat while silent, and ?wait is cut to maxWaitMs', async () => {
    const { api, name } = await serve({ streaming: { streamMs: 300, maxWaitMs: 100, pollMs: 20, heartbeatMs: 50 } });
    const queue = queueName('sse');
    closing.push(async () => void (await redis.raw.del(...(await redis.raw.keys(`emq:{${queue}}:*`)), 'none')));
    const started = performance.now();
    const client = await open(`${api.url}/v1/queues/${queue}/events/stream?after=0`);
    const res = await fetch(`${api.url}/v1/queues/${queue}/jobs?wait=30000`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: 1 }) });
    expect(res.status).toBe(202);
    await client.ended;
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(client.text()).toContain('"event":"added"');
    // silent stretches carry a comment line, which an EventSource ignores
    expect(client.text()).toContain('\n: keep-alive\n\n');
    // the wait's shared read ends once it has had no subscriber for its linger (2 s)
    await until(async () => (await parkedReads(name)) === 0);
  });
});
