import type { Replication, Reply, ScriptCall, Transport } from '../transport.js';

/** A ride waiting for its request: see RidingTransport.ride. */
export interface Ride {
  /**
   * The replies to the calls it added, in order (each a Reply or the Error Redis answered it
   * with), or null when it was cancelled before any request took it. Rejects when the request it
   * went with failed (then its calls may or may not have run).
   */
  readonly replies: Promise<Array<Reply | Error> | null>;
  /**
   * Whether every call of its lane sent since the ride was made went with a ride behind it, in a
   * request whose calls of that lane Redis ran (no NOSCRIPT or other error, after which the caller
   * sends the call again alone). A caller whose own call of the lane went out meanwhile knows then
   * that a ride's calls ran after it, whichever request's ride that was.
   */
  readonly covered: () => boolean;
  /** Withdraws it if no request took it yet (replies then resolves null); else nothing. */
  cancel(): void;
}

interface Waiting {
  readonly lane: string;
  readonly make: () => readonly ScriptCall[];
  readonly onSent: () => void;
  /** The lane's uncovered calls when the ride was made. */
  readonly missedAtStart: number;
  went: boolean;
  settle(replies: Array<Reply | Error> | null): void;
  fail(error: unknown): void;
}

/**
 * A transport whose requests can carry calls of another party. Calls belong to lanes
 * (`laneOf`: the Worker's lanes are its queues' enqueues); `ride(lane, make)` adds the calls
 * `make()` builds (when the request goes, so they carry what is newest then) to the end of the
 * next request holding a call of that lane. A request takes at most one waiting ride a lane, and
 * the calls of that lane it holds all run before the ride's. The Worker's drain after an enqueue
 * rides this way: its first beat goes in the enqueue's own request, behind the enqueue (so it
 * sees the job), and a job enqueued through the API and run costs one request, not two. What the
 * caller of evalsha/eval gets back is the replies to its own calls only.
 *
 * A lane's calls that went without a ride, or that Redis did not run, are counted (`covered`):
 * concurrent requests of one lane may take each other's rides, so a request asks whether every
 * call of the lane went covered since it made its ride, not whether its own ride went.
 *
 * Every call that rides must be harmless twice, as every call of the request it joins: the
 * client may send the request again (a claim is replayed by its request key, a completion fenced
 * by its token).
 */
export class RidingTransport implements Transport {
  readonly endpoint: string | undefined;
  private waiting: Waiting[] = [];
  /** Per lane, its calls that went uncovered so far. */
  private readonly missed = new Map<string, number>();

  constructor(
    readonly inner: Transport,
    private readonly laneOf: (call: ScriptCall) => string | undefined,
  ) {
    this.endpoint = inner.endpoint;
  }

  /**
   * Adds `make()`'s calls to the next request that holds a call of `lane`; `onSent` is told when
   * that request goes.
   */
  ride(lane: string, make: () => readonly ScriptCall[], onSent: () => void = () => {}): Ride {
    let settle!: (replies: Array<Reply | Error> | null) => void;
    let fail!: (error: unknown) => void;
    const replies = new Promise<Array<Reply | Error> | null>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const waiting: Waiting = { lane, make, onSent, missedAtStart: this.missed.get(lane) ?? 0, went: false, settle, fail };
    this.waiting.push(waiting);
    return {
      replies,
      covered: () => (this.missed.get(lane) ?? 0) === waiting.missedAtStart,
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

  private miss(lane: string): void {
    this.missed.set(lane, (this.missed.get(lane) ?? 0) + 1);
  }

  private async send(calls: readonly ScriptCall[], go: (all: readonly ScriptCall[]) => Promise<Array<Reply | Error>>): Promise<Array<Reply | Error>> {
    // the lanes of this request, each with the index of its calls
    let lanes: Map<string, number[]> | undefined;
    calls.forEach((call, i) => {
      const lane = this.laneOf(call);
      if (lane === undefined) return;
      lanes ??= new Map();
      const at = lanes.get(lane);
      if (at) at.push(i);
      else lanes.set(lane, [i]);
    });
    if (!lanes) return go(calls);
    const riders: Array<{ rider: Waiting; at: number[]; start: number; end: number }> = [];
    const all = [...calls];
    for (const [lane, at] of lanes) {
      const rider = this.waiting.find((w) => w.lane === lane);
      if (!rider) {
        this.miss(lane);
        continue;
      }
      this.waiting = this.waiting.filter((w) => w !== rider);
      rider.went = true;
      const start = all.length;
      all.push(...rider.make());
      riders.push({ rider, at, start, end: all.length });
      rider.onSent();
    }
    if (riders.length === 0) return go(calls);
    let replies: Array<Reply | Error>;
    try {
      replies = await go(all);
    } catch (error) {
      for (const { rider } of riders) {
        this.miss(rider.lane);
        rider.fail(error);
      }
      throw error;
    }
    for (const { rider, at, start, end } of riders) {
      if (at.some((i) => replies[i] instanceof Error)) this.miss(rider.lane);
      rider.settle(replies.slice(start, end));
    }
    return replies.slice(0, calls.length);
  }
}
