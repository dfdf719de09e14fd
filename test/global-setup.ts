import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { type RunningBridge, startBridge } from '../src/node/bridge/index.js';
import { type LocalCluster, startLocalCluster } from '../src/node/local-cluster.js';
import { type LocalRedis, startLocalRedis } from '../src/node/local-redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** The transport `useRedis()` gives the suites: the project's name. */
    transport: 'ioredis' | 'upstash' | 'cluster';
    /** The local Redis Cluster's nodes, `host:port` (the cluster project only). */
    clusterNodes: string[] | null;
    /** The REST bridge over the same Redis (the upstash project only). */
    bridge: { url: string; token: string } | null;
  }
}

/**
 * The run's one Redis, shared by the projects. Each project loads this file through its own
 * module runner, so the memo lives on globalThis; the last project to tear down stops it.
 */
interface Shared {
  redis: Promise<LocalRedis>;
  users: number;
}
const SHARED = Symbol.for('echomq.test.redis');
const registry = globalThis as { [SHARED]?: Shared };

function acquireRedis(): Promise<LocalRedis> {
  const shared = (registry[SHARED] ??= {
    redis: startLocalRedis({
      env: { REDIS_URL: process.env.EMQ_TEST_REDIS_URL, PATH: process.env.PATH },
      log: (line) => console.log(`[test redis] ${line}`),
    }),
    users: 0,
  });
  shared.users += 1;
  return shared.redis;
}

async function releaseRedis(): Promise<void> {
  const shared = registry[SHARED];
  if (!shared || --shared.users > 0) return;
  delete registry[SHARED];
  await (await shared.redis).stop();
}

/**
 * One private redis-server for the whole run, on a free port (installed with apt-get when missing
 * on Debian as root). EMQ_TEST_REDIS_URL points the suites at another Redis instead; REDIS_URL is
 * ignored so a developer's own Redis is never touched by accident. The upstash project also gets
 * a REST bridge over it, on a free port with a random token.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (project.name.startsWith('cluster')) return clusterSetup(project);
  const redis = await acquireRedis();
  project.provide('redisUrl', redis.url);
  project.provide('clusterNodes', null);
  let bridge: RunningBridge | undefined;
  if (project.name === 'upstash') {
    const token = randomBytes(16).toString('hex');
    bridge = await startBridge({ redisUrl: redis.url, token });
    project.provide('transport', 'upstash');
    project.provide('bridge', { url: bridge.url, token });
  } else {
    project.provide('transport', 'ioredis');
    project.provide('bridge', null);
  }
  return async () => {
    await bridge?.close();
    await releaseRedis();
  };
}

/** The run's one local cluster, shared by the two cluster projects like the Redis above. */
interface SharedCluster {
  cluster: Promise<LocalCluster>;
  users: number;
}
const SHARED_CLUSTER = Symbol.for('echomq.test.cluster');
const clusters = globalThis as { [SHARED_CLUSTER]?: SharedCluster };

function acquireCluster(): Promise<LocalCluster> {
  const shared = (clusters[SHARED_CLUSTER] ??= {
    cluster: startLocalCluster({ log: (line) => console.log(`[test cluster] ${line}`) }),
    users: 0,
  });
  shared.users += 1;
  return shared.cluster;
}

async function releaseCluster(): Promise<void> {
  const shared = clusters[SHARED_CLUSTER];
  if (!shared || --shared.users > 0) return;
  delete clusters[SHARED_CLUSTER];
  await (await shared.cluster).stop();
}

/**
 * The cluster projects: the transport suites a third and a fourth time, over a local Redis
 * Cluster of three masters with a replica each (test/node/ suites start their own when they need
 * one): `cluster` through `IoredisTransport.connectCluster`, `cluster-upstash` through
 * @upstash/redis and the REST bridge over the cluster (the Worker's way to a cluster). The raw
 * client is a cluster client in both; `redisUrl` names the first master, for suites that only need
 * a plain connection to some node.
 */
async function clusterSetup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await acquireCluster();
  const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`);
  project.provide('redisUrl', `redis://${nodes[0]!}`);
  project.provide('clusterNodes', nodes);
  let bridge: RunningBridge | undefined;
  if (project.name === 'cluster-upstash') {
    const token = randomBytes(16).toString('hex');
    bridge = await startBridge({ clusterNodes: nodes, token });
    project.provide('transport', 'upstash');
    project.provide('bridge', { url: bridge.url, token });
  } else {
    project.provide('transport', 'cluster');
    project.provide('bridge', null);
  }
  return async () => {
    await bridge?.close();
    await releaseCluster();
  };
}
