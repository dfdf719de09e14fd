import { Redis, type RedisOptions } from 'ioredis';
import type { BlockingTransport, Reply, ScriptCall } from '../transport.js';

type Settled = Array<Reply | Error>;

const settle = (results: Array<[Error | null, unknown]> | null): Settled =>
  (results ?? []).map(([error, value]) => error ?? (value as Reply));

/**
 * The core's Transport over ioredis (TCP). Several calls go out as one pipeline; a single call
 * as a plain command. `blpop` waits on a duplicate connection of its own, opened on first use.
 *
 * @example
 * const transport = IoredisTransport.connect(process.env.REDIS_URL!);
 * const queue = new Queue(transport, 'mail');
 */
export class IoredisTransport implements BlockingTransport {
  private blocking: Redis | undefined;

  /**
   * @param redis the connection to use
   * @param owned whether close() should also quit `redis` (true when this transport opened it)
   */
  constructor(
    readonly redis: Redis,
    private readonly owned = false,
  ) {}

  /** A transport on a new connection to `url`, closed with the transport. */
  static connect(url: string, options: RedisOptions = {}): IoredisTransport {
    return new IoredisTransport(quiet(new Redis(url, { protocol: 2, ...options })), true);
  }

  evalsha(calls: readonly ScriptCall[]): Promise<Settled> {
    return this.send(calls, (c) => ['evalsha', c.script.sha1]);
  }

  eval(calls: readonly ScriptCall[]): Promise<Settled> {
    return this.send(calls, (c) => ['eval', c.script.lua]);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    // blockingTimeout arms a client-side deadline (timeout + grace): a connection that died
    // silently must not park us forever.
    const blocking = (this.blocking ??= quiet(this.redis.duplicate({ blockingTimeout: 60_000 })));
    try {
      const reply = await blocking.blpop(...(keys as string[]), Math.max(timeoutMs, 1) / 1000);
      return reply ? reply[0] : null;
    } catch (error) {
      if (this.blocking !== blocking) return null; // interrupted
      throw error;
    }
  }

  interrupt(): void {
    const blocking = this.blocking;
    this.blocking = undefined;
    blocking?.disconnect();
  }

  async close(): Promise<void> {
    this.interrupt();
    if (this.owned) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async send(calls: readonly ScriptCall[], head: (c: ScriptCall) => [string, string]): Promise<Settled> {
    const argv = (c: ScriptCall): (string | number)[] => [...head(c).slice(1), c.keys.length, ...c.keys, ...c.args];
    if (calls.length === 1) {
      const call = calls[0]!;
      try {
        return [(await this.redis.call(head(call)[0], argv(call))) as Reply];
      } catch (error) {
        return [error instanceof Error ? error : new Error(String(error))];
      }
    }
    const pipeline = this.redis.pipeline();
    for (const call of calls) pipeline.call(head(call)[0], argv(call));
    return settle(await pipeline.exec());
  }
}

/**
 * ioredis prints connection errors to stderr unless someone listens; ours surface where they
 * matter, as the rejected command, so the connection's own error events are dropped.
 */
function quiet(redis: Redis): Redis {
  redis.on('error', () => {});
  return redis;
}
