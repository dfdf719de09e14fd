import { redactUrl } from '../connection-failure.js';
import { InvalidArgumentError } from '../errors.js';
import { clusterNode } from './cluster-node.js';
import { IoredisTransport } from './ioredis-transport.js';

/** Where a process's Redis is: one server by URL, or a Redis Cluster by the nodes it starts from. */
export type RedisTarget =
  | {
      readonly kind: 'url';
      /** `redis://[user:password@]host:port[/db]` (or rediss://, unix://). */
      readonly url: string;
    }
  | {
      readonly kind: 'cluster';
      /** Nodes to learn the cluster from (one is enough), as REDIS_CLUSTER_NODES lists them. */
      readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
    };

/** Where `emq` and `npm start` connect when the environment names nothing. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The Redis a process connects to, read from its environment once: `REDIS_CLUSTER_NODES`
 * (`host:port,host:port`, whitespace around entries tolerated) for a cluster, else `REDIS_URL`,
 * else redis://127.0.0.1:6379. An empty variable counts as unset. Throws InvalidArgumentError
 * (EMQARG) when both are set, or naming an entry that is not `host:port`: before anything connects.
 *
 * @example
 * const target = redisTargetFromEnv(); // REDIS_CLUSTER_NODES=127.0.0.1:7000,127.0.0.1:7001
 * const transport = connectTarget(target, { connectTimeoutMs: 2_000 });
 * console.log(`connected to ${targetName(target)}`); // Redis Cluster 127.0.0.1:7000,127.0.0.1:7001
 */
export function redisTargetFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): RedisTarget {
  const url = env.REDIS_URL || undefined;
  const list = env.REDIS_CLUSTER_NODES || undefined;
  if (url !== undefined && list !== undefined) throw new InvalidArgumentError('set REDIS_URL or REDIS_CLUSTER_NODES, not both');
  if (list === undefined) return { kind: 'url', url: url ?? DEFAULT_REDIS_URL };
  return { kind: 'cluster', nodes: list.split(',').map((entry) => clusterNode(entry, 'REDIS_CLUSTER_NODES')) };
}

/**
 * A transport on a connection of its own to `target`: `IoredisTransport.connect` for a URL,
 * `.connectCluster` for a cluster. Closed with the transport.
 *
 * @example
 * const transport = connectTarget(redisTargetFromEnv());
 */
export function connectTarget(target: RedisTarget, options: { readonly connectTimeoutMs?: number } = {}): IoredisTransport {
  return target.kind === 'url' ? IoredisTransport.connect(target.url, options) : IoredisTransport.connectCluster(target.nodes, options);
}

/**
 * The target for log lines and messages, never with a password: `redis://host:port` or
 * `Redis Cluster host:port,host:port`.
 *
 * @example
 * targetName({ kind: 'url', url: 'redis://app:s3cret@db:6379' }); // 'redis://app:***@db:6379'
 */
export function targetName(target: RedisTarget): string {
  if (target.kind === 'url') return redactUrl(target.url);
  return `Redis Cluster ${target.nodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',')}`;
}
