import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy } from '../../src/node/bridge/fault-proxy.js';

/** The fault proxy the chaos scenarios put in front of the bridge: each fault does what it says. */
describe('the fault proxy', () => {
  let upstream: Server;
  let target: string;
  let ran = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      ran++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: req.url }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  const call = async (url: string): Promise<number | 'thrown'> => {
    try {
      return (await fetch(`${url}/x`, { method: 'POST', body: '[]' })).status;
    } catch {
      return 'thrown';
    }
  };

  it('forwards, answers 500 before running, drops the reply after running, resets, stalls', async () => {
    const cases = [
      { faults: {}, seen: 200, runs: 1 },
      { faults: { error500: 1 }, seen: 500, runs: 0 },
      { faults: { dropReply: 1 }, seen: 'thrown', runs: 1 },
      { faults: { reset: 1 }, seen: 'thrown', runs: 0 },
      { faults: { stall: 1 }, seen: 200, runs: 1 },
    ] as const;
    for (const { faults, seen, runs } of cases) {
      const proxy = await startFaultProxy({ target, faults, stallMs: 200 });
      try {
        const before = ran;
        const t0 = performance.now();
        expect(await call(proxy.url), JSON.stringify(faults)).toBe(seen);
        expect(ran - before, JSON.stringify(faults)).toBe(runs);
        if ('stall' in faults) expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
      } finally {
        await proxy.close();
      }
    }
  });

  it('draws the same faults from the same seed', async () => {
    const outcomes = async (seed: number): Promise<Array<number | 'thrown'>> => {
      const proxy = await startFaultProxy({ target, faults: { error500: 0.3, reset: 0.3 }, seed });
      try {
        const out: Array<number | 'thrown'> = [];
        for (let i = 0; i < 20; i++) out.push(await call(proxy.url));
        return out;
      } finally {
        await proxy.close();
      }
    };
    const a = await outcomes(7);
    expect(await outcomes(7)).toEqual(a);
    expect(new Set(a).size).toBeGreaterThan(1);
  });

  it('reports each fault with the request it hit and the reply Redis gave when the request ran', async () => {
    const seen: Array<{ kind: string; at: number; request: string; reply?: string }> = [];
    const t0 = Date.now();
    for (const [i, faults] of [{ error500: 1 }, { reset: 1 }, { dropReply: 1 }, { stall: 1 }].entries()) {
      const proxy = await startFaultProxy({ target, faults, stallMs: 10, onFault: (fault) => void seen.push(fault) });
      try {
        await call(proxy.url);
        // the proxy reports after it cut the connection; give it a turn
        for (let turn = 0; turn < 100 && seen.length <= i; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        await proxy.close();
      }
    }
    for (const fault of seen) expect(fault.at).toBeGreaterThanOrEqual(t0);
    expect(seen.map(({ at: _, ...fault }) => fault)).toEqual([
      { kind: 'error500', request: '[]' },
      { kind: 'reset', request: '[]' },
      { kind: 'dropReply', request: '[]', reply: JSON.stringify({ result: '/x' }) },
      { kind: 'stall', request: '[]', reply: JSON.stringify({ result: '/x' }) },
    ]);
  });
});
