import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, inject } from 'vitest';
import { UpstashTransport } from '../src/serverless/upstash-transport.js';
import { Leases, Queue, type QueueOptions } from '../src/index.js';
import { Scripts } from '../src/ops/scripts.js';
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
  const raw = rawClient();
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
    serverNow: () => serverNowOf(raw),
  };
}

/** The clock of the Redis `raw` is connected to, ms. */
export async function serverNowOf(raw: Redis): Promise<number> {
  const [s, us] = await raw.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Where a suite's Redis is: the run's (the global setup's, by default) or a suite's own. */
export interface RedisAt {
  /** A single Redis, or a cluster's first node. */
  readonly redisUrl: string;
  /** A cluster's nodes (`host:port`), or null on a single Redis. */
  readonly clusterNodes: readonly string[] | null;
  /** The REST bridge the upstash projects' transports go through, or null. */
  readonly bridge: { readonly url: string; readonly token: string } | null;
}

/** The run's Redis, as the global setup provided it to this project. */
export const runRedis = (): RedisAt => ({ redisUrl: inject('redisUrl'), clusterNodes: inject('clusterNodes'), bridge: inject('bridge') });

/**
 * A plain client for reading and poking state: a connection to the run's Redis, or in the cluster
 * project a cluster client (each key's command goes to its slot's master) whose `keys`, `dbsize`
 * and `script` ask every master, as they would on one Redis.
 */
export function rawClient(at: RedisAt = runRedis()): Redis {
  const nodes = at.clusterNodes;
  if (!nodes) return new Redis(at.redisUrl, { protocol: 2, lazyConnect: false });
  const cluster = new Cluster([...nodes], { redisOptions: { protocol: 2 } });
  const masters = async (): Promise<Redis[]> => {
    if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
    return cluster.nodes('master');
  };
  const everywhere: Record<string, (...args: never[]) => Promise<unknown>> = {
    keys: async (pattern: string) => (await Promise.all((await masters()).map((m) => m.keys(pattern)))).flat(),
    dbsize: async () => (await Promise.all((await masters()).map((m) => m.dbsize()))).reduce((a, b) => a + b, 0),
    script: async (...args: [string, ...string[]]) => {
      const replies = (await Promise.all((await masters()).map((m) => m.call('SCRIPT', ...args)))) as unknown[];
      // EXISTS: loaded on some master; LOAD and FLUSH answer alike everywhere
      if (args[0].toUpperCase() !== 'EXISTS') return replies[0];
      return (replies as number[][]).reduce((a, b) => a.map((v, i) => Math.max(v, b[i]!)));
    },
  };
  return new Proxy(cluster, {
    get: (target, prop, receiver) => (typeof prop === 'string' && prop in everywhere ? everywhere[prop] : Reflect.get(target, prop, receiver)),
  }) as unknown as Redis;
}

/**
 * A new transport of the kind this project tests: a connection of its own over ioredis, a
 * cluster client over the local cluster, or an @upstash/redis client on the bridge the global
 * setup started (or, given `at`, on a suite's own Redis: test/private-redis.ts).
 */
export function projectTransport(at: RedisAt = runRedis()): Transport {
  if (inject('transport') === 'ioredis') return IoredisTransport.connect(at.redisUrl);
  if (inject('transport') === 'cluster') return IoredisTransport.connectCluster([...(at.clusterNodes ?? [])]);
  const bridge = at.bridge;
  if (!bridge) throw new Error('the upstash project has no bridge: see test/global-setup.ts');
  return UpstashTransport.connect({ url: bridge.url, token: bridge.token });
}

/** The keyspace of a queue, for reading its keys in assertions. */
export const keysOf = (queue: Queue<unknown> | { name: string }): Keyspace => keyspace(queue.name);

/**
 * The claimable jobs of one lane in the order a claim takes them, each with its order: the lane's
 * zset (`pending` for ungrouped work, else `lane:<group>`) and its arrivals list (`fifo`,
 * `fifo:<group>`, whose members' orders are their rows' `o`) merged by order. Orders are the
 * strings Redis stores.
 */
export async function laneEntries(raw: Redis, k: Keyspace, group?: string): Promise<Array<[string, string]>> {
  const flat = await raw.zrange(group === undefined ? k.key('pending') : k.lane(group), 0, '-1', 'WITHSCORES');
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  for (const id of await raw.lrange(k.fifo(group), 0, '-1')) out.push([id, (await raw.hget(k.job(id), 'o')) ?? 'NaN']);
  return out.sort(([, a], [, b]) => Number(a) - Number(b));
}

/** The ids of {@link laneEntries}, in claim order. */
/**
 * How many jobs of the queue hold a lease: the active zset's members below +inf (a big claim adds
 * one member scored +inf that is no lease: lua/includes/active_skiplist.lua).
 */
export const leaseCount = (raw: Redis, k: Keyspace): Promise<number> => raw.zcount(k.key('active'), '-inf', '(+inf');

export const laneIds = async (raw: Redis, k: Keyspace, group?: string): Promise<string[]> =>
  (await laneEntries(raw, k, group)).map(([id]) => id);

/** How many claimable jobs one lane holds (zset and arrivals list). */
export const laneSize = async (raw: Redis, k: Keyspace, group?: string): Promise<number> =>
  (await laneEntries(raw, k, group)).length;

/** The order of claimable job `id` in its lane, or null when the lane does not hold it. */
export const laneOrder = async (raw: Redis, k: Keyspace, id: string, group?: string): Promise<string | null> =>
  (await laneEntries(raw, k, group)).find(([member]) => member === id)?.[1] ?? null;

/**
 * Every key matching `pattern` with its type, content and whether it has a TTL, for before/after
 * equality ("nothing changed").
 */
export async function snapshotKeys(raw: Redis, pattern: string): Promise<Record<string, unknown>> {
  const keys = (await raw.keys(pattern)).sort();
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const type = await raw.type(key);
    let value: unknown;
    if (type === 'hash') value = await raw.hgetall(key);
    else if (type === 'zset') value = await raw.zrange(key, 0, '-1', 'WITHSCORES');
    else if (type === 'list') value = await raw.lrange(key, 0, '-1');
    else if (type === 'set') value = (await raw.smembers(key)).sort();
    else if (type === 'stream') value = await raw.xrange(key, '-', '+');
    else value = await raw.get(key);
    out[key] = { type, value, ttl: (await raw.pttl(key)) > 0 };
  }
  return out;
}

/** Resolves when `check` holds, polling every 5 ms; fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(5);
  }
}

const leasesByQueue = new WeakMap<Queue<unknown>, Leases<unknown>>();

/** The lease protocol of `queue` (one per queue object): what a consumer claims and settles with. */
export function leases<P>(queue: Queue<P>): Leases<P> {
  let found = leasesByQueue.get(queue as Queue<unknown>);
  if (!found) leasesByQueue.set(queue as Queue<unknown>, (found = new Leases(queue as Queue<unknown>)));
  return found as Leases<P>;
}

/** The script gateway of `queue`, for tests that call a script past Queue's checks (the kind door). */
export const scriptsOf = (queue: Queue<unknown>): Scripts => new Scripts(queue.transport, queue.name);
