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

describe('the HTTP app and flows', () => {
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

  it('tells the after-enqueue hook, per queue, when the earliest claimable job it wrote there is due; nothing for a tree of duplicates', async () => {
    const woken: Array<[string, number]> = [];
    const app = createApp({ transport: () => inner, log: () => {}, afterEnqueue: (_c, queue, dueAt) => void woken.push([queue, dueAt]) });
    const [a, b, c] = [queueName('flows-wake'), queueName('flows-wake'), queueName('flows-wake')];
    made.push(a, b, c);
    const runAt = Date.now() + 3_600_000;
    const tree = {
      queue: a,
      id: `wake-${a}`,
      payload: 0,
      children: [
        { queue: b, payload: 1, delayMs: 120_000 },
        { queue: b, payload: 2 },
        { queue: c, payload: 3, delayMs: 60_000 },
        { queue: c, payload: 4, runAt },
      ],
    };
    const post = () => app.request('/v1/flows', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(tree) });
    const before = Date.now();
    expect((await post()).status).toBe(201);
    const after = Date.now();
    // the waiting root wakes nothing: its queue is told when it is released
    expect(woken.map(([queue]) => queue).sort()).toEqual([b, c].sort());
    const at = new Map(woken);
    expect(at.get(b)).toBeGreaterThanOrEqual(before);
    expect(at.get(b)).toBeLessThanOrEqual(after);
    expect(at.get(c)).toBeGreaterThanOrEqual(before + 60_000);
    expect(at.get(c)).toBeLessThanOrEqual(after + 60_000);
    woken.length = 0;
    expect((await post()).status).toBe(200);
    expect(woken).toEqual([]);
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
