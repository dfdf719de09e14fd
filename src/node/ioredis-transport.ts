import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import type { BlockingTransport, ParkedReply, Replication, Reply, ScriptCall, StreamEntry } from '../transport.js';
import { BlockingReads } from './blocking-reads.js';
import { clusterNode } from './cluster-node.js';
import { checkConnectTimeout, ConnectionWatch, DEFAULT_CONNECT_TIMEOUT_MS } from './connection-watch.js';
import { BY_SHA, BY_SOURCE, ScriptSender } from './script-sender.js';

/** Options of an IoredisTransport over a connection of yours. */
export interface IoredisTransportOptions {
  /** close() also quits the connection (default false: it is yours to close). */
  readonly owned?: boolean;
  /**
   * How long a request waits for a connection (the first, or one lost and being made again)
   * before it fails with ConnectionError, in ms (default 5,000).
   */
  readonly connectTimeoutMs?: number;
}

/** IoredisTransport.connect's options: ioredis's, and how long a request waits for a connection. */
export type IoredisConnectOptions = RedisOptions & Pick<IoredisTransportOptions, 'connectTimeoutMs'>;

/** IoredisTransport.connectCluster's options: ioredis's Cluster options, and how long a request waits for the cluster. */
export type IoredisClusterOptions = ClusterOptions & Pick<IoredisTransportOptions, 'connectTimeoutMs'>;

/** A node a cluster client starts from: `host:port`, or its parts. */
export type ClusterNodeAddress =
  | string
  | {
      /** The node's host name or address. */
      readonly host: string;
      /** Its port. */
      readonly port: number;
    };

/** A connection to one Redis, or a client of a Redis Cluster (one connection per node). */
export type IoredisClient = Redis | Cluster;

/**
 * The core's Transport over ioredis (TCP). Several calls go out as one pipeline; a single call
 * as a plain command (script-sender.ts). `blpop` and `xread` wait on duplicate connections of
 * their own, opened on first use (blocking-reads.ts).
 *
 * A request is written only to a ready connection: while there is none (not yet made, or lost
 * and being made again) it waits up to `connectTimeoutMs`, then rejects with ConnectionError
 * (EMQREDIS) naming the URL, without its password, and the cause: refused, auth, TLS, DNS,
 * timeout. Refused credentials and TLS fail at once. A request out when the connection drops
 * rejects at once (connect() sets `maxRetriesPerRequest: 0`) rather than being sent again later.
 * ioredis keeps reconnecting meanwhile.
 *
 * @example
 * const transport = IoredisTransport.connect(process.env.REDIS_URL!, { connectTimeoutMs: 2_000 });
 * const queue = new Queue(transport, 'mail');
 */
export class IoredisTransport implements BlockingTransport {
  /** Where it connects: the URL without credentials. */
  readonly endpoint: string;
  private readonly watch: ConnectionWatch;
  private readonly scripts: ScriptSender;
  private readonly blocking: BlockingReads;
  private readonly owned: boolean;

