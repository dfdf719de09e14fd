import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, inject } from 'vitest';

/** What a BullMQ-layer suite needs: where Redis is, as BullMQ's `connection`, and a raw client. */
export interface BullFixture {
  /** BullMQ's connection options for the run's Redis. */
  readonly connection: { host: string; port: number };
  /** A plain client for reading Redis state. */
  readonly raw: Redis;
  /** A fresh queue name (its echomq keys deleted after the test), as BullMQ's tests make them. */
  name(): string;
  /** Closes these after the test (workers, queues, events). */
  track<T extends { close(): Promise<void> }>(thing: T): T;
}

/** The run's Redis for the layer's suites; every name's keys deleted after each test. */
export function useBullRedis(): BullFixture {
  const url = new URL(inject('redisUrl'));
  const connection = { host: url.hostname, port: Number(url.port) };
  const raw = new Redis(inject('redisUrl'), { protocol: 2 });
  const names: string[] = [];
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close().catch(() => {})));
    for (const name of names.splice(0)) {
      const keys = await raw.keys(`emq:{*${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
  });
  afterAll(() => raw.disconnect());
  return {
    connection,
    raw,
    name: () => {
      const name = `test-${randomBytes(6).toString('hex')}`;
      names.push(name);
      return name;
    },
    track: (thing) => (open.push(thing), thing),
  };
}

/** Resolves when `check` holds, polling every 20 ms, or rejects after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
