import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { InvalidNameError } from '../../src/errors.js';
import { createApp } from '../../src/http/app.js';
import { QueueCache } from '../../src/http/queue-cache.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Reply, ScriptCall, Transport } from '../../src/transport.js';
import { queueName } from '../helpers.js';

/** Passes every call on and counts, by script name, the script calls Redis ran. */
class CountingTransport implements Transport {
  readonly calls = new Map<string, number>();

  constructor(private readonly inner: Transport) {}

  private count(calls: readonly ScriptCall[], replies: Array<Reply | Error>): Array<Reply | Error> {
    calls.forEach(({ script }, i) => {
      // a NOSCRIPT reply did not run: runScripts sends that call again by EVAL
      if (!(replies[i] instanceof Error && replies[i].message.startsWith('NOSCRIPT'))) this.calls.set(script.name, (this.calls.get(script.name) ?? 0) + 1);
    });
    return replies;
  }

  async evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.count(calls, await this.inner.evalsha(calls));
  }

  async eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.count(calls, await this.inner.eval(calls));
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A transport whose registry is empty: the cache reads it once per name, and builds Queues, which touch nothing. */
const idle = (): Transport => ({
  evalsha: (calls) => Promise.resolve(calls.map(() => [[], []])),
  eval: (calls) => Promise.resolve(calls.map(() => [[], []])),
  ping: () => Promise.reject(new Error('not called')),
  close: () => Promise.resolve(),
});

describe('the HTTP app keeps one Queue per transport and queue name', () => {
  let raw: Redis;
  let inner: IoredisTransport;
  const made: string[] = [];

  beforeAll(() => {
    raw = new Redis(inject('redisUrl'));
    inner = IoredisTransport.connect(inject('redisUrl'));
  });
  afterAll(async () => {
    for (const name of made) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
      await raw.srem('emq:queues', name);
    }
    await inner.close();
    raw.disconnect();
  });

  it('registers a queue name once however many enqueue requests follow', async () => {
    const counted = new CountingTransport(inner);
    const app = createApp({ transport: () => counted, log: () => {} });
    const queue = queueName('cache');
    made.push(queue);
    const post = (path: string, body: unknown) =>
      app.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

    expect((await post(`/v1/queues/${queue}/jobs`, { payload: 1 })).status).toBe(201);
    expect((await post(`/v1/queues/${queue}/jobs`, { payload: 2 })).status).toBe(201);
    expect((await post(`/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 3 }, { payload: 4 }] })).status).toBe(201);

    expect(counted.calls.get('registerQueue')).toBe(1);
    expect(counted.calls.get('enqueue')).toBe(3);
    expect(await raw.sismember('emq:queues', queue)).toBe(1);
  });

  it('keeps at most `max` names per transport, dropping the least recently used', async () => {
    const cache = new QueueCache(undefined, 2);
    const transport = idle();
    const a = await cache.get(transport, 'a');
    const b = await cache.get(transport, 'b');
    expect(await cache.get(transport, 'a')).toBe(a); // a is now the most recent
    await cache.get(transport, 'c'); // over the cap: b goes
    expect(await cache.get(transport, 'a')).toBe(a);
    expect(await cache.get(transport, 'b')).not.toBe(b);
  });

  it('keeps transports apart; a bad name throws', async () => {
    const cache = new QueueCache();
    const one = idle();
    const two = idle();
    expect(await cache.get(one, 'q')).not.toBe(await cache.get(two, 'q'));
    expect(await cache.get(one, 'q')).toBe(await cache.get(one, 'q'));
    await expect(cache.get(one, 'bad name')).rejects.toThrow(InvalidNameError);
  });
});
