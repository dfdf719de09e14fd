import { performance } from 'node:perf_hooks';
import type { Claimed, Leases } from '../../lease/leases.js';
import type { LeaseTimers } from './lease-timers.js';
import type { Prefetch } from './prefetch.js';
import type { SettleCall, Settles } from './settles.js';
import type { SlotStrategy } from './slots.js';

/** Loop requests (claims, or settles with a claim) in flight at once. */
const MAX_REQUESTS_IN_FLIGHT = 2;

/** What the loop's next request is: a plain claim, or a beat (reap, promote, then claim). */
export type RequestKind = 'claim' | 'beat';

/** A loop request in flight: its reply (an Error when it failed; never rejects), what it asked for, the settles it carries. */
export interface InFlight<Payload> {
  readonly reply: Promise<Claimed<Payload> | Error>;
  readonly asked: number;
  /** Slots its settles free once recorded (they are in hand until then). */
  readonly freed: number;
  readonly cargo: ReadonlyArray<SettleCall<Payload>>;
  /** It is a beat: it reaps and promotes before it claims, and reports the next times. */
  readonly beat: boolean;
}

/**
 * The loop's requests in flight, oldest first, and how much they take. While busy the loop keeps
 * two in flight, each claiming at most half of what the consumer may hold, so Redis runs one
 * while this process runs the other's jobs (docs/design.md, "Two requests in flight"). Each reply
 * sets the clock against the server's, teaches 'auto' prefetch the round trip, and, for a beat,
 * when the last beat was.
 *
 * @example
 * if (!requests.sendIfRoom('claim', room, drained)) {
 *   const reply = await requests.oldest!.reply;
 *   requests.takeOldest(reply);
 * }
 */
export class Requests<Payload> {
  #lastBeatAt = 0;
  private readonly inFlight: Array<InFlight<Payload>> = [];

  constructor(
    private readonly leases: Leases<Payload>,
    private readonly leaseMs: number,
    private readonly slots: SlotStrategy<Payload>,
    private readonly prefetch: Prefetch,
    private readonly settles: Settles<Payload>,
    private readonly timers: LeaseTimers<Payload>,
  ) {}

  /** When the last beat's reply came back (performance.now() ms; 0 before the first). */
  get lastBeatAt(): number {
    return this.#lastBeatAt;
  }

  /** How many are in flight. */
  get count(): number {
    return this.inFlight.length;
  }

  /** No more may go out until one is back. */
  get full(): boolean {
    return this.inFlight.length >= MAX_REQUESTS_IN_FLIGHT;
  }

  /** The oldest in flight: its reply comes back first. */
  get oldest(): InFlight<Payload> | undefined {
    return this.inFlight[0];
  }

  /** Jobs the requests in flight asked for, less the slots their own settles free. */
  get taken(): number {
    return this.inFlight.reduce((n, r) => n + r.asked - r.freed, 0);
  }

  /** Whether a beat is in flight. */
  hasBeat(): boolean {
    return this.inFlight.some((r) => r.beat);
  }

  /**
   * How many jobs one request claims at most: a share of what the consumer may hold (its slots
   * and prefetch) so that MAX_REQUESTS_IN_FLIGHT requests can be in flight, in whole claim units.
   */
  private size(): number {
    const unit = this.slots.claimUnit;
    const share = (this.slots.prefetchSize() + this.prefetch.allowance()) / MAX_REQUESTS_IN_FLIGHT;
    return Math.max(unit, Math.ceil(share / unit) * unit);
  }

  /**
   * Sends a request when there is room for one: the first at once, a second behind it (it runs
   * in Redis while this process runs the first one's jobs) only when it fills its half; `room` is
   * what the consumer may claim now, `drained` says a reply came back short. With no claim to
   * make, the cargo goes on its own. Says what went out, if anything.
   */
  sendIfRoom(kind: RequestKind, room: number, drained: boolean): 'request' | 'settles' | undefined {
    if (this.full) return undefined;
    const cargo = this.settles.cargo;
    const freed = cargo.length > 0 ? this.slots.freedBy(cargo) : 0;
    // a request in flight takes what it asked for, less the slots its own settles free
    const taken = this.taken;
    const half = this.size();
    const want = Math.max(0, Math.min(room - taken + freed, half));
    // a second request waits until it fills its half. After a reply that came back short (nothing
    // more was claimable then: the queue ran dry, or its groups or rate limits are at their
    // limits) only one that carries settles goes: they free slots, a claim alone would find
    // nothing (docs/design/runtimes.md, "Two requests in flight")
    const sendNow = this.inFlight.length === 0 || (want >= half && (!drained || cargo.length > 0));
    if (sendNow && want > 0) {
      this.send(this.settles.takeCargo(), freed, want, kind);
      return 'request';
    }
    if (sendNow && cargo.length > 0) {
      void this.settles.sendAlone(this.settles.takeCargo());
      return 'settles';
    }
    return undefined;
  }

  /** Sends a claim (a beat, or settles with a claim) for `want` jobs; its reply never rejects. */
  private send(cargo: ReadonlyArray<SettleCall<Payload>>, freed: number, want: number, kind: RequestKind): void {
    const t0 = performance.now();
    const beat = kind === 'beat';
    const sent =
      cargo.length > 0
        ? this.settles.sendWithClaim(cargo, want, beat)
        : beat
          ? this.leases.beat({ n: want, leaseMs: this.leaseMs })
          : this.leases.claim(want, this.leaseMs);
    const reply = sent.then(
      (claimed) => {
        const t1 = performance.now();
        // not from a beat that fired slots: its second call (fireDue) came after `now` was read
        if (claimed.fired === 0) this.timers.setClock(claimed.now, (t0 + t1) / 2);
        this.prefetch.learnRoundTrip(t1 - t0);
        if (beat) this.#lastBeatAt = t1;
        return claimed;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    this.inFlight.push({ reply, asked: want, freed, cargo, beat });
  }

  /** The oldest request's reply is in: it leaves the list, and with it its cargo (see cargoAfter). */
  takeOldest(reply: Claimed<Payload> | Error): void {
    this.cargoAfter(this.inFlight.shift()!, reply);
  }

  /**
   * The loop stopped: waits for every request in flight, each reply's cargo handled as it comes
   * (their claimed jobs are left to their leases).
   */
  async waitAll(): Promise<void> {
    for (const request of this.inFlight.splice(0)) this.cargoAfter(request, await request.reply);
  }

  /**
   * A request's cargo once its reply is in. Recorded: its settles leave our hands as its jobs come
   * in, so the slots they free are the ones it filled. Failed: it recorded nothing, and they go on
   * their own, with retries.
   */
  private cargoAfter(request: InFlight<Payload>, reply: Claimed<Payload> | Error): void {
    if (!(reply instanceof Error)) this.settles.letGo(request.cargo);
    else if (request.cargo.length > 0) void this.settles.sendAlone(request.cargo);
  }
}