  /** @param redis the connection (or cluster client) to use (see IoredisTransportOptions for whose it is) */
  constructor(
    readonly redis: IoredisClient,
    options: IoredisTransportOptions = {},
  ) {
    this.owned = options.owned ?? false;
    this.endpoint = endpointOf(redis);
    this.watch = new ConnectionWatch(redis, this.endpoint, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    this.scripts = new ScriptSender(redis, this.watch);
    this.blocking = new BlockingReads((blockingTimeout) => {
      const parked = quiet(duplicate(redis, blockingTimeout));
      return { redis: parked, watch: new ConnectionWatch(parked, this.endpoint, this.watch.timeoutMs) };
    }, () => this.watch.closedError());
  }

  /** A transport on a new connection to `url`, closed with the transport. */
  static connect(url: string, options: IoredisConnectOptions = {}): IoredisTransport {
    const { connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, ...redisOptions } = options;
    checkConnectTimeout(connectTimeoutMs); // before a connection is opened, not after
    const redis = new Redis(url, { protocol: 2, maxRetriesPerRequest: 0, connectTimeout: connectTimeoutMs, ...redisOptions });
    return new IoredisTransport(quiet(redis), { owned: true, connectTimeoutMs });
  }

  /**
   * A transport on a new client of the Redis Cluster that `nodes` belong to (one is enough; the
   * rest of the cluster is learnt from it), closed with the transport. A queue's keys share one
   * hash slot, so each script runs on the master that serves it; ioredis follows MOVED and ASK and
   * refreshes its map of slots after a failover. The calls of one round trip go out as one
   * pipeline per run of consecutive calls served by the same master, the runs one after another,
   * so calls still run in the order given (a flow's children before their parent). The doorbell's
   * BLPOP, and the claim queued behind it, go to the queue's master.
   *
   * @example
   * const transport = IoredisTransport.connectCluster(process.env.REDIS_CLUSTER_NODES!.split(','));
   */
  static connectCluster(nodes: readonly ClusterNodeAddress[], options: IoredisClusterOptions = {}): IoredisTransport {
    const { connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, redisOptions, ...clusterOptions } = options;
    checkConnectTimeout(connectTimeoutMs);
    const startup = nodes.map((node) => (typeof node === 'string' ? clusterNode(node) : { host: node.host, port: node.port }));
    if (startup.length === 0) throw new InvalidArgumentError('a cluster needs at least one node to start from, got none');
    const cluster = new Cluster(startup, {
      slotsRefreshTimeout: connectTimeoutMs,
      ...clusterOptions,
      redisOptions: { maxRetriesPerRequest: 0, connectTimeout: connectTimeoutMs, ...redisOptions },
    });
    return new IoredisTransport(quiet(cluster), { owned: true, connectTimeoutMs });
  }

  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.scripts.send(calls, BY_SHA, replication);
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.scripts.send(calls, BY_SOURCE, replication);
  }

  async ping(): Promise<void> {
    await this.watch.ready();
    try {
      await this.redis.ping();
    } catch (error) {
      throw this.watch.failure(error);
    }
  }

  blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    return this.blocking.blpop(keys, timeoutMs);
  }

  blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    return this.blocking.blpopThen(keys, timeoutMs, call);
  }

  xread(key: string, after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]> {
    return this.blocking.xread(key, after, count, blockMs, signal);
  }

  interrupt(): void {
    this.blocking.interrupt();
  }

  /**
   * Releases the doorbell connection and, when this transport opened its connection, closes it:
   * resolves once the socket is closed, so nothing of it keeps the process alive.
   */
  async close(): Promise<void> {
    this.blocking.close();
    if (!this.owned) return;
    this.watch.close();
    const status = this.redis.status;
    if (status === 'end') return;
    const ended = new Promise<void>((resolve) => this.redis.once('end', resolve));
    // QUIT on a ready connection lets replies in flight arrive first; any other is dropped at once
    if (status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
    // between two attempts there is no socket to close: ioredis then only cancels the next attempt
    if (status !== 'reconnecting' && (this.redis.status as string) !== 'end') await ended;
  }
}

/** A new client like `redis` whose blocking commands ioredis gives up on after `blockingTimeout` ms. */
function duplicate(redis: IoredisClient, blockingTimeout: number): IoredisClient {
  if (redis instanceof Cluster) return redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, blockingTimeout } });
  return redis.duplicate({ blockingTimeout });
}

/**
 * The URL a connection reaches, from its options: a password shows as `***`. A cluster client
 * names the nodes it started from: `redis://host:port,host:port`.
 */
function endpointOf(redis: IoredisClient): string {
  if (redis instanceof Cluster) {
    const { tls, username, password } = redis.options.redisOptions ?? {};
    const auth = password ? `${username ?? ''}:***@` : username ? `${username}@` : '';
    const nodes = (redis as unknown as { startupNodes: Array<string | { host?: string; port?: number }> }).startupNodes;
    const named = nodes.map((n) => (typeof n === 'object' ? `${n.host ?? 'localhost'}:${n.port ?? 6379}` : String(n)));
    return `${tls ? 'rediss' : 'redis'}://${auth}${named.join(',')}`;
  }
  const { host, port, path, tls, username, password, db } = redis.options;
  if (path) return `unix://${path}`;
  const auth = password ? `${username ?? ''}:***@` : username ? `${username}@` : '';
  return `${tls ? 'rediss' : 'redis'}://${auth}${host ?? 'localhost'}:${port ?? 6379}${db ? `/${db}` : ''}`;
}

/**
 * ioredis prints connection errors to stderr unless someone listens; ours surface where they
 * matter, as the rejected command, so the connection's own error events are dropped.
 */
function quiet<T extends IoredisClient>(redis: T): T {
  redis.on('error', () => {});
  return redis;
}
