import { Redis, type RedisOptions } from 'ioredis';
import type { BlockingTransport, ParkedReply, Reply, ScriptCall } from '../transport.js';

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

  evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.send(calls, (c) => ['evalsha', c.script.sha1]);
  }

  eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.send(calls, (c) => ['eval', c.script.lua]);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    const blocking = this.blockingConnection();
    try {
      const reply = await blocking.blpop(...(keys as string[]), seconds(timeoutMs));
      return reply ? reply[0] : null;
    } catch (error) {
      if (this.blocking !== blocking) return null; // interrupted
      throw error;
    }
  }

  async blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    const blocking = this.blockingConnection();
    // Both go out now, in order: Redis holds the EVALSHA in the connection's input until the
    // BLPOP returns, then runs it at once, and both replies come back together.
    const popped = blocking.blpop(...(keys as string[]), seconds(timeoutMs));
    const then = blocking.call('evalsha', argv(call.script.sha1, call)).then((value) => value as Reply, asError);
    let key: string | null;
    try {
      const reply = await popped;
      key = reply ? reply[0] : null;
    } catch (error) {
      if (this.blocking !== blocking) return { key: null, reply: undefined }; // interrupted
      throw error;
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

  interrupt(): void {
    const blocking = this.blocking;
    this.blocking = undefined;
    blocking?.disconnect();
  }

  async close(): Promise<void> {
    this.interrupt();
    if (this.owned) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** The doorbell connection, opened on first use. */
  private blockingConnection(): Redis {
    // blockingTimeout arms a client-side deadline (timeout + grace): a connection that died
    // silently must not park us forever.
    return (this.blocking ??= quiet(this.redis.duplicate({ blockingTimeout: 60_000 })));
  }

  private async send(calls: readonly ScriptCall[], head: (c: ScriptCall) => [string, string]): Promise<Settled> {
    if (calls.length === 1) {
      const call = calls[0]!;
      const [command, first] = head(call);
      try {
        return [(await this.redis.call(command, argv(first, call))) as Reply];
      } catch (error) {
        return [asError(error)];
      }
    }
    const pipeline = this.redis.pipeline();
    for (const call of calls) {
      const [command, first] = head(call);
      pipeline.call(command, argv(first, call));
    }
    return settle(await pipeline.exec());
  }
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
 * ioredis prints connection errors to stderr unless someone listens; ours surface where they
 * matter, as the rejected command, so the connection's own error events are dropped.
 */
function quiet(redis: Redis): Redis {
  redis.on('error', () => {});
  return redis;
}
