import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { InvalidArgumentError, RedisError, replicationShortfall } from '../errors.js';
import type { BlockingTransport, ParkedReply, Replication, Reply, ScriptCall, StreamEntry } from '../transport.js';
import { slotOf } from '../cluster-slot.js';
import { clusterNode } from './cluster-node.js';
import { checkConnectTimeout, ConnectionWatch, DEFAULT_CONNECT_TIMEOUT_MS } from './connection-watch.js';

type Settled = Array<Reply | Error>;
/** A call's command and its first argument: EVALSHA and the sha1, or EVAL and the source. */
type Head = (call: ScriptCall) => [string, string];

const settle = (results: Array<[Error | null, unknown]> | null): Settled =>
  (results ?? []).map(([error, value]) => error ?? (value as Reply));

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
 * as a plain command. `blpop` waits on a duplicate connection of its own, opened on first use.
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
  private blocking: Parked | undefined;
  /** On a cluster: the scripts (sha1) each master (`host:port`) is known to hold. */
  private readonly loadedOn = new Map<string, Set<string>>();
  /** The connections XREAD BLOCK parks on, one per stream key. */
  private readonly streams = new Map<string, Parked>();
  private readonly watch: ConnectionWatch;
  private readonly owned: boolean;

  /** @param redis the connection (or cluster client) to use (see IoredisTransportOptions for whose it is) */
  constructor(
    readonly redis: IoredisClient,
    options: IoredisTransportOptions = {},
  ) {
    this.owned = options.owned ?? false;
    this.endpoint = endpointOf(redis);
    this.watch = new ConnectionWatch(redis, this.endpoint, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
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
    return this.send(calls, (c) => ['evalsha', c.script.sha1], replication);
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.send(calls, (c) => ['eval', c.script.lua], replication);
  }

  async ping(): Promise<void> {
    await this.watch.ready();
    try {
      await this.redis.ping();
    } catch (error) {
      throw this.watch.failure(error);
    }
  }

  async blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    const blocking = this.blockingConnection();
    try {
      await blocking.watch.ready();
      const reply = await blocking.redis.blpop(...(keys as string[]), seconds(timeoutMs));
      return reply ? reply[0] : null;
    } catch (error) {
      if (this.blocking !== blocking) return null; // interrupted
      throw blocking.watch.failure(error);
    }
  }

  async blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    const blocking = this.blockingConnection();
    try {
      await blocking.watch.ready();
    } catch (error) {
      if (this.blocking !== blocking) return { key: null, reply: undefined }; // interrupted
      throw error;
    }
    // Both go out now, in order: Redis holds the EVALSHA in the connection's input until the
    // BLPOP returns, then runs it at once, and both replies come back together.
    const popped = blocking.redis.blpop(...(keys as string[]), seconds(timeoutMs));
    const then = blocking.redis.call('evalsha', argv(call.script.sha1, call)).then((value) => value as Reply, asError);
    let key: string | null;
    try {
      const reply = await popped;
      key = reply ? reply[0] : null;
    } catch (error) {
      if (this.blocking !== blocking) return { key: null, reply: undefined }; // interrupted
      throw blocking.watch.failure(error);
    }
    if (key !== null) return { key, reply: await then };
    // A null BLPOP is Redis's timeout, or ioredis's own deadline on a connection that may have
    // died silently: then the call's reply would never come, so wait for it only so long.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CALL_GRACE_MS)));
    const reply = await Promise.race([then, late]);
    clearTimeout(timer);
    if (reply === undefined && this.blocking === blocking) this.interrupt();
    return { key: null, reply };
  }

  async xread(key: string, after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]> {
    if (signal?.aborted) return [];
    let parked = this.streams.get(key);
    if (!parked) {
      const redis = quiet(duplicate(this.redis, blockMs + 60_000));
      this.streams.set(key, (parked = { redis, watch: new ConnectionWatch(redis, this.endpoint, this.watch.timeoutMs) }));
    }
    const mine = parked;
    // an abort drops the connection: the only way to end a blocked XREAD at once
    const drop = (): void => {
      if (this.streams.get(key) === mine) this.streams.delete(key);
      mine.watch.close();
      mine.redis.disconnect();
    };
    signal?.addEventListener('abort', drop, { once: true });
    try {
      await mine.watch.ready();
      const reply = (await mine.redis.call('xread', 'COUNT', count, 'BLOCK', Math.max(1, blockMs), 'STREAMS', key, after)) as
        | Array<[string, Array<[string, string[]]>]>
        | null;
      return (reply?.[0]?.[1] ?? []).map(([id, fields]) => ({ id, fields }));
    } catch (error) {
      if (signal?.aborted || this.streams.get(key) !== mine) return [];
      drop();
      throw mine.watch.failure(error);
    } finally {
      signal?.removeEventListener('abort', drop);
    }
  }

  interrupt(): void {
    const blocking = this.blocking;
    this.blocking = undefined;
    blocking?.redis.disconnect();
  }

  /**
   * Releases the doorbell connection and, when this transport opened its connection, closes it:
   * resolves once the socket is closed, so nothing of it keeps the process alive.
   */
  async close(): Promise<void> {
    this.interrupt();
    for (const { redis, watch } of this.streams.values()) {
      watch.close();
      redis.disconnect();
    }
    this.streams.clear();
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

  /** The doorbell connection, opened on first use. */
  private blockingConnection(): Parked {
    if (this.blocking) return this.blocking;
    // blockingTimeout arms a client-side deadline (timeout + grace): a connection that died
    // silently must not park us forever.
    const redis = quiet(duplicate(this.redis, 60_000));
    return (this.blocking = { redis, watch: new ConnectionWatch(redis, this.endpoint, this.watch.timeoutMs) });
  }

  /** Sends once the connection is ready (at once, with no promise in between, when it is). */
  private send(calls: readonly ScriptCall[], head: Head, replication: Replication | undefined): Promise<Settled> {
    const waiting = this.watch.ready();
    if (waiting) return waiting.then(() => this.sendNow(calls, head, replication));
    return this.sendNow(calls, head, replication);
  }

  /**
   * One round trip: a call Redis refused is that call's Error; a connection failure (lost with the
   * request out) rejects the whole request with ConnectionError; with `replication`, too few
   * replicas behind any run rejects it with ReplicationError once every run has been sent.
   */
  private async sendNow(calls: readonly ScriptCall[], head: Head, replication: Replication | undefined): Promise<Settled> {
    if (replication) return this.sendReplicated(calls, head, replication);
    if (this.redis instanceof Cluster) {
      const settled: Settled = [];
      for (const run of runsByMaster(this.redis, calls)) settled.push(...(await this.sendRunOn(run, calls, head)));
      return settled;
    }
    return this.sendRun(calls, head);
  }

  /**
   * `durability: 'replicated'`: each run of calls one master serves is one pipeline with
   * `WAIT replicas timeoutMs` behind the calls (WAIT has no key: it goes where the pipeline goes,
   * and counts what this connection wrote there). ioredis follows MOVED in a pipeline only when
   * every other reply in it is an error too, which a WAIT's reply is not; so calls answered MOVED
   * or ASK (a failover, a slot migrating) are sent again here, on a fresh map of slots, at most
   * twice. Fewer replicas than asked behind any run that wrote: ReplicationError, the fewest named.
   */
  private async sendReplicated(calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<Settled> {
    const settled: Settled = new Array<Reply | Error>(calls.length);
    let pending = calls.map((_, i) => i);
    let fewest = Infinity;
    for (let hop = 0; ; hop++) {
      const runs = this.redis instanceof Cluster ? runsByMaster(this.redis, calls, pending) : [{ master: undefined, indices: pending }];
      for (const run of runs) {
        const { replies, acknowledged } = await this.sendRunOn(run, calls, head, replication);
        let wrote = false;
        run.indices.forEach((index, i) => {
          const reply = replies[i]!;
          settled[index] = reply;
          // a NOSCRIPT ran nothing either: runScripts sends it again by EVAL, with its own WAIT
          if (!isRedirect(reply) && !(reply instanceof Error && reply.message.startsWith('NOSCRIPT'))) wrote = true;
        });
        if (!wrote) continue; // sent nowhere (a replica, or a master no longer serving it, redirected every call)
        // a Redis that refuses WAIT (a managed service may) cannot give what was asked
        if (acknowledged instanceof Error) throw new RedisError(`Redis at ${this.endpoint} did not run WAIT (durability 'replicated'): ${acknowledged.message}`);
        fewest = Math.min(fewest, acknowledged);
      }
      pending = pending.filter((i) => isRedirect(settled[i]!));
      if (pending.length === 0 || hop === 2 || !(this.redis instanceof Cluster)) break;
      await refreshSlots(this.redis);
    }
    if (fewest < replication.replicas) throw replicationShortfall(this.endpoint, fewest, replication.replicas, replication.timeoutMs);
    return settled;
  }

  /**
   * A run of `calls` one master serves, by EVALSHA only for the scripts that master is known to
   * hold: on a cluster each node caches scripts of its own (a promoted replica or a restarted node
   * none), so a script first goes to each master by EVAL, which loads it there, and a NOSCRIPT
   * forgets it again. So runScripts's NOSCRIPT retry, a second round trip, is left for what nobody
   * could know (a SCRIPT FLUSH).
   */
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head): Promise<Settled>;
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<{ replies: Settled; acknowledged: number | Error }>;
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head, replication?: Replication): Promise<Settled | { replies: Settled; acknowledged: number | Error }> {
    const some = run.indices.map((i) => calls[i]!);
    const loaded = run.master === undefined ? undefined : (this.loadedOn.get(run.master) ?? this.loadedOn.set(run.master, new Set()).get(run.master)!);
    const headOn: Head = (call) => {
      const sent = head(call);
      return sent[0] === 'evalsha' && loaded && !loaded.has(call.script.sha1) ? ['eval', call.script.lua] : sent;
    };
    const answered = replication ? await this.sendRun(some, headOn, replication) : await this.sendRun(some, headOn);
    if (loaded) {
      const replies = Array.isArray(answered) ? answered : answered.replies;
      replies.forEach((reply, i) => {
        const sha = some[i]!.script.sha1;
        if (reply instanceof Error && reply.message.startsWith('NOSCRIPT')) loaded.delete(sha);
        else if (!(reply instanceof Error && isRedirect(reply))) loaded.add(sha);
      });
    }
    return answered;
  }

  /** One pipeline (a plain command for one call): on a cluster, calls that one master serves. */
  private async sendRun(calls: readonly ScriptCall[], head: Head): Promise<Settled>;
  /** The same with a WAIT behind the calls: their replies, and how many replicas acknowledged (WAIT's error when it was refused). */
  private async sendRun(calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<{ replies: Settled; acknowledged: number | Error }>;
  private async sendRun(calls: readonly ScriptCall[], head: Head, replication?: Replication): Promise<Settled | { replies: Settled; acknowledged: number | Error }> {
    if (calls.length === 1 && !replication) {
      const call = calls[0]!;
      const [command, first] = head(call);
      try {
        return [(await this.redis.call(command, argv(first, call))) as Reply];
      } catch (error) {
        const failed = this.watch.failure(error);
        if (failed !== error) throw failed;
        return [asError(error)];
      }
    }
    const pipeline = this.redis.pipeline();
    for (const call of calls) {
      const [command, first] = head(call);
      pipeline.call(command, argv(first, call));
    }
    if (replication) pipeline.call('wait', replication.replicas, replication.timeoutMs);
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (error) {
      throw this.watch.failure(error);
    }
    const settled = settle(results);
    for (const value of settled) {
      if (value instanceof Error) {
        const failed = this.watch.failure(value);
        if (failed !== value) throw failed;
      }
    }
    if (!replication) return settled;
    const waited = settled.pop();
    return { replies: settled, acknowledged: typeof waited === 'number' ? waited : asError(waited instanceof Error ? waited : `WAIT answered ${String(waited)}`) };
  }
}

