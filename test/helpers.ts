import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, inject } from 'vitest';
import { UpstashTransport } from '../src/edge/upstash-transport.js';
import { Queue, type QueueOptions } from '../src/index.js';
import { keyspace, type Keyspace } from '../src/keyspace.js';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import type { Transport } from '../src/transport.js';

/** A random queue name, so tests never share keys. */
export const queueName = (label = 'q'): string => `${label}-${randomBytes(6).toString('hex')}`;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Everything a Redis suite needs: a raw client to read state, transports and queues to test. */
export interface RedisFixture {
  /** A plain ioredis client for reading and poking Redis state directly. */
  readonly raw: Redis;
  /**
   * A transport for the code under test: ioredis, or @upstash/redis through the REST bridge in
   * the upstash project (see vitest.config.ts).
   */
  readonly transport: Transport;
  /** A new queue on a random name (removed after the test). */
  queue<P = unknown>(options?: QueueOptions & { name?: string }): Queue<P>;
  /** The server's clock, ms. */
  serverNow(): Promise<number>;
}

/**
 * Connects a suite to the run's Redis and deletes every key of the queues it made after each
 * test. Call at the top of a describe block or file.
 */
export function useRedis(): RedisFixture {
  const url = inject('redisUrl');
  const raw = new Redis(url, { protocol: 2, lazyConnect: false });
  const transport = projectTransport();
  const made: string[] = [];

  afterEach(async () => {
    for (const name of made.splice(0)) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
  });
  afterAll(async () => {
    await transport.close();
    raw.disconnect();
  });

  return {
    raw,
    transport,
    queue: <P>(options: QueueOptions & { name?: string } = {}) => {
      const name = options.name ?? queueName();
      made.push(name);
      return new Queue<P>(transport, name, options);
    },
    serverNow: async () => {
      const [s, us] = await raw.time();
      return Number(s) * 1000 + Math.floor(Number(us) / 1000);
    },
  };
}

/**
 * A new transport of the kind this project tests: a connection of its own over ioredis, or an
 * @upstash/redis client on the bridge the global setup started.
 */
export function projectTransport(): Transport {
  if (inject('transport') === 'ioredis') return IoredisTransport.connect(inject('redisUrl'));
  const bridge = inject('bridge');
  if (!bridge) throw new Error('the upstash project has no bridge: see test/global-setup.ts');
  return UpstashTransport.connect({ url: bridge.url, token: bridge.token });
}

/** The keyspace of a queue, for reading its keys in assertions. */
export const keysOf = (queue: Queue<unknown> | { name: string }): Keyspace => keyspace(queue.name);
