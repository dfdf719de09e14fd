import { performance } from 'node:perf_hooks';
import type { Leases } from '../../lease/leases.js';
import { startInterval, startTimer, type Timer } from '../../timers.js';
import { type ConsumerHooks, fireHook } from './hooks.js';
import { type JobsInHand, leaseOf } from './jobs-in-hand.js';
import type { Runs } from './runs.js';
import type { SettlesLoop } from './settles.js';

/** A local timer and the server time (ms) it fires for. */
interface ArmedTimer {
  readonly at: number;
  timer: Timer | undefined;
  /** Disarmed: a wait finishing in setImmediate turns stops at its next turn. */
  cancelled: boolean;
}

/**
 * How long past a due time, by the estimate of the server's clock, a timer runs its beat (ms):
 * the estimate is good to a few tenths of a ms (the middle of a round trip, the floored ms the
 * scripts report corrected by half), and the beat takes a one-way trip more to reach Redis, so it
 * finds the time come; a beat that arrives early anyway finds nothing due and its reply re-arms
 * the timer for the same time.
 */
const DUE_MARGIN_MS = 0.3;
/**
 * How early a timer's setTimeout wakes (ms): Node fires it 0.5-1 ms late, so the last stretch is
 * waited in setImmediate turns, which yield to I/O between them.
 */
const WAKE_EARLY_MS = 2;

/**
 * A parked consumer's own clocks, against an estimate of the server's: a timer for the next due
 * job and one for the next lease deadline, and the interval that renews every held lease. Redis
 * wakes a blocked BLPOP on timeout only at its hz tick, so promotion and reaping run on these
 * timers instead: their tick (reap and promote, no claim) rings the doorbell for whoever is
 * parked. Renewal keeps the leases of running and waiting jobs alive in one call, aborts a job
 * whose lease was lost, and tells the loop of a job whose cancel was asked.
 *
 * @example
 * const timers = new LeaseTimers(leases, leaseMs, renewMs, hooks, jobs, runs, loop);
 * timers.startRenewing();
 * timers.setClock(claimed.now, (sentAt + performance.now()) / 2);
 * timers.arm(claimed.nextDueAt, claimed.nextLeaseEnd);
 */
export class LeaseTimers<Payload> {
  /**
   * Server ms minus performance.now(), from the last reply that carried the server time; until
   * the first, this host's clock (a timer armed from a reply that carried no reading, a beat that
   * fired scheduler slots, is armed on it and moved by the first reading).
   */
  private serverOffset = Date.now() - performance.now();
  private dueTimer: ArmedTimer | undefined;
  private leaseTimer: ArmedTimer | undefined;
  private renewTimer: Timer | undefined;

  constructor(
    private readonly leases: Leases<Payload>,
    private readonly leaseMs: number,
    private readonly renewMs: number,
    private readonly hooks: ConsumerHooks<Payload>,
    private readonly jobs: JobsInHand<Payload>,
    private readonly runs: Runs<Payload>,
    /** The loop itself: once it is stopping, no timer is armed or runs any more. */
    private readonly loop: Pick<SettlesLoop, 'stopping'>,
    /** A renewal answered that a job's cancel was asked (Loop.cancelAsked). */
    private readonly onCancel: (id: string, reason: string) => void = () => {},
  ) {}

  /** Redis read `serverNow` (ms) at `localAt` (performance.now() time, e.g. a round trip's middle). */
  setClock(serverNow: number, localAt: number): void {
    // the scripts' now is TIME floored to the ms (includes/now_ms.lua): the server was half a ms
    // past it on average, and an offset taken from the floor arms every timer 0.5 ms late
    const offset = serverNow + 0.5 - localAt;
    const moved = Math.abs(offset - this.serverOffset) > WAKE_EARLY_MS;
    this.serverOffset = offset;
    // a timer set on the old estimate would fire early or late by the move: armed again on this one
    if (!moved || this.loop.stopping) return;
    const { dueTimer, leaseTimer } = this;
    this.clear();
    this.arm(dueTimer?.at ?? null, leaseTimer?.at ?? null);
  }

