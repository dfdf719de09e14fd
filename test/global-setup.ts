import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { type RunningBridge, startBridge } from '../src/node/bridge/index.js';
import { type LocalCluster, startLocalCluster } from '../src/node/local-cluster.js';
import { type LocalRedis, startLocalRedis } from '../src/node/local-redis.js';
import { buildEmq } from './emq-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    /** The transport `useRedis()` gives the suites: the project's name. */
    transport: 'ioredis' | 'upstash' | 'cluster';
    /** The local Redis Cluster's nodes, `host:port` (the cluster projects only). */
    clusterNodes: string[] | null;
    /** The REST bridge over the same Redis (the upstash project only). */
    bridge: { url: string; token: string } | null;
    /** The `emq` bin built from src/ (test/emq-build.ts): the project that starts it only. */
    emqBin: string | null;
  }
}

/** A server the run starts once, and how many projects use it. */
interface Shared<T> {
  server: Promise<T>;
  users: number;
}
const memos = globalThis as unknown as Record<symbol, Shared<{ stop(): Promise<void> }> | undefined>;

/**
 * The server named `key`, started by `start` for the first project that asks and shared by the
 * rest. Each project loads this file through its own module runner, so the memo lives on
 * globalThis; the last project to release it stops it.
 */
function acquire<T extends { stop(): Promise<void> }>(key: symbol, start: () => Promise<T>): Promise<T> {
  const shared = (memos[key] ??= { server: start(), users: 0 });
  shared.users += 1;
  return shared.server as Promise<T>;
}

async function release(key: symbol): Promise<void> {
  const shared = memos[key];
  if (!shared || --shared.users > 0) return;
  delete memos[key];
  await (await shared.server).stop();
}

/** The project whose suites start `emq` (vitest.config.ts): the bin is built once, for it. */
const EMQ_PROJECT = 'processes';

/** The run's one Redis. */
const REDIS = Symbol.for('echomq.test.redis');
const acquireRedis = (): Promise<LocalRedis> =>
  acquire(REDIS, () =>
    startLocalRedis({
      env: { REDIS_URL: process.env.EMQ_TEST_REDIS_URL, PATH: process.env.PATH },
      log: (line) => console.log(`[test redis] ${line}`),
    }),
  );

/**
 * One private redis-server for the whole run, on a free port (installed with apt-get when missing
 * on Debian as root), and for the cluster projects one local cluster (below). EMQ_TEST_REDIS_URL
 * points the suites at another Redis instead; REDIS_URL is ignored so a developer's own Redis is
 * never touched by accident. The upstash projects also get a REST bridge over theirs, on a free
 * port with a random token, and the project whose suites start `emq` gets it built from src/ once
 * (test/emq-build.ts), removed at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const onCluster = project.name.startsWith('cluster');
  let redisUrl: string;
  let clusterNodes: string[] | null = null;
  if (onCluster) {
    clusterNodes = (await acquireCluster()).nodes.map((n) => `${n.host}:${n.port}`);
    redisUrl = `redis://${clusterNodes[0]!}`;
  } else {
    redisUrl = (await acquireRedis()).url;
  }
  project.provide('redisUrl', redisUrl);
  project.provide('clusterNodes', clusterNodes);
  let bridge: RunningBridge | undefined;
  if (project.name === 'upstash' || project.name === 'cluster-upstash') {
    const token = randomBytes(16).toString('hex');
    bridge = await startBridge(clusterNodes ? { clusterNodes, token } : { redisUrl, token });
    project.provide('transport', 'upstash');
    project.provide('bridge', { url: bridge.url, token });
  } else {
    project.provide('transport', onCluster ? 'cluster' : 'ioredis');
    project.provide('bridge', null);
  }
  const emq = project.name === EMQ_PROJECT ? await buildEmq() : undefined;
  project.provide('emqBin', emq?.path ?? null);
  return async () => {
    emq?.remove();
    await bridge?.close();
    await release(onCluster ? CLUSTER : REDIS);
  };
}

/**
 * The run's one local cluster, shared by the two cluster projects: the transport suites a third
 * and a fourth time, over a local Redis Cluster of three masters with a replica each (test/node/
 * suites start their own when they need one): `cluster` through `IoredisTransport.connectCluster`,
 * `cluster-upstash` through @upstash/redis and the REST bridge over the cluster (the Worker's way
 * to a cluster). The raw client is a cluster client in both; `redisUrl` names the first master, for
 * suites that only need a plain connection to some node.
 */
const CLUSTER = Symbol.for('echomq.test.cluster');
const acquireCluster = (): Promise<LocalCluster> => acquire(CLUSTER, () => startLocalCluster({ log: (line) => console.log(`[test cluster] ${line}`) }));
