import type { Cluster, Redis } from 'ioredis';
import type { ParkedReply, Reply, ScriptCall, StreamEntry } from '../transport.js';
import type { ConnectionWatch } from './connection-watch.js';
import { asError, asReply } from './ioredis-reply.js';
import { argv } from './script-sender.js';

/** A connection (or cluster client) of its own that a blocking command parks on, and its watch. */
export interface Parked {
  readonly redis: Redis | Cluster;
  readonly watch: ConnectionWatch;
}

/**
 * Opens a client like the transport's whose blocking commands ioredis gives up on after
 * `blockingTimeout` ms: a connection that died silently must not park a read forever.
 */
export type OpenParked = (blockingTimeout: number) => Parked;

/** How long a call queued behind a timed-out BLPOP may take to answer before its connection is dropped. */
const CALL_GRACE_MS = 2_000;

/**
 * IoredisTransport's blocking reads, each parked on a connection of its own so that waiting never
 * holds up the scripts: the doorbell's BLPOP (and the claim queued behind it) on one, opened on
 * first use; XREAD BLOCK on one per stream key, kept while reads follow one another.
 */
export class BlockingReads {
  private doorbell: Parked | undefined;
  /** The connections XREAD BLOCK parks on, one per stream key. */
  private readonly streams = new Map<string, Parked>();
  /** close() was called: no connection is opened any more. */
  private closed = false;

  /** @param closedError what a read after close() fails with */
  constructor(
    private readonly open: OpenParked,
    private readonly closedError: () => Error,
  ) {}

  /** As BlockingTransport.blpop. */
  async blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    const doorbell = this.doorbellConnection();
    try {
      await doorbell.watch.ready();
      const reply = await doorbell.redis.blpop(...(keys as string[]), seconds(timeoutMs));
      return reply ? reply[0] : null;
    } catch (error) {
      if (this.doorbell !== doorbell) return null; // interrupted
      throw doorbell.watch.failure(error);
    }
  }

  /** As BlockingTransport.blpopThen. */
  async blpopThen(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply> {
    const doorbell = this.doorbellConnection();
    try {
      await doorbell.watch.ready();
    } catch (error) {
      if (this.doorbell !== doorbell) return { key: null, reply: undefined }; // interrupted
      throw error;
    }
    // Both go out now, in order: Redis holds the EVALSHA in the connection's input until the
    // BLPOP returns, then runs it at once, and both replies come back together.
    const popped = doorbell.redis.blpop(...(keys as string[]), seconds(timeoutMs));
    const then = doorbell.redis.call('evalsha', argv(call.script.sha1, call)).then(asReply, asError);
    let key: string | null;
    try {
      const reply = await popped;
      key = reply ? reply[0] : null;
    } catch (error) {
      if (this.doorbell !== doorbell) return { key: null, reply: undefined }; // interrupted
      throw doorbell.watch.failure(error);
    }
    if (key !== null) return { key, reply: await then };
    // A null BLPOP is Redis's timeout, or ioredis's own deadline on a connection that may have
    // died silently: then the call's reply would never come, so wait for it only so long.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CALL_GRACE_MS)));
    const reply: Reply | Error | undefined = await Promise.race([then, late]);
    clearTimeout(timer);
    if (reply === undefined && this.doorbell === doorbell) this.interrupt();
    return { key: null, reply };
  }

  /** As BlockingTransport.xread. */
  async xread(key: string, after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]> {
    if (signal?.aborted) return [];
    let parked = this.streams.get(key);
    if (!parked) this.streams.set(key, (parked = this.connection(blockMs + 60_000)));
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

  /** Ends a pending blpop at once (it resolves null) by dropping the doorbell connection. */
  interrupt(): void {
    const doorbell = this.doorbell;
    this.doorbell = undefined;
    doorbell?.redis.disconnect();
  }

  /**
   * Drops every parked connection, the doorbell's and the streams', for good: a read after it
   * fails, so a reader parked when it closed (an events reader lingering after its last waitFor)
   * ends instead of parking again on a new connection that would hold the process alive.
   */
  close(): void {
    this.closed = true;
    this.interrupt();
    for (const { redis, watch } of this.streams.values()) {
      watch.close();
      redis.disconnect();
    }
    this.streams.clear();
  }

  /** The doorbell connection, opened on first use. */
  private doorbellConnection(): Parked {
    // blockingTimeout arms a client-side deadline (timeout + grace)
    return (this.doorbell ??= this.connection(60_000));
  }

  private connection(blockingTimeout: number): Parked {
    if (this.closed) throw this.closedError();
    return this.open(blockingTimeout);
  }
}

const seconds = (ms: number): number => Math.max(ms, 1) / 1000;
