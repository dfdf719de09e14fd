import { keyspace } from '../../keyspace.js';
import { startTimer, type Timer } from '../../timers.js';
import type { BlockingTransport, Replication, Reply, ScriptCall } from '../../transport.js';

/** What a partition's doorbell channel says: work to claim, or re-read the next due time. */
export type BellKind = 'wake' | 'sched';

/**
 * One partition's doorbell as the Loop parks on it, over a DoorbellHub's sharded subscription
 * instead of a BLPOP of its own: one BLPOP cannot wait on several slots, and a connection per
 * partition would cost 1,024 of them (docs/design.md, "Partitioned queues"). Scripts go to the
 * real transport; `blpop` waits for this partition's flag (set by `ring`), takes and clears it,
 * and answers the key a real BLPOP would have popped: the wake key for `wake`, the sched key for
 * `sched`. A flag rung while nobody waits is kept, so a ring between an empty claim and the park
 * still wakes it. No `blpopThen` (the claim cannot ride behind a message), no `xread`.
 *
 * @example
 * const bell = new PartitionBell(transport, 'mail~3');
 * bell.ring('wake');
 * await bell.blpop([bell.wakeKey, bell.schedKey], 5_000); // 'emq:{mail~3}:wake', at once
 */
export class PartitionBell implements BlockingTransport {
  /** The partition's doorbell key, which is also its sharded channel. */
  readonly wakeKey: string;
  /** The partition's schedule bell key. */
  readonly schedKey: string;
  readonly endpoint: string | undefined;
  private wake = false;
  private sched = false;
  /** The park waiting now: resolves with the key rung, or null. */
  private waiter: ((key: string | null) => void) | undefined;
  /** The keys it waits on. */
  private keys: readonly string[] = [];
  private timer: Timer | undefined;

  constructor(
    private readonly transport: BlockingTransport,
    partition: string,
  ) {
    this.endpoint = transport.endpoint;
    const keys = keyspace(partition);
    this.wakeKey = keys.key('wake');
    this.schedKey = keys.key('sched');
  }

  /** The hub heard `kind` on this partition's channel (or may have missed one: it rings both). */
  ring(kind: BellKind): void {
    if (kind === 'wake') this.wake = true;
    else this.sched = true;
    if (this.waiter) this.answer();
  }

  evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.transport.evalsha(calls, replication);
  }

  eval(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    return this.transport.eval(calls, replication);
  }

  ping(): Promise<void> {
    return this.transport.ping();
  }

  /** Nothing of its own to release: the hub and the real transport are closed by their owners. */
  async close(): Promise<void> {
    this.interrupt();
  }

  /**
   * Waits up to `timeoutMs` for this partition's flag among `keys`: the wake key when work was
   * rung (first, as BLPOP takes its keys in order), else the sched key, else null at the timeout
   * or when interrupted.
   */
  blpop(keys: readonly string[], timeoutMs: number): Promise<string | null> {
    this.interrupt();
    this.keys = keys;
    const now = this.take();
    if (now !== null) return Promise.resolve(now);
    return new Promise<string | null>((resolve) => {
      this.waiter = resolve;
      this.timer = startTimer(() => this.settle(null), Math.max(timeoutMs, 1));
    });
  }

  interrupt(): void {
    this.settle(null);
  }

  /** Answers the waiting park with the flag it can take, if any. */
  private answer(): void {
    const key = this.take();
    if (key !== null) this.settle(key);
  }

  /** Takes and clears the first flag rung among the keys waited on. */
  private take(): string | null {
    if (this.wake && this.keys.includes(this.wakeKey)) {
      this.wake = false;
      return this.wakeKey;
    }
    if (this.sched && this.keys.includes(this.schedKey)) {
      this.sched = false;
      return this.schedKey;
    }
    return null;
  }

  private settle(key: string | null): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    this.timer?.cancel();
    this.timer = undefined;
    waiter?.(key);
  }
}
