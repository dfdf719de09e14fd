import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, inject } from 'vitest';
import { Queue, type QueueOptions } from '../src/index.js';
import { type RunningBridge, startBridge } from '../src/node/bridge/index.js';
import { type LocalCluster, startLocalCluster } from '../src/node/local-cluster.js';
import { type LocalRedis, startLocalRedis } from '../src/node/local-redis.js';
import type { Transport } from '../src/transport.js';
import { projectTransport, queueName, rawClient, type RedisAt, type RedisFixture, serverNowOf } from './helpers.js';

/** A suite's own Redis, of the project's kind, with what {@link RedisFixture} offers on it. */
export interface PrivateRedisFixture extends RedisFixture {
  /** Where it is: for a Worker or a process pointed at it. */
  readonly at: RedisAt;
  /** The REST bridge over it (the upstash projects, or when asked for), with its counters. */
  readonly restBridge: RunningBridge;
}

export interface PrivateRedisOptions {
  /** A REST bridge over it with this token, whatever the project (the Worker's suites). */
  readonly bridgeToken?: string;
}

/**
 * Starts a Redis of the suite's own before its tests, of the kind this project tests on (one
 * redis-server; a cluster of three masters without replicas in the cluster projects; a REST
 * bridge over it in the upstash ones, or with `bridgeToken`), and stops it after them. For the tests that change the
 * whole server, SCRIPT FLUSH above all: on the run's Redis a flush makes another file's next call
 * a NOSCRIPT and its retry a second request, which fails every suite that counts requests while
 * files run side by side (docs/design/tests.md, "Test isolation"). Call at the top of a describe
 * block.
 */
export function usePrivateRedis(options: PrivateRedisOptions = {}): PrivateRedisFixture {
  let server: LocalRedis | LocalCluster | undefined;
  let bridge: RunningBridge | undefined;
  let at: RedisAt | undefined;
  let raw: Redis | undefined;
  let transport: Transport | undefined;
  beforeAll(async () => {
    const onCluster = inject('clusterNodes') !== null;
    let redisUrl: string;
    let clusterNodes: string[] | null = null;
    if (onCluster) {
      const cluster = await startLocalCluster({ replicas: 0 });
      server = cluster;
      clusterNodes = cluster.nodes.map((n) => `${n.host}:${n.port}`);
      redisUrl = `redis://${clusterNodes[0]!}`;
    } else {
      const single = await startLocalRedis({ env: { PATH: process.env.PATH } });
      server = single;
      redisUrl = single.url;
    }
    const token = options.bridgeToken ?? randomBytes(16).toString('hex');
    if (inject('bridge') || options.bridgeToken !== undefined) bridge = await startBridge(clusterNodes ? { clusterNodes, token } : { redisUrl, token });
    at = { redisUrl, clusterNodes, bridge: bridge ? { url: bridge.url, token } : null };
    raw = rawClient(at);
    transport = projectTransport(at);
  }, 60_000);
  afterAll(async () => {
    await transport?.close();
    raw?.disconnect();
    await bridge?.close();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the private Redis starts before the first test');
    return value;
  };
  return {
    get at() {
      return started(at);
    },
    get restBridge() {
      return started(bridge);
    },
    get raw() {
      return started(raw);
    },
    get transport() {
      return started(transport);
    },
    // the server goes with the suite: no keys to delete after each test
    queue: <P>(options: QueueOptions & { name?: string } = {}) => new Queue<P>(started(transport), options.name ?? queueName(), options),
    serverNow: () => serverNowOf(started(raw)),
  };
}
