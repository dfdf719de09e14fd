import type { ScriptSource } from './generated/scripts.js';

/** What Redis replies inside a script's answer: Lua tables become arrays, nil and false null. */
export type Reply = string | number | null | Reply[];

/** One script invocation. */
export interface ScriptCall {
  /** The script to run. */
  readonly script: ScriptSource;
  /** Its KEYS (one cluster slot: the queue's hash tag). */
  readonly keys: readonly string[];
  /** Its ARGV. */
  readonly args: readonly (string | number)[];
}

/**
 * Replicas a round trip's writes must reach before it resolves (`durability: 'replicated'`): the
 * transport sends `WAIT replicas timeoutMs` right behind the calls, in the same round trip (on a
 * cluster, behind each master's run of calls), and rejects with ReplicationError when a WAIT
 * answers fewer.
 */
export interface Replication {
  /** How many replicas must acknowledge the writes (WAIT's numreplicas), at least 1. */
  readonly replicas: number;
  /** How long Redis waits for them, in ms (WAIT's timeout), at least 1. */
  readonly timeoutMs: number;
}

/**
 * The little the core needs from a Redis client. Each runtime's adapter fills it in
 * (`echomq/node` over ioredis, `echomq/edge` over @upstash/redis); the core never imports one.
 * Both methods send all calls in one round trip and resolve per call, an Error standing in for
 * each call Redis refused; a request that failed as a whole rejects, with a ConnectionError
 * (naming the endpoint and the cause) when Redis could not be reached.
 */
export interface Transport {
  /**
   * Where this transport reaches Redis, for messages and log lines: a URL without credentials.
   * Optional: a transport without one is named "Redis".
   */
  readonly endpoint?: string;
  /**
   * EVALSHA each call by its script's sha1; with `replication`, a WAIT follows them in the same
   * round trip (see Replication): the calls' replies as without it, or ReplicationError. A
   * transport that wraps another passes `replication` on, or durability is silently dropped.
   */
  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>>;
  /** EVAL each call with its script's source (the fallback when Redis answers NOSCRIPT); `replication` as evalsha's. */
  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>>;
  /** PING: resolves when Redis answers. */
  ping(): Promise<void>;
  /** Releases the connection(s) this transport opened. */
  close(): Promise<void>;
}

/**
 * A transport that can also wait: the parked consumer's BLPOP on the doorbell, on a connection of
 * its own so waiting never holds up the scripts. Node only: an edge runtime cannot hold a
 * blocking command.
 */
export interface BlockingTransport extends Transport {
  /**
   * BLPOP `keys` for at most `timeoutMs`: the key a token came from, or null at the timeout or
   * when interrupted. Redis checks a blocked command's timeout only on its hz tick (100 ms by
   * default), so a caller that must act at an exact time keeps its own timer.
   */
  blpop(keys: readonly string[], timeoutMs: number): Promise<string | null>;
  /**
   * `blpop` with `call` (EVALSHA) queued right behind it on the same connection: Redis runs the
   * call the moment the BLPOP returns (a token or the timeout), so a woken consumer has its claim
   * without a second round trip. `reply` is the call's reply, an Error when Redis refused it
   * (NOSCRIPT included: the caller falls back to runScripts), or undefined when it never came
   * (interrupted, or the connection was lost). Optional: a consumer without it uses `blpop`.
   */
  blpopThen?(keys: readonly string[], timeoutMs: number, call: ScriptCall): Promise<ParkedReply>;
  /** Ends a pending blpop at once: it resolves null. */
  interrupt(): void;
  /**
   * XREAD BLOCK on one stream: at most `count` entries after entry id `after`, waiting up to
   * `blockMs` for the first; [] at the timeout, and at once when `signal` aborts (the connection
   * it parked on is dropped). Each stream parks on a connection of its own, opened on first use
   * and kept while reads follow one another: never the doorbell's, never the scripts'. Optional:
   * without it a subscriber reads the stream at an interval (`Queue.events`).
   */
  xread?(key: string, after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]>;
}

/** One stream entry as XRANGE and XREAD give it: its id and its flat field-value list. */
export interface StreamEntry {
  /** `<ms>-<seq>`. */
  readonly id: string;
  /** field, value, field, value, ... */
  readonly fields: string[];
}

/** What `blpopThen` saw: the key a token came from (null at the timeout) and the call's reply. */
export interface ParkedReply {
  /** The key a token came from, or null at the timeout or when interrupted. */
  readonly key: string | null;
  /** The call's reply, an Error when Redis refused it, undefined when none came. */
  readonly reply: Reply | Error | undefined;
}
