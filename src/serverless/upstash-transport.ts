import { Redis, type RedisConfigCloudflare } from '@upstash/redis/cloudflare';
import { connectionError, failureOf } from '../connection-failure.js';
import { RedisError, replicationShortfall } from '../errors.js';
import type { Replication, Reply, ScriptCall, Transport } from '../transport.js';

type Settled = Array<Reply | Error>;
type Pipeline = ReturnType<Redis['pipeline']>;

/** Where fromEnv reads the REST endpoint: a Worker's `env`, or `process.env` on Node. */
export interface UpstashEnv {
  /** The REST endpoint (the Upstash console, or `emq bridge` locally). */
  readonly UPSTASH_REDIS_REST_URL?: string;
  /** The bearer token the endpoint requires. */
  readonly UPSTASH_REDIS_REST_TOKEN?: string;
}

/** connect()'s options: the endpoint and token, plus any client option but the two it fixes. */
export type UpstashConnectOptions = Omit<RedisConfigCloudflare, 'url' | 'token' | 'automaticDeserialization'> & {
  /** The REST endpoint, e.g. `https://eu1-example.upstash.io`. */
  readonly url: string;
  /** The bearer token the endpoint requires. */
  readonly token: string;
  /**
   * How long one request may take, the client's retries included, before it fails with EMQREDIS
   * (default 10 s): a stalled request must not hold a Worker's beat to the platform's limit.
   */
  readonly timeoutMs?: number;
};

/** The default of `timeoutMs`. */
const DEFAULT_TIMEOUT_MS = 10_000;
type Signal = NonNullable<RedisConfigCloudflare['signal']>;

/**
 * The core's Transport over @upstash/redis (HTTP): however many calls, one `/pipeline` request,
 * each call's error kept apart (`keepErrors`) so a NOSCRIPT on one sends just that one again by
 * EVAL. Replies come back as Redis sent them: the client must not JSON-parse strings
 * (`automaticDeserialization: false`), or a job's payload text would turn into an object.
 * No connection to hold, so close() has nothing to do. Runs on Node and in a Worker alike.
 *
 * Errors: a Redis error reply stays one call's Error value (the core tells NOSCRIPT, EMQKIND and
 * EMQARG apart by its text); anything else rejects with RedisError (EMQREDIS, 503) naming the
 * endpoint, never the token: ConnectionError (`reason`) when Redis could not be reached (fetch
 * refused, DNS, TLS, the timeout, a refused token), worded as the ioredis transport words it. The client retries a request whose fetch throws (5 more times, backing off 50 ms to
 * 2.7 s, about 4.3 s in all), and a fetch may throw after Redis ran the request, so every
 * request sent through here must be harmless twice. connect() bounds each request, retries
 * included, by `timeoutMs`: one that stalls fails at it, and one whose timeout falls in a backoff
 * pause fails when the pause ends (at most 2.7 s later).
 *
 * @example
 * // in a Worker
 * const transport = UpstashTransport.fromEnv(env);
 * const queue = new Queue(transport, 'mail');
 * @example
 * // any client you built, as long as it leaves replies alone
 * import { Redis } from '@upstash/redis/cloudflare';
 * const transport = new UpstashTransport(new Redis({ url, token, automaticDeserialization: false }));
 */
export class UpstashTransport implements Transport {
  /** The endpoint errors name: origin and path of the REST URL, no credentials. */
  readonly endpoint: string;
  /** The URL and token as the client holds them, kept out of every message. */
  private readonly url: string;
  private readonly token: string;
  /** The bound on one request, retries included, when connect() set it. */
  private readonly timeoutMs: number | undefined;

  /**
   * @param redis a client built with `automaticDeserialization: false` (checked)
   * @param timeoutMs the deadline the client's requests carry, to name in messages
   */
  constructor(
    readonly redis: Redis,
    timeoutMs?: number,
  ) {
    this.timeoutMs = timeoutMs;
    // opts and client are protected in the client's types but keep the setting, URL and token
    const inner = redis as unknown as {
      opts?: { automaticDeserialization?: boolean };
      client?: { baseUrl?: string; headers?: { authorization?: string } };
    };
    if (inner.opts?.automaticDeserialization !== false) {
      throw new TypeError('UpstashTransport needs an @upstash/redis client built with automaticDeserialization: false');
    }
    this.url = inner.client?.baseUrl ?? '';
    this.token = inner.client?.headers?.authorization?.replace(/^Bearer /, '') ?? '';
    this.endpoint = endpointOf(this.url);
  }

  /**
   * A transport on a new client for `url`. Auto-pipelining is off: the transport batches by
   * itself, and every request it makes is one it asked for, which keeps request counts exact.
   */
  static connect({ url, token, timeoutMs = DEFAULT_TIMEOUT_MS, signal, ...options }: UpstashConnectOptions): UpstashTransport {
    return new UpstashTransport(
      new Redis({
        enableAutoPipelining: false,
        ...options,
        signal: deadline(timeoutMs, signal),
        url,
        token,
        automaticDeserialization: false,
      }),
      timeoutMs,
    );
  }

