import type { Replication, Reply, ScriptCall, Transport } from '../transport.js';

/** A ride waiting for its request: see RidingTransport.ride. */
export interface Ride {
  /**
   * The replies to the calls it added, in order (each a Reply or the Error Redis answered it
   * with), or null when it was cancelled before any request took it. Rejects when the request it
   * went with failed (then its calls may or may not have run).
   */
  readonly replies: Promise<Array<Reply | Error> | null>;
  /** Whether a request took it (and so whether the calls went). */
  readonly went: () => boolean;
  /**
   * Whether its calls ran behind the call they rode with: it went, and Redis ran that call in the
   * same request (not NOSCRIPT or another error, after which the caller sends it again alone).
   */
  readonly covered: () => boolean;
  /** Withdraws it if no request took it yet (replies then resolves null); else nothing. */
  cancel(): void;
}

interface Waiting {
  readonly match: (call: ScriptCall) => boolean;
  readonly make: () => readonly ScriptCall[];
  readonly onSent: () => void;
  went: boolean;
  covered: boolean;
  settle(replies: Array<Reply | Error> | null): void;
  fail(error: unknown): void;
}

/**
 * A transport whose requests can carry calls of another party: `ride(match, make)` adds the calls
 * `make()` builds (when the request goes, so they carry what is newest then) to the end of the
 * next request holding a call `match` picks out. The Worker's drain after an enqueue rides this
 * way: its first beat goes in the enqueue's own request, behind the enqueue (so it sees the job),
 * and a job enqueued through the API and run costs one request, not two. What the caller of
 * evalsha/eval gets back is the replies to its own calls only.
 *
 * Every call that rides must be harmless twice, as every call of the request it joins: the
 * client may send the request again (a claim is replayed by its request key, a completion fenced
 * by its token).
 */
export class RidingTransport implements Transport {
  readonly endpoint: string | undefined;
  private waiting: Waiting[] = [];

  constructor(readonly inner: Transport) {
    this.endpoint = inner.endpoint;
  }

  /**
   * Adds `make()`'s calls to the next request that holds a call `match` picks out; `onSent` is
   * told when that request goes.
   */
  ride(match: (call: ScriptCall) => boolean, make: () => readonly ScriptCall[], onSent: () => void = () => {}): Ride {
    let settle!: (replies: Array<Reply | Error> | null) => void;
    let fail!: (error: unknown) => void;
    const replies = new Promise<Array<Reply | Error> | null>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const waiting: Waiting = { match, make, onSent, went: false, covered: false, settle, fail };
    this.waiting.push(waiting);
    return {
      replies,
      went: () => waiting.went,
      covered: () => waiting.covered,
      cancel: () => {
        if (waiting.went) return;
        this.waiting = this.waiting.filter((w) => w !== waiting);
        settle(null);
      },
    };
  }

  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.send(calls, (all) => this.inner.evalsha(all, replication));
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.send(calls, (all) => this.inner.eval(all, replication));
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async send(calls: readonly ScriptCall[], go: (all: readonly ScriptCall[]) => Promise<Array<Reply | Error>>): Promise<Array<Reply | Error>> {
    if (this.waiting.length === 0) return go(calls);
    const riders = this.waiting.filter((w) => calls.some(w.match));
    if (riders.length === 0) return go(calls);
    this.waiting = this.waiting.filter((w) => !riders.includes(w));
    const all = [...calls];
    const spans: Array<[start: number, end: number]> = [];
    for (const rider of riders) {
      rider.went = true;
      const start = all.length;
      all.push(...rider.make());
      spans.push([start, all.length]);
      rider.onSent();
    }
    let replies: Array<Reply | Error>;
    try {
      replies = await go(all);
    } catch (error) {
      for (const rider of riders) rider.fail(error);
      throw error;
    }
    riders.forEach((rider, i) => {
      const rodeWith = calls.findIndex(rider.match);
      rider.covered = !(replies[rodeWith] instanceof Error);
      rider.settle(replies.slice(...spans[i]!));
    });
    return replies.slice(0, calls.length);
  }
}