/** A connection (or cluster client) of its own that a blocking command parks on, and its watch. */
interface Parked {
  readonly redis: IoredisClient;
  readonly watch: ConnectionWatch;
}

/** A new client like `redis` whose blocking commands ioredis gives up on after `blockingTimeout` ms. */
function duplicate(redis: IoredisClient, blockingTimeout: number): IoredisClient {
  if (redis instanceof Cluster) return redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, blockingTimeout } });
  return redis.duplicate({ blockingTimeout });
}

/** A run of calls one master serves: the master (`host:port`, undefined for a call without a key) and the calls' indices. */
interface Run {
  readonly master: string | undefined;
  readonly indices: number[];
}

/**
 * The indices of `calls` in `among`, cut into runs of consecutive calls whose first keys the same
 * master serves (by the client's map of slots), in order: what one pipeline of a cluster client
 * may carry.
 */
function runsByMaster(cluster: Cluster, calls: readonly ScriptCall[], among: readonly number[] = calls.map((_, i) => i)): Run[] {
  const runs: Run[] = [];
  let last: string | undefined;
  for (const index of among) {
    const key = calls[index]!.keys[0];
    const master = key === undefined ? undefined : cluster.slots[slotOf(key)]?.[0];
    if (master !== undefined && master === last) runs[runs.length - 1]!.indices.push(index);
    else runs.push({ master, indices: [index] });
    last = master;
  }
  return runs;
}

/** A reply that says the call ran nowhere: its slot is served elsewhere (MOVED) or moving (ASK). */
const isRedirect = (reply: Reply | Error): boolean => reply instanceof Error && /^(MOVED|ASK) /.test(reply.message);

/** Asks the cluster for its map of slots again; resolves when the answer is in (or failed: the next request finds out). */
function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => {
    (cluster as unknown as { refreshSlotsCache(callback: (error?: Error) => void): void }).refreshSlotsCache(() => resolve());
  });
}

/** How long a call queued behind a timed-out BLPOP may take to answer before its connection is dropped. */
const CALL_GRACE_MS = 2_000;

const seconds = (ms: number): number => Math.max(ms, 1) / 1000;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** EVAL/EVALSHA's arguments after the command: the script (or its sha1), numkeys, keys, args. */
function argv(first: string, call: ScriptCall): Array<string | number> {
  const out: Array<string | number> = [first, call.keys.length];
  for (const key of call.keys) out.push(key);
  for (const arg of call.args) out.push(arg);
  return out;
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
