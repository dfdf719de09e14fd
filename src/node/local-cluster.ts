import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { EmqError } from '../errors.js';
import { findRedisServer, type LocalRedis, RedisMissingError, startLocalRedis } from './local-redis.js';

/** One node of a local cluster. */
export interface LocalClusterNode {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** The redis-server's pid. */
  readonly pid: number | undefined;
}

/** A Redis Cluster on this machine (`startLocalCluster`). */
export interface LocalCluster {
  /** Every node, masters first as `redis-cli --cluster create` was given them. */
  readonly nodes: readonly LocalClusterNode[];
  /** How many of them are masters. */
  readonly masters: number;
  /** Stops every node (SIGTERM, then their files go). */
  stop(): Promise<void>;
}

/** Options of startLocalCluster. */
export interface LocalClusterOptions {
  /** Masters (default 3, at least 3: redis-cli's minimum). */
  readonly masters?: number;
  /** Replicas per master (default 1). */
  readonly replicas?: number;
  /** `cluster-node-timeout`, ms (default 2,000: a failover within a few seconds, for tests). */
  readonly nodeTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** The cluster could not be formed (redis-cli failed, or the nodes never agreed). */
export class ClusterStartError extends EmqError {
  constructor(message: string) {
    super('EMQREDIS', message);
    this.name = 'ClusterStartError';
  }
}

/**
 * A Redis Cluster of private `redis-server`s on free loopback ports (`--cluster-enabled yes`),
 * joined by `redis-cli --cluster create` (masters, each with its replicas), resolved once every
 * node reports `cluster_state:ok`. For tests and `npm start -- --cluster` (issue 19). Throws
 * RedisMissingError when redis-server or redis-cli is not on PATH, ClusterStartError when the
 * nodes do not form a cluster in 30 s (every node started is stopped first).
 *
 * @example
 * const cluster = await startLocalCluster({ masters: 3, replicas: 1 });
 * const nodes = cluster.nodes.map((n) => ({ host: n.host, port: n.port }));
 * await cluster.stop();
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 1;
  if (!Number.isSafeInteger(masters) || masters < 3) throw new ClusterStartError(`a cluster needs at least 3 masters, got ${masters}`);
  if (!Number.isSafeInteger(replicas) || replicas < 0) throw new ClusterStartError(`replicas must be an integer >= 0, got ${replicas}`);
  const log = options.log ?? (() => {});
  const server = findRedisServer();
  const cli = server ? findCli(server) : undefined;
  if (!server || !cli) throw new RedisMissingError('redis-server and redis-cli not found: install Redis 7+ (Debian/Ubuntu: apt-get install redis-server)');

  // a REDIS_URL of the caller's is not this cluster: every node is a private one
  const { REDIS_URL: _ignored, ...env } = process.env;
  const started: LocalRedis[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((n) => n.stop()));
  };
  try {
    // a replica's first sync waits repl-diskless-sync-delay (5 s by default) for more replicas to join it
    const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2000), '--cluster-require-full-coverage', 'no', '--repl-diskless-sync-delay', '0'];
    for (let i = 0; i < masters * (1 + replicas); i++) started.push(await startLocalRedis({ env, install: false, args }));
    const nodes = started.map((n) => ({ host: '127.0.0.1' as const, port: Number(new URL(n.url).port), pid: n.pid }));
    await formCluster(nodes.map((n) => n.port), { masters, replicas, cli });
    log(`started a Redis Cluster of ${masters} masters with ${replicas} replica(s) each on 127.0.0.1:${nodes.map((n) => n.port).join(',')}`);
    return { nodes, masters, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Joins redis-servers already running with `--cluster-enabled yes` on 127.0.0.1 `ports` into a
 * cluster (`redis-cli --cluster create`, the first `masters` ports masters, each with `replicas`
 * of the rest) and resolves once every node sees every slot served and every replica attached
 * and synced (start them with `--repl-diskless-sync-delay 0`, or a first sync waits 5 s).
 * For nodes a caller starts itself (the chaos suite restarts its nodes on their own files).
 * Throws ClusterStartError when redis-cli fails or the nodes do not agree within 30 s.
 *
 * @example
 * await formCluster([7000, 7001, 7002, 7003, 7004, 7005], { masters: 3, replicas: 1 });
 */
export async function formCluster(ports: readonly number[], options: { masters: number; replicas: number; cli?: string }): Promise<void> {
  const { masters, replicas } = options;
  const cli = options.cli ?? findCli(findRedisServer() ?? 'redis-server');
  if (!cli) throw new RedisMissingError('redis-cli not found: install Redis 7+ (Debian/Ubuntu: apt-get install redis-server)');
  const create = spawnSync(cli, ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (create.status !== 0) throw new ClusterStartError(`redis-cli --cluster create failed: ${(create.stderr || create.stdout).trim().split('\n').pop() ?? ''}`);
  const deadline = Date.now() + 30_000;
  const ask = (port: number, what: string): string => spawnSync(cli, ['-p', String(port), 'cluster', what], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '';
  // every node sees every slot served and every replica attached to its master, and each
  // replica has synced (a WAIT on a master counts only replicas whose link is up)
  const agreed = (port: number): boolean => {
    if (!/cluster_state:ok/.test(ask(port, 'info'))) return false;
    const replication = spawnSync(cli, ['-p', String(port), 'info', 'replication'], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '';
    if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return false;
    const flags = ask(port, 'nodes').trim().split('\n').map((line) => (line.split(' ')[2] ?? '').split(','));
    return flags.filter((f) => f.includes('master')).length === masters && flags.filter((f) => f.includes('slave')).length === masters * replicas;
  };
  for (;;) {
    if (ports.every((port) => agreed(port))) return;
    if (Date.now() > deadline) throw new ClusterStartError('the nodes did not agree on a cluster (cluster_state:ok) within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** redis-cli beside the server binary, else on PATH. */
function findCli(server: string): string | undefined {
  const beside = join(dirname(server), 'redis-cli');
  for (const candidate of [beside, 'redis-cli', 'valkey-cli']) {
    if (spawnSync(candidate, ['--version'], { encoding: 'utf8' }).status === 0) return candidate;
  }
  return undefined;
}
