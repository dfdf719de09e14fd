import { Redis, type RedisConfigCloudflare } from '@upstash/redis/cloudflare';
import type { Reply, ScriptCall, Transport } from '../transport.js';

type Settled = Array<Reply | Error>;
type Pipeline = ReturnType<Redis['pipeline']>;

/** Where fromEnv reads the REST endpoint: a Worker's `env`, or `process.env` on Node. */
export interface UpstashEnv {
  readonly UPSTASH_REDIS_REST_URL?: string;
  readonly UPSTASH_REDIS_REST_TOKEN?: string;
}

/** connect()'s options: the endpoint and token, plus any client option but the two it fixes. */
export type UpstashConnectOptions = Omit<RedisConfigCloudflare, 'url' | 'token' | 'automaticDeserialization'> & {
  readonly url: string;
  readonly token: string;
};

/**
 * The core's Transport over @upstash/redis (HTTP): however many calls, one `/pipeline` request,
 * each call's error kept apart (`keepErrors`) so a NOSCRIPT on one sends just that one again by
 * EVAL. Replies come back as Redis sent them: the client must not JSON-parse strings
 * (`automaticDeserialization: false`), or a job's payload text would turn into an object.
 * No connection to hold, so close() has nothing to do. Runs on Node and in a Worker alike.
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
  /** @param redis a client built with `automaticDeserialization: false` (checked) */
  constructor(readonly redis: Redis) {
    // opts is protected in the client's types but is where it keeps the setting
    const options = (redis as unknown as { opts?: { automaticDeserialization?: boolean } }).opts;
    if (options?.automaticDeserialization !== false) {
      throw new TypeError('UpstashTransport needs an @upstash/redis client built with automaticDeserialization: false');
    }
  }

  /**
   * A transport on a new client for `url`. Auto-pipelining is off: the transport batches by
   * itself, and every request it makes is one it asked for, which keeps request counts exact.
   */
  static connect({ url, token, ...options }: UpstashConnectOptions): UpstashTransport {
    return new UpstashTransport(
      new Redis({ enableAutoPipelining: false, ...options, url, token, automaticDeserialization: false }),
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

  evalsha(calls: readonly ScriptCall[]): Promise<Settled> {
    return this.send(calls, (pipeline, c) => pipeline.evalsha(c.script.sha1, [...c.keys], [...c.args]));
  }

  eval(calls: readonly ScriptCall[]): Promise<Settled> {
    return this.send(calls, (pipeline, c) => pipeline.eval(c.script.lua, [...c.keys], [...c.args]));
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {}

  private async send(calls: readonly ScriptCall[], add: (pipeline: Pipeline, call: ScriptCall) => void): Promise<Settled> {
    if (calls.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const call of calls) add(pipeline, call);
    const replies = await pipeline.exec({ keepErrors: true });
    // each error is Redis's own text, so the core can tell NOSCRIPT, EMQKIND and EMQARG apart
    return replies.map(({ result, error }) => (error ? new Error(error) : (result as Reply)));
  }
}