  /** Renews every held lease each renewMs until stopRenewing(). */
  startRenewing(): void {
    this.renewTimer = startInterval(() => void this.renew(), this.renewMs);
  }

  stopRenewing(): void {
    this.renewTimer?.cancel();
    this.renewTimer = undefined;
  }

  /**
   * Local timers for the next due job and the next lease deadline (server ms, null for none): an
   * earlier time replaces the armed one, a later one leaves it.
   */
  arm(nextDueAt: number | null, nextLeaseEnd: number | null): void {
    if (this.loop.stopping) return;
    this.dueTimer = this.armOne(this.dueTimer, nextDueAt);
    this.leaseTimer = this.armOne(this.leaseTimer, nextLeaseEnd);
  }

  /** One of the two timers: `current`, or a timer for `at` when that is earlier (then `current` is cleared). */
  private armOne(current: ArmedTimer | undefined, at: number | null): ArmedTimer | undefined {
    if (at === null || (current && at >= current.at)) return current;
    if (current) disarm(current);
    const armed: ArmedTimer = { at, timer: undefined, cancelled: false };
    const due = at + DUE_MARGIN_MS;
    const fire = (): void => {
      if (armed.cancelled) return;
      const left = due - this.serverNow();
      if (left > 0) {
        // the clock estimate moved meanwhile: a long way left goes back to a timer, not a spin
        if (left > WAKE_EARLY_MS) armed.timer = startTimer(fire, left - WAKE_EARLY_MS);
        else setImmediate(fire);
        return;
      }
      if (this.dueTimer === armed) this.dueTimer = undefined;
      if (this.leaseTimer === armed) this.leaseTimer = undefined;
      void this.tick();
    };
    armed.timer = startTimer(fire, due - this.serverNow() - WAKE_EARLY_MS);
    return armed;
  }

  /** Disarms the due and lease timers (renewal goes on until stopRenewing()). */
  clear(): void {
    if (this.dueTimer) disarm(this.dueTimer);
    if (this.leaseTimer) disarm(this.leaseTimer);
    this.dueTimer = this.leaseTimer = undefined;
  }

  /** The server's clock now, as this consumer estimates it (ms). */
  serverNow(): number {
    return performance.now() + this.serverOffset;
  }

  /** Reap and promote without claiming; re-arm the timers from what it saw. */
  private async tick(): Promise<void> {
    if (this.loop.stopping) return;
    try {
      const t0 = performance.now();
      const seen = await this.leases.beat({ n: 0, leaseMs: this.leaseMs });
      // a beat that fired slots sent a second call after the one that read `now` (fireDue): the
      // middle of both is no reading of that time (it set timers ~0.7 ms late), so the clock stays
      if (seen.fired === 0) this.setClock(seen.now, (t0 + performance.now()) / 2);
      this.arm(seen.nextDueAt, seen.nextLeaseEnd);
    } catch (error) {
      fireHook(this.hooks, 'onError', error);
    }
  }

  /** Renews every held lease now, out of turn (Loop.listening). */
  renewNow(): void {
    void this.renew();
  }

  /** Renews every held lease in one call; a job whose renewal is fenced off is aborted. */
  private async renew(): Promise<void> {
    const live = this.jobs.renewable();
    if (live.length === 0) return;
    try {
      const renewals = await this.leases.extend(live.map(leaseOf), this.leaseMs);
      live.forEach((h, i) => {
        const renewal = renewals[i];
        if (typeof renewal === 'number') this.jobs.renewed(h, renewal);
        else if (renewal === null && !h.fenced) this.jobs.leaseLost(h);
        // its cancel was asked, or its run already ended cancelled (the reaper took a lapsed lease):
        // its run is told either way, and a job not yet started is given back, never run
        else if (typeof renewal === 'object' && renewal !== null) this.onCancel(h.job.id, renewal.cancel ?? 'cancelled');
      });
      // a waiting job whose lease was lost is dropped without running, and its room claims again
      if (this.jobs.anyWaitingFenced()) this.runs.startWaiting();
    } catch (error) {
      fireHook(this.hooks, 'onError', error);
    }
  }
}

function disarm(armed: ArmedTimer): void {
  armed.cancelled = true;
  armed.timer?.cancel();
}
