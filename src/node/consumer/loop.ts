import { performance } from 'node:perf_hooks';
import { durabilityOf } from '../../durability.js';
import { Leases } from '../../lease/leases.js';
import type { QueuePartition } from '../../queue/surface.js';
import type { BlockingTransport } from '../../transport.js';
import { sleep } from '../../timers.js';
import { backoffMs } from './backoff.js';
import { ConnectionHealth } from './connection-health.js';
import { fireHook } from './hooks.js';
import { JobsInHand } from './jobs-in-hand.js';
import { LeaseTimers } from './lease-timers.js';
import type { LoopSettings } from './options.js';
import { type EarlyClaim, Park } from './park.js';
import { Prefetch } from './prefetch.js';
import { type RequestKind, Requests } from './requests.js';
import { Runs } from './runs.js';
import { Settles, type SettlesLoop } from './settles.js';
import type { LoopShare, SharingLoop } from './shared-slots.js';
import type { SlotStrategy } from './slots.js';

/**
 * The parked consumer's loop, the same for Consumer and BatchConsumer (their SlotStrategy says
 * how many jobs they take and how they run them): beat (reap, promote, claim), claim while slots
 * are free, and with free slots and nothing to claim, park on the doorbell until a token, the
 * beat, or a local timer for the next due job or lease deadline. It never busy-waits, and nothing
 * a handler or Redis does ends it: errors back off. While busy it keeps two requests in flight
 * (Requests). It owns its parts and is the only writer of its own state: whether it runs or
 * stops, and who waits for a free slot (docs/design.md, "The beat").
 *
 * @example
 * const loop = new Loop(transport, queue, settingsOf(options), new SingleSlots(handler, 10, 0)).start();
 * await loop.stop();
 */
export class Loop<Payload> implements SettlesLoop, SharingLoop {
  private readonly leases: Leases<Payload>;
  private readonly jobs: JobsInHand<Payload>;
  private readonly prefetch: Prefetch;
  private readonly settles: Settles<Payload>;
  private readonly runs: Runs<Payload>;
  private readonly timers: LeaseTimers<Payload>;
  private readonly requests: Requests<Payload>;
  private readonly park: Park<Payload>;
  private loopDone: Promise<void> | undefined;
  #stopping = false;
  private slotWaiter: (() => void) | undefined;
  private readonly settings: LoopSettings<Payload>;
  private readonly health: ConnectionHealth;

  constructor(
    private readonly transport: BlockingTransport,
    queue: QueuePartition<Payload>,
    settings: LoopSettings<Payload>,
    private readonly slots: SlotStrategy<Payload>,
    /** Given when several loops share one consumer's slots (a PartitionedQueue's: see SharedSlots). */
    private readonly share?: LoopShare,
  ) {
    this.health = share?.health ?? new ConnectionHealth(settings.log, queue.transport.endpoint, queue.name);
    // every failure the parts report reaches the health too
    this.settings = settings = { ...settings, hooks: this.health.watching(settings.hooks) };
    const { leaseMs, hooks } = settings;
    const leases = new Leases(queue, durabilityOf(settings.replication));
    this.leases = leases;
    this.jobs = new JobsInHand(hooks);
    this.prefetch = share?.prefetch ?? new Prefetch(settings.prefetch, () => slots.prefetchSize());
    this.settles = new Settles(leases, leaseMs, hooks, this.jobs, this);
    this.runs = new Runs(slots, this.jobs, this.settles, this.prefetch, hooks, this, queue.name, leases, () => this.timers.serverNow());
    this.timers = new LeaseTimers(leases, leaseMs, settings.renewMs, hooks, this.jobs, this.runs, this, (id, reason) => this.cancelAsked(id, reason));
    this.requests = new Requests(leases, leaseMs, slots, this.prefetch, this.settles, this.timers);
    this.park = new Park(transport, leases, queue.name, settings, this.requests, this.timers, this);
  }

