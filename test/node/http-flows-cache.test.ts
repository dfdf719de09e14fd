import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../src/http/app.js';
import { FlowsCache } from '../../src/http/flows-cache.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Reply, ScriptCall, Transport } from '../../src/transport.js';
import { queueName } from '../helpers.js';

/** Passes every call on and counts, by script name, the script calls Redis ran (a NOSCRIPT reply did not run: it is sent again by EVAL). */
function counting(inner: Transport): Transport & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const count = async (sent: readonly ScriptCall[], replying: Promise<Array<Reply | Error>>): Promise<Array<Reply | Error>> => {
    const replies = await replying;
    sent.forEach(({ script }, i) => {
      const reply = replies[i];
      if (!(reply instanceof Error && reply.message.startsWith('NOSCRIPT'))) calls.set(script.name, (calls.get(script.name) ?? 0) + 1);
    });
    return replies;
  };
  return {
    calls,
    evalsha: (sent) => count(sent, inner.evalsha(sent)),
    eval: (sent) => count(sent, inner.eval(sent)),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}

/** A transport that must never be called: the cache only builds Flows, which touch nothing. */
const idle = (): Transport => ({
  evalsha: () => Promise.reject(new Error('not called')),
  eval: () => Promise.reject(new Error('not called')),
  ping: () => Promise.reject(new Error('not called')),
  close: () => Promise.resolve(),
});

describe('the HTTP app keeps one Flows per transport', () => {
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

  it("registers each queue of a flow once however many flow requests follow", async () => {
    const counted = counting(inner);
    const app = createApp({ transport: () => counted, log: () => {} });
    const [a, b] = [queueName('flows-cache'), queueName('flows-cache')];
    made.push(a, b);
    const post = (body: unknown) => app.request('/v1/flows', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

    for (let i = 0; i < 3; i++) expect((await post({ queue: a, payload: i, children: [{ queue: b, payload: i }] })).status).toBe(201);
    expect(counted.calls.get('registerQueue')).toBe(2);
    expect(await raw.smismember('emq:queues', a, b)).toEqual([1, 1]);
  });

  it('keeps transports apart, and past `max` queue names starts a transport afresh', () => {
    const cache = new FlowsCache({}, 3);
    const one = idle();
    const two = idle();
    const first = cache.get(one, new Set(['a', 'b']));
    expect(cache.get(one, new Set(['b', 'c']))).toBe(first);
    expect(cache.get(two, new Set(['a']))).not.toBe(first);
    // a, b, c known: d is the fourth name
    const next = cache.get(one, new Set(['a', 'd']));
    expect(next).not.toBe(first);
    expect(cache.get(one, new Set(['a', 'd']))).toBe(next);
  });
});
