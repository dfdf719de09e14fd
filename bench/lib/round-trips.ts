import { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import type { BlockingTransport, ParkedReply, Replication, Reply, ScriptCall, StreamEntry } from '../../src/transport.js';

/**
 * echomq's client round trips: a BlockingTransport that counts each request it sends (one
 * EVALSHA or pipeline, the EVAL fallback, a PING, a BLPOP, a BLPOP with its claim behind it) and
 * passes it on.
 *
 * @example
 * const counted = new CountingTransport(IoredisTransport.connect(url));
 * const consumer = new Consumer(counted, 'q', handler);
 * // ... later: counted.requests
 */
export class CountingTransport implements BlockingTransport {
  requests = 0;

  constructor(readonly inner: BlockingTransport) {
    const xread = inner.xread;
    this.xread = xread
      ? (key: string, after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]> => {
          this.requests++;
          return xread.call(inner, key, after, count, blockMs, signal);
        }
      : undefined;
  }

  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    this.requests++;
    return this.inner.evalsha(calls, replication);
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    this.requests++;
    return this.inner.eval(calls, replication);
  }

  ping(): Promise<void> {
    this.requests++;
    return this.inner.ping();
  }

  blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    this.requests++;
    return this.inner.blpop(keys, timeoutMs);
  }

  blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    this.requests++;
    if (this.inner.blpopThen) return this.inner.blpopThen(keys, timeoutMs, call);
    return this.inner.blpop(keys, timeoutMs).then((key) => ({ key, reply: undefined }));
  }

  /**
   * The events stream's parked read, when the inner transport has one (a Queue's waits park on it
   * rather than poll): without it here, a wait through this transport would poll readEvents.
   */
  readonly xread: BlockingTransport['xread'];

  interrupt(): void {
    this.inner.interrupt();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

const IGNORED = Symbol('bench: not counted');
let installed: { port: number; writes: number } | undefined;

/**
 * Round trips of clients we cannot wrap (BullMQ's and groupmq's ioredis connections): every
 * write to a socket connected to the bench Redis counts once. ioredis writes one command, or one
 * whole pipeline, per write, so a write is a request the client then waits on. Sockets marked
 * with `ignoreSocketsOf` (the bench's own admin client) are left out.
 */
export function installSocketCounter(port: number): void {
  if (installed) {
    installed.port = port;
    return;
  }
  installed = { port, writes: 0 };
  const state = installed;
  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket & { [IGNORED]?: boolean }, ...args: unknown[]): boolean {
    if (this.remotePort === state.port && !this[IGNORED]) state.writes++;
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof Socket.prototype.write;
}

/** Socket writes to the bench Redis so far. */
export function socketWrites(): number {
  return installed?.writes ?? 0;
}

/** Leaves a connected ioredis client's socket out of the count. */
export function ignoreSocketsOf(redis: Redis): void {
  const stream = (redis as unknown as { stream?: Socket & { [IGNORED]?: boolean } }).stream;
  if (stream) stream[IGNORED] = true;
}