  /** Whether the loop runs (started and not stopped). */
  get running(): boolean {
    return this.loopDone !== undefined && !this.#stopping;
  }

  /** How many jobs are in hand (running, settling, or prefetched and waiting for a slot). */
  get inFlight(): number {
    return this.jobs.heldCount + this.jobs.waitingCount;
  }

  /** stop() has begun. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** The loop waits for a free slot (or, with room for a second request, for its first reply). */
  get waitingForSlot(): boolean {
    return this.slotWaiter !== undefined;
  }

  /** The loop has a request in flight: settles wait for its next one. */
  get claiming(): boolean {
    return this.requests.count > 0;
  }

  /** Jobs running or settling. */
  get heldCount(): number {
    return this.jobs.heldCount;
  }

  /** Jobs waiting for a slot, and jobs its requests in flight asked for (less what their settles free). */
  get pendingCount(): number {
    return this.jobs.waitingCount + this.requests.taken;
  }

  /**
   * Tells a loop waiting for a free slot to look again: whenever the slots' capacity may have
   * grown. Sharing slots, every loop sharing them looks again.
   */
  slotFreed(): void {
    if (this.share) this.share.slotFreed();
    else this.slotWaiter?.();
  }

  /** Its wait for a free slot ends: the slots it shares with other loops may have room (SharedSlots). */
  wake(): void {
    this.slotWaiter?.();
  }

  /** Its waiting jobs start while slots are free: a slot it shares freed in another loop (SharedSlots). */
  startWaiting(): void {
    this.runs.startWaiting();
  }

  /**
   * Job `id`'s cancel was asked (docs/guides/job-controls.md): its run's signal aborts with
   * JobCancelledError, or, waiting for a slot, it is given back at once, which ends it cancelled.
   */
  cancelAsked(id: string, reason: string): void {
    const unstarted = this.jobs.cancelAsked(id, reason);
    if (unstarted) void this.settles.giveBack([unstarted]).then(() => this.slotFreed());
  }

  /**
   * Its cancel channel was (re)subscribed: every held lease is renewed now, so a job whose cancel
   * was asked while nobody listened (before the subscription was made, or while it was down) is
   * told at once by its renewal's answer, not at its next turn.
   */
  listening(): void {
    if (this.loopDone) this.timers.renewNow();
  }

  /** Starts the loop; returns at once. */
  start(): this {
    if (this.loopDone) return this;
    this.#stopping = false;
    this.timers.startRenewing();
    this.loopDone = this.run();
    return this;
  }

  /**
   * Stops claiming at the settle point, gives back the jobs waiting for a slot, waits up to
   * `timeoutMs` for the jobs running to finish, then aborts the rest and gives them back too
   * (`release`: claimable at once, their attempt not counted; if that request fails, their leases
   * lapse and they are reaped), and releases the doorbell connection. A handler that ignores its
   * aborted signal runs on, but nothing it does is recorded any more: its settle is never sent,
   * and Redis would refuse it (the given-back lease is fenced). A parked consumer stops at once.
   */
  async stop(timeoutMs = this.settings.stopTimeoutMs): Promise<void> {
    if (!this.loopDone) return;
    this.#stopping = true;
    this.timers.clear();
    this.transport.interrupt();
    this.slotWaiter?.();
    await this.settles.giveBack(this.jobs.drainWaiting());
    // The loop may be waiting on a call to a Redis that is away: it ends when that call fails,
    // and stop() does not wait past its timeout for it, nor for the jobs in hand.
    const waited = new AbortController();
    await Promise.race([Promise.allSettled([this.loopDone, this.runs.allEnded()]), sleep(timeoutMs, { signal: waited.signal })]);
    this.runs.stopWaiting();
    waited.abort();
    this.timers.stopRenewing();
    await this.settles.giveBack(this.jobs.abandonAll());
    // flow news still being relayed reaches its parents before the transport may close
    await Promise.race([this.leases.relayed(), sleep(timeoutMs, { unref: true })]);
    this.transport.interrupt();
    this.loopDone = undefined;
  }