  /** connect() with UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN from `env`. */
  static fromEnv(env: UpstashEnv, options: Omit<UpstashConnectOptions, 'url' | 'token'> = {}): UpstashTransport {
    const url = env.UPSTASH_REDIS_REST_URL;
    const token = env.UPSTASH_REDIS_REST_TOKEN;
    const missing = [url ? '' : 'UPSTASH_REDIS_REST_URL', token ? '' : 'UPSTASH_REDIS_REST_TOKEN'].filter(Boolean);
    if (!url || !token) throw new TypeError(`UpstashTransport.fromEnv: ${missing.join(' and ')} not set`);
    return UpstashTransport.connect({ ...options, url, token });
  }

  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.send(calls, (pipeline, c) => pipeline.evalsha(c.script.sha1, [...c.keys], [...c.args]), replication);
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.send(calls, (pipeline, c) => pipeline.eval(c.script.lua, [...c.keys], [...c.args]), replication);
  }

  async ping(): Promise<void> {
    try {
      await this.redis.ping();
    } catch (error) {
      throw this.failed(error);
    }
  }

  async close(): Promise<void> {}

  /**
   * One `/pipeline` request; with `replication`, `WAIT replicas timeoutMs` rides last in it. Upstash
   * (and `emq bridge`, which answers as Upstash does) refuses WAIT: then the writes are applied but
   * the request rejects with RedisError saying so; a REST proxy in front of a Redis of your own
   * may run it.
   */
  private async send(calls: readonly ScriptCall[], add: (pipeline: Pipeline, call: ScriptCall) => void, replication?: Replication): Promise<Settled> {
    if (calls.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const call of calls) add(pipeline, call);
    if (replication) addCommand(pipeline, ['wait', replication.replicas, replication.timeoutMs]);
    let settled: Settled;
    try {
      const replies = await pipeline.exec({ keepErrors: true });
      // each error is Redis's own text, so the core can tell NOSCRIPT, EMQKIND and EMQARG apart
      settled = replies.map(({ result, error }) => (error ? new Error(error) : (result as Reply)));
    } catch (error) {
      throw this.failed(error);
    }
    if (!replication) return settled;
    const waited = settled.pop();
    if (typeof waited !== 'number') {
      const why = waited instanceof Error ? waited.message : String(waited);
      throw new RedisError(`Redis at ${this.endpoint} did not run WAIT (durability 'replicated' needs a Redis that serves it): ${why}`);
    }
    if (waited < replication.replicas) throw replicationShortfall(this.endpoint, waited, replication.replicas, replication.timeoutMs);
    return settled;
  }

  /**
   * The request failed as a whole: Redis gave no reply to read. Redis that could not be reached
   * (refused, DNS, TLS, the timeout, a refused token) is a ConnectionError worded as the ioredis
   * transport words it; anything else (an HTTP error status, a body that is no reply) a RedisError.
   */
  private failed(error: unknown): RedisError {
    const cause = error instanceof Error ? error : new Error(String(error));
    // the client appends the whole request body (scripts, payloads) to an HTTP error's message
    let why = cause.message.split(', command was: ')[0]!;
    // fetch's own message is "fetch failed" on Node: the reason (ECONNREFUSED...) is its cause
    if (cause.cause instanceof Error) why += ` (${cause.cause.message})`;
    // fetch may quote the URL as given, which may carry credentials or `?_token=`
    if (this.url) why = why.split(this.url).join(this.endpoint);
    if (this.token) why = why.split(this.token).join('<token>');
    if (why.length > 300) why = `${why.slice(0, 300)}...`;
    const detail = `${cause.name}: ${why}`;
    const failure = failureOf(cause) ?? (/^(Unauthorized|WRONGPASS|NOAUTH)/i.test(why) ? 'auth' : undefined);
    if (failure === undefined) return new RedisError(`Redis at ${this.endpoint} failed: ${detail}`, { cause });
    const withinMs = failure === 'timeout' && this.timeoutMs !== undefined ? { withinMs: this.timeoutMs } : {};
    return connectionError(this.endpoint, failure, { cause, detail, ...withinMs });
  }
}

/**
 * The client's signal option as a function: the client calls it once per request (so one deadline
 * covers the request's retries), and throws on abort, where given a bare signal it would answer an
 * aborted request with a made-up 200 whose body is no reply.
 */
function deadline(timeoutMs: number, theirs: Signal | undefined): () => AbortSignal {
  return () => {
    const timeout = AbortSignal.timeout(timeoutMs);
    if (theirs === undefined) return timeout;
    return AbortSignal.any([typeof theirs === 'function' ? theirs() : theirs, timeout]);
  };
}

/**
 * Puts any command in `pipeline`: the client has a method per command it knows and none for
 * WAIT, so a DBSIZE (whose reply it leaves alone) is added and its words replaced.
 */
function addCommand(pipeline: Pipeline, command: Array<string | number>): void {
  pipeline.dbsize();
  const commands = (pipeline as unknown as { commands: Array<{ command: Array<string | number> }> }).commands;
  commands[commands.length - 1]!.command = command;
}

/** The endpoint to name in errors: origin and path only. */
function endpointOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return url.origin + url.pathname.replace(/\/$/, '');
  } catch {
    return 'the REST endpoint';
  }
}
