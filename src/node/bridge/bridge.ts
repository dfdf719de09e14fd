import { createHash, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { Cluster, Redis, ReplyError } from 'ioredis';
import type { Reply } from '../../transport.js';
import type { ClusterNodeAddress, IoredisClient } from '../ioredis-transport.js';
import { clusterNode } from '../cluster-node.js';
import { runsByMaster } from '../cluster-runs.js';
import { settle } from '../ioredis-reply.js';
import { crossSlot, firstKeyOf } from './command-keys.js';
import {
  parseCommand,
  parseCommands,
  refusal,
  replyReader,
  RestRequestError,
  toRestReply,
  type RestCommand,
  type RestReply,
} from './rest-protocol.js';

/** What the bridge has served: tests read it to count an edge beat's Redis requests. */
export interface BridgeStats {
  /** HTTP requests received, whatever their answer (401s included). */
  readonly requests: number;
  /** Redis commands run for them: a pipeline or transaction of n commands counts n. */
  readonly commands: number;
  /** Requests refused for a missing or wrong token. */
  readonly unauthorized: number;
}

/** The bridge as a hono app, for mounting or for `app.request()` in tests. */
export interface Bridge {
  /** The hono app serving the REST API: `app.fetch` for any server, or `app.request` in tests. */
  readonly app: Hono;
  /** A snapshot of the counters. */
  stats(): BridgeStats;
  /** Zeroes the counters. */
  reset(): void;
}

/** Options for createBridge. */
export interface BridgeOptions {
  /**
   * The connection commands run on, or a Redis Cluster client: RESP2 (`protocol: 2`), as Upstash
   * replies in RESP2 shapes.
   */
  readonly redis: IoredisClient;
  /** The bearer token clients must send (UPSTASH_REDIS_REST_TOKEN). */
  readonly token: string;
}

/** Redis Cluster's words for a request whose keys hash to different slots. */
const CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot";

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * An Upstash-REST-compatible server over ioredis, so the edge code (@upstash/redis, the Worker)
 * runs against a real local Redis: `POST /` one command, `POST /pipeline` several,
 * `POST /multi-exec` a transaction. Commands go out by name upper-cased so that none of
 * ioredis's reply transformers (HGETALL to an object, ...) reshape what Redis said.
 *
 * Over a Redis Cluster a pipeline is cut into runs of consecutive commands one master serves,
 * sent one after another in order (`runsByMaster`, which cuts the transport's calls too); a
 * transaction must keep to one slot, or it is answered CROSSSLOT as Redis would.
 *
 * @example
 * const bridge = createBridge({ redis: new Redis(url, { protocol: 2 }), token: 'secret' });
 * const res = await bridge.app.request('/', {
 *   method: 'POST',
 *   headers: { authorization: 'Bearer secret' },
 *   body: JSON.stringify(['PING']),
 * }); // 200 {"result":"PONG"}
 */
export function createBridge({ redis, token }: BridgeOptions): Bridge {
  if (!token) throw new Error('the bridge needs a non-empty token');
  const expected = digest(token);
  let counters = { requests: 0, commands: 0, unauthorized: 0 };
  /** The Upstash-Sync-Token of the next answer: one Redis behind one connection reads its own writes already. */
  let syncToken = 0;

  // Hashing both sides gives equal lengths, so the comparison's time says nothing about the token.
  const authorized = (c: Context): boolean => {
    const header = c.req.header('authorization') ?? '';
    const given = /^Bearer\s+(.+)$/i.exec(header)?.[1] ?? c.req.query('_token');
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
  const base64 = (c: Context): boolean => c.req.header('upstash-encoding')?.toLowerCase() === 'base64';
  const body = async (c: Context): Promise<unknown> => {
    try {
      return JSON.parse(await c.req.text());
    } catch {
      throw new RestRequestError('ERR the request body is not JSON');
    }
  };

  /** Why `command` is answered without reaching Redis: not served, or (on a cluster) keys of two slots. */
  const refused = (command: RestCommand): string | undefined =>
    refusal(command) ?? (redis instanceof Cluster && crossSlot([command]) ? CROSSSLOT : undefined);

  /** One pipeline's reply per command: on a cluster, one pipeline per run of a master, in order. */
  const exec = async (commands: readonly RestCommand[], read: (value: unknown) => Reply): Promise<Array<Reply | Error>> => {
    const runs = redis instanceof Cluster ? runsByMaster(redis, commands, firstKeyOf).map((run) => run.indices.map((i) => commands[i]!)) : [commands];
    const replies: Array<Reply | Error> = [];
    for (const run of runs) {
      const pipeline = redis.pipeline();
      for (const command of run) pipeline.callBuffer(command.name, ...command.args);
      replies.push(...settle(await pipeline.exec(), read));
    }
    return replies;
  };

  /** Runs commands as a pipeline; refused ones answer their error without reaching Redis. */
  const runPipeline = async (commands: readonly RestCommand[], encode: boolean): Promise<RestReply[]> => {
    const sent = commands.filter((command) => refused(command) === undefined);
    counters.commands += sent.length;
    const replies = sent.length > 0 ? await exec(sent, replyReader(encode)) : [];
    let next = 0;
    return commands.map((command) => {
      const refusedWhy = refused(command);
      if (refusedWhy !== undefined) return { error: refusedWhy };
      // by index, not `??`: a null reply (GET of a missing key) is a reply like any other
      const at = next++;
      return toRestReply(at < replies.length ? replies[at]! : new Error('ERR no reply'));
    });
  };

  const app = new Hono();
  app.use('*', async (c, next) => {
    counters.requests += 1;
    if (!authorized(c)) {
      counters.unauthorized += 1;
      return c.json({ error: 'Unauthorized' }, 401);
    }
    // @upstash/redis keeps the last one and sends it back (read-your-writes); a new one per
    // answer is all it looks for, as every request here already sees the writes before it
    c.header('upstash-sync-token', String(++syncToken));
    await next();
    return undefined;
  });

  app.post('/', async (c) => {
    const command = parseCommand(await body(c));
    const refusedWhy = refused(command);
    if (refusedWhy !== undefined) return c.json({ error: refusedWhy }, 400);
    counters.commands += 1;
    try {
      const value: unknown = await redis.callBuffer(command.name, ...command.args);
      return c.json({ result: replyReader(base64(c))(value) });
    } catch (error) {
      // Redis refused the command: 400 as Upstash answers; anything else is the bridge's trouble
      return c.json({ error: (error as Error).message }, error instanceof ReplyError ? 400 : 500);
    }
  });

  app.post('/pipeline', async (c) => c.json(await runPipeline(parseCommands(await body(c)), base64(c))));

  app.post('/multi-exec', async (c) => {
    const commands = parseCommands(await body(c));
    // Upstash discards a transaction holding a command it does not serve, as a whole
    const refusedWhy = commands.map(refusal).find((r) => r !== undefined);
    if (refusedWhy !== undefined) return c.json({ error: refusedWhy }, 400);
    // a cluster runs a transaction on one node: keys of two slots are refused, as Redis would
    if (redis instanceof Cluster && crossSlot(commands)) return c.json({ error: CROSSSLOT }, 400);
    const multi = redis.multi();
    for (const command of commands) multi.callBuffer(command.name, ...command.args);
    counters.commands += commands.length;
    try {
      return c.json(settle(await multi.exec(), replyReader(base64(c))).map(toRestReply));
    } catch (error) {
      // EXECABORT: a command was malformed, so Redis ran none of them
      return c.json({ error: (error as Error).message }, error instanceof ReplyError ? 400 : 500);
    }
  });

  // Path-style commands (GET /set/k/v) and the streaming /subscribe and /monitor endpoints are
  // not served: a refused command says so in Upstash's words, anything else is unknown.
  app.all('*', (c) => {
    const first = c.req.path.split('/')[1] ?? '';
    const refused = first ? refusal({ name: first.toUpperCase(), args: [] }) : undefined;
    if (refused !== undefined) return c.json({ error: refused }, 400);
    return c.json({ error: `ERR ${c.req.method} ${c.req.path} is not served: POST a JSON command to /, /pipeline or /multi-exec` }, 404);
  });

  app.onError((error, c) => {
    if (error instanceof RestRequestError) return c.json({ error: error.message }, 400);
    return c.json({ error: `ERR ${error.message}` }, 500);
  });

  return {
    app,
    stats: () => ({ ...counters }),
    reset: () => {
      counters = { requests: 0, commands: 0, unauthorized: 0 };
    },
  };
}

/** Options for startBridge: the Redis, by URL or by cluster nodes (exactly one). */
export interface StartBridgeOptions {
  /** The Redis the bridge runs commands on. */
  readonly redisUrl?: string;
  /** Or the nodes of a Redis Cluster to learn it from (`host:port` or its parts; one is enough). */
  readonly clusterNodes?: readonly ClusterNodeAddress[];
  /** The bearer token clients must send (UPSTASH_REDIS_REST_TOKEN). */
  readonly token: string;
  /** Default: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1: the bridge is for local work and tests, never exposed. */
  readonly host?: string;
}

/** A bridge listening on a port. */
export interface RunningBridge {
  /** Its base URL, what UPSTASH_REDIS_REST_URL should say. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** A snapshot of the counters. */
  stats(): BridgeStats;
  /** Zeroes the counters. */
  reset(): void;
  /** Stops listening, drops open connections and closes the Redis connection. */
  close(): Promise<void>;
}

/**
 * Connects to Redis, or to a Redis Cluster with `clusterNodes` (failing within seconds when it
 * cannot), and serves the bridge on `host:port`.
 *
 * @example
 * const bridge = await startBridge({ redisUrl: 'redis://127.0.0.1:6379', token: 'secret' });
 * const redis = new Redis({ url: bridge.url, token: 'secret', automaticDeserialization: false });
 * await redis.set('k', 'v');
 * await bridge.close();
 */
export async function startBridge({ redisUrl, clusterNodes, token, port = 0, host = '127.0.0.1' }: StartBridgeOptions): Promise<RunningBridge> {
  if ((redisUrl === undefined) === (clusterNodes === undefined)) throw new Error('startBridge takes redisUrl or clusterNodes, one of them');
  const redis: IoredisClient = clusterNodes
    ? new Cluster(
        clusterNodes.map((n) => (typeof n === 'string' ? clusterNode(n) : n)),
        { slotsRefreshTimeout: 5_000, redisOptions: { protocol: 2, connectTimeout: 5_000 } },
      )
    : new Redis(redisUrl!, { protocol: 2, connectTimeout: 5_000 });
  const where = clusterNodes ? `the Redis Cluster of ${clusterNodes.map((n) => (typeof n === 'string' ? n.trim() : `${n.host}:${n.port}`)).join(',')}` : `Redis at ${redisUrl}`;
  // connection errors surface as the failed command's reply; the event itself is noise
  redis.on('error', () => {});
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5_000).unref()),
    ]);
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach ${where}: ${(error as Error).message}`);
  }
  const bridge = createBridge({ redis, token });
  // overrideGlobalObjects: the bridge runs inside other programs (tests, npm start) and must
  // not swap their global Request and Response
  const server = serve({ fetch: bridge.app.fetch, port, hostname: host, overrideGlobalObjects: false }) as Server;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    stats: bridge.stats,
    reset: bridge.reset,
    close: async () => {
      // keep-alive sockets would hold close() open until they idle out
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