  /** How many jobs the loop may claim now: the free slots and the free prefetch room. */
  private room(): number {
    return this.slots.capacity(this.jobs.heldCount) + this.prefetch.allowance() - this.jobs.waitingCount;
  }

  private async run(): Promise<void> {
    let next: RequestKind = 'beat';
    /** Jobs the park claimed behind its BLPOP, and how many it asked for. */
    let early: EarlyClaim<Payload> | undefined;
    /** A reply came back short (nothing more claimable at that instant): no claim alone goes out until those in flight are back. */
    let drained = false;
    for (let failures = 0; !this.#stopping; ) {
      if (early) {
        const { claimed, asked } = early;
        early = undefined;
        this.health.succeeded();
        if (claimed.jobs.length > 0) this.runs.accept(claimed.jobs);
        // the park ended on the schedule bell or the beat's end: the beat (reap, promote) is due,
        // and when the claim behind the park came back short no second request follows it (a
        // claim beside an idle beat would find nothing and cost a call each beat period)
        if (next === 'beat') {
          if (claimed.jobs.length < asked) drained = true;
          continue;
        }
        if (claimed.jobs.length === asked || this.settles.cargo.length > 0) {
          next = 'claim';
          continue;
        }
        ({ next, early, failures } = await this.park.parkOrBackOff(claimed, this.room(), failures));
        continue;
      }
      // a busy loop never parks, so its beat (reap, promote, and arm the timers) comes due here
      if (next === 'claim' && performance.now() - this.requests.lastBeatAt >= this.settings.beatMs && !this.requests.hasBeat()) {
        next = 'beat';
      }
      if (!(next === 'beat' && this.requests.hasBeat())) {
        const sent = this.requests.sendIfRoom(next, this.room(), drained);
        if (sent === 'request' && next === 'beat') next = 'claim';
        if (sent) continue;
      }
      const oldest = this.requests.oldest;
      if (!oldest) {
        await new Promise<void>((resolve) => (this.slotWaiter = resolve));
        this.slotWaiter = undefined;
        continue;
      }
      // with room for a second request, a freed slot may send it before the oldest reply is back
      const reply = !this.requests.full
        ? await Promise.race([oldest.reply, new Promise<undefined>((resolve) => (this.slotWaiter = () => resolve(undefined)))])
        : await oldest.reply;
      this.slotWaiter = undefined;
      if (reply === undefined) continue;
      this.requests.takeOldest(reply);
      if (reply instanceof Error) {
        if (this.#stopping) break;
        fireHook(this.settings.hooks, 'onError', reply);
        next = 'beat';
        await sleep(backoffMs(failures++));
        continue;
      }
      failures = 0;
      this.health.succeeded();
      // stopped while the claim was in flight: leave the jobs to their leases (reaped, run again)
      if (this.#stopping) break;
      if (reply.jobs.length > 0) this.runs.accept(reply.jobs);
      // a beat, or a claim that took the schedule bell's news, reports the next due time and lease
      // deadline even when full: the timers promote and reap on time while the loop has no reason
      // to park
      if (reply.nextDueAt !== null || reply.nextLeaseEnd !== null) this.timers.arm(reply.nextDueAt, reply.nextLeaseEnd);
      if (reply.jobs.length < oldest.asked) drained = true;
      // the others in flight come back before anything else goes out
      if (this.requests.count > 0) continue;
      // settles came in while the claim was in flight: they go out now, not after a park
      if (!drained || this.settles.cargo.length > 0) {
        drained = false;
        next = 'claim';
        continue;
      }
      drained = false;
      ({ next, early, failures } = await this.park.parkOrBackOff(reply, this.room(), failures));
    }
    // settles that became cargo as the loop stopped still go out; those riding with a request
    // still in flight are recorded by it (or, if it fails, go on their own), its jobs left to
    // their leases
    const left = this.settles.takeCargo();
    if (left.length > 0) void this.settles.sendAlone(left);
    await this.requests.waitAll();
  }
}
