import type { Cluster, Redis } from 'ioredis';
import { connectionError, describeCause, failureOf } from '../connection-failure.js';
import { type ConnectionError, type ConnectionFailure, InvalidArgumentError } from '../errors.js';
import { startTimer, type Timer } from '../timers.js';

/** Why a request of a transport closed by its own close() fails. */
const CLOSED_BY_TRANSPORT = 'the transport was closed';

/** How long a request waits for a connection by default (connectTimeoutMs), in ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Throws InvalidArgumentError unless `ms` is a whole number of ms, at least 1. */
export function checkConnectTimeout(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 1) throw new InvalidArgumentError(`connectTimeoutMs must be an integer >= 1, got ${String(ms)}`);
}

/** Failures retrying cannot mend: a request waiting for a connection fails at once on them. */
const PERMANENT: ReadonlySet<ConnectionFailure> = new Set(['auth', 'tls']);

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: ConnectionError) => void;
  readonly timer: Timer;
}

/**
 * One ioredis connection's state as a request needs it: whether it is ready, and if not, a wait
 * bounded by `timeoutMs` that ends in a ConnectionError naming the URL and the last cause seen.
 * ioredis itself would queue a command until it connects and fail it only after 20 reconnect
 * attempts (about 75 s) with "Reached the max retries per request limit", naming neither; so
 * requests are held here instead and written only to a ready connection. ioredis keeps
 * reconnecting on its own schedule; this only watches. A connection whose socket opens but whose
 * handshake never gets an answer (a port that accepts and stays silent) is dropped after
 * `timeoutMs` so ioredis tries again, instead of waiting on it for ever.
 *
 * @example
 * const watch = new ConnectionWatch(redis, 'redis://127.0.0.1:6379', 5_000);
 * await watch.ready(); // undefined (nothing to wait for) when the connection is ready now
 */
export class ConnectionWatch {
  /** The last error the connection reported, cleared when it is ready. */
  private lastError: unknown;
  private everReady: boolean;
  private readonly waiters = new Set<Waiter>();
  private handshake: Timer | undefined;
  private closed = false;

  constructor(
    private readonly redis: Redis | Cluster,
    /** The URL to name, without credentials. */
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    checkConnectTimeout(timeoutMs);
    this.everReady = redis.status === 'ready';
    redis.on('ready', () => {
      this.clearHandshake();
      this.everReady = true;
      this.lastError = undefined;
      for (const waiter of this.takeWaiters()) waiter.resolve();
    });
    redis.on('error', (error: unknown) => {
      this.lastError = error;
      const failure = failureOf(error);
      if (failure !== undefined && PERMANENT.has(failure)) this.failWaiters(failure);
    });
    redis.on('connect', () => {
      this.clearHandshake();
      this.handshake = startTimer(() => {
        this.handshake = undefined;
        if (this.redis.status === 'ready') return;
        this.lastError = Object.assign(new Error(`the connection opened but Redis did not answer within ${this.timeoutMs} ms`), { name: 'TimeoutError' });
        this.redis.disconnect(true);
      }, timeoutMs);
    });
    redis.on('close', () => this.clearHandshake());
    redis.on('end', () => {
      this.clearHandshake();
      this.failWaiters(this.ended());
    });
  }

  /**
   * Undefined when the connection is ready now (a request goes out at once); otherwise resolves
   * when it is, or rejects with a ConnectionError after `timeoutMs`, at once when the transport
   * was closed or the last attempt failed in a way retrying cannot mend (auth, TLS).
   */
  ready(): Promise<void> | undefined {
    const status = this.redis.status;
    if (this.closed || status === 'end') return Promise.reject(this.error(this.ended()));
    if (status === 'ready') return undefined;
    // a lazyConnect client connects on its first command, and none is written before it is ready
    if (status === 'wait') this.redis.connect().catch(() => {});
    const known = failureOf(this.lastError);
    if (known !== undefined && PERMANENT.has(known)) return Promise.reject(this.error(known));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: startTimer(() => {
          this.waiters.delete(waiter);
          reject(this.error(failureOf(this.lastError) ?? 'timeout', this.timeoutMs));
        }, this.timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** The transport closed the connection: requests fail at once from now on, and so do those waiting. */
  close(): void {
    this.closed = true;
    this.clearHandshake();
    this.failWaiters('closed');
  }

  /** What a request of a transport closed by its own close() fails with. */
  closedError(): ConnectionError {
    return connectionError(this.url, 'closed', { detail: CLOSED_BY_TRANSPORT, wasConnected: this.everReady });
  }

  /**
   * What a request that failed should reject with: a ConnectionError when `error` is a
   * connection failure (the connection was lost with the request out, the client is closed...),
   * else `error` itself (Redis's reply, the caller's to read).
   */
  failure(error: unknown): Error {
    const failure = failureOf(error);
    if (failure === undefined) return error instanceof Error ? error : new Error(String(error));
    if (this.closed || this.redis.status === 'end') return this.error(this.ended());
    if (failure !== 'lost') return this.error(failure, undefined, error);
    // ioredis fails a request it had sent when the connection drops ("max retries per request"):
    // the socket's own error, if it gave one, says why
    const why = this.lastError === undefined ? 'it closed with the request out' : describeCause(this.lastError);
    return connectionError(this.url, 'lost', { cause: error, detail: why });
  }

  /** Why the connection ended: closed by the transport, or given up (a retryStrategy of yours) after its last failure. */
  private ended(): ConnectionFailure {
    return this.closed ? 'closed' : (failureOf(this.lastError) ?? 'closed');
  }

  private error(failure: ConnectionFailure, withinMs?: number, cause: unknown = this.lastError): ConnectionError {
    const opened = failure === 'timeout' && cause === undefined && this.redis.status === 'connect';
    return connectionError(this.url, failure, {
      cause,
      wasConnected: this.everReady,
      ...(withinMs === undefined ? {} : { withinMs }),
      ...(failure === 'closed' ? { detail: this.closed ? CLOSED_BY_TRANSPORT : 'the client gave up reconnecting' } : opened ? { detail: 'the connection opened but Redis did not answer' } : {}),
    });
  }

  private failWaiters(failure: ConnectionFailure): void {
    const waiters = this.takeWaiters();
    if (waiters.length > 0) {
      const error = this.error(failure);
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  private takeWaiters(): Waiter[] {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter.timer.cancel();
    return waiters;
  }

  private clearHandshake(): void {
    this.handshake?.cancel();
    this.handshake = undefined;
  }
}
