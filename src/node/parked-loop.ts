import { performance } from 'node:perf_hooks';
import { InvalidArgumentError } from '../errors.js';
import type { Job } from '../job.js';
import { keyspace } from '../keyspace.js';
import { type Claimed, Leases } from '../lease.js';
import type { Queue } from '../queue.js';
import type { BlockingTransport } from '../transport.js';
import { backoffMs, sleep } from './backoff.js';
import { type ConsumerHooks, ConsumerStoppedError, fireHook, type ParkedLoopOptions } from './consumer-types.js';
import { type HeldJob, leaseOf, type SettleEntry, type SettleRequest } from './held-job.js';
import { LeaseTimers } from './lease-timers.js';
import { Prefetch } from './prefetch.js';
import { SettleBatcher } from './settle-batcher.js';


/** Loop requests (claims, or settles with a claim) in flight at once. */
const MAX_REQUESTS_IN_FLIGHT = 2;

/** A loop request in flight: its reply (an Error when it failed; never rejects), what it asked for, the settles it carries. */
interface InFlight<Payload> {
  readonly reply: Promise<Claimed<Payload> | Error>;
  readonly asked: number;
  /** Slots its settles free once recorded (they are in `held` until then). */
  readonly freed: number;
  readonly handoff: ReadonlyArray<SettleRequest<Payload>>;
  /** It is a beat: it reaps and promotes before it claims, and reports the next times. */
  readonly beat: boolean;
}

/** What ended a park. */
type Wake = 'claim' | 'beat';

/** Jobs claimed behind the park's BLPOP, and how many that claim asked for. */
interface EarlyClaim<Payload> {
  readonly claimed: Claimed<Payload>;
  readonly asked: number;
}

/**
 * The parked consumer's loop, shared by Consumer and BatchConsumer: beat (reap, promote, claim),
 * claim while slots are free, and with free slots and nothing to claim, park on the doorbell
 * (`BLPOP wake sched`) until a token, the beat, or a local timer for the next due job or lease
 * deadline. It never busy-waits, and nothing a handler or Redis does ends it: errors back off.
 * Subclasses say how many jobs they can take and how they run them. While busy it keeps two
 * requests in flight, each claiming at most half of what it may hold, so Redis runs one while
 * this process runs the other's jobs (see `requests`). The loop composes three
 * parts: the SettleBatcher (settles of one turn in one request, riding with the loop's claim when
 * it has one), the Prefetch (claimed jobs waiting for a slot) and the LeaseTimers (due and lease
 * timers, lease renewal).
 */
export abstract class ParkedLoop<Payload> {
  protected readonly held = new Map<string, HeldJob<Payload>>();
  protected readonly leaseMs: number;
  protected readonly timeoutMs: number;
  private readonly beatMs: number;
  private readonly stopTimeoutMs: number;
  private readonly hooks: ConsumerHooks<Payload>;
  private readonly bells: readonly string[];
  protected readonly leases: Leases<Payload>;
  private readonly prefetch: Prefetch<Payload>;
  private readonly settles: SettleBatcher<Payload>;
  private readonly timers: LeaseTimers<Payload>;
  /** The loop has a claim (or settle and claim) in flight: settles wait for its next turn. */
  private claiming = false;
  /** The loop's requests in flight, oldest first. */
  private readonly requests: Array<InFlight<Payload>> = [];
  /** Runs kept (see keep) that have not ended, and who waits for them all to end (stop). */
  private runsLeft = 0;
  private allEnded: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private stopping = false;
  private slotWaiter: (() => void) | undefined;
  private lastBeatAt = 0;

  constructor(
    protected readonly transport: BlockingTransport,
    readonly queue: Queue<Payload>,
    options: ParkedLoopOptions<Payload>,
  ) {
    this.leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
    this.beatMs = positive('beatMs', options.beatMs ?? 5_000);
    this.timeoutMs = options.timeoutMs ?? 0;
    const renewMs = positive('renewMs', options.renewMs ?? Math.max(1, Math.floor(this.leaseMs / 3)));
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.hooks = options.hooks ?? {};
    this.prefetch = new Prefetch(options.prefetch, () => this.prefetchSize(), this.hooks);
    this.leases = new Leases(queue);
    const keys = keyspace(queue.name);
    this.bells = [keys.key('wake'), keys.key('sched')];
    // The parts read the loop's flags through getters (only the loop sets them) and share its
    // held map and prefetch buffer, so nothing is copied or kept in step by hand.
    const loop = this;
    const view = {
      get stopping(): boolean {
        return loop.stopping;
      },
      get waitingForSlot(): boolean {
        return loop.slotWaiter !== undefined;
      },
      get claiming(): boolean {
        return loop.claiming;
      },
      held: this.held,
      waiting: this.prefetch.waiting,
      slotFreed: (): void => this.slotFreed(),
      startWaiting: (): void => this.startWaiting(),
    };
    this.settles = new SettleBatcher(this.leases, this.leaseMs, this.hooks, view);
    this.timers = new LeaseTimers(this.leases, this.leaseMs, renewMs, this.hooks, view);
  }

  /**
   * How many jobs to claim now for the slots, not counting prefetch: the slots less the jobs in
   * hand until their settles are recorded (negative when prefetched jobs run while others settle).
   */
  protected abstract capacity(): number;

  /** How many jobs could start now: the slots less the handlers running (settling ones not counted). */
  protected abstract startable(): number;

  /** How many jobs 'auto' prefetches while handlers are short (the jobs the slots hold). */
  protected abstract prefetchSize(): number;

  /** The jobs one run takes: a request claims whole runs' worth, so none starts short for being split. */
  protected claimUnit(): number {
    return 1;
  }

  /** Starts running claimed jobs (never more than startable()); each must end in `settle`. */
  protected abstract dispatch(jobs: Array<HeldJob<Payload>>): void;

  /** Whether the loop runs (started and not stopped). */
  get running(): boolean {
    return this.loopDone !== undefined && !this.stopping;
  }

  /** How many jobs are in hand (running, settling, or prefetched and waiting for a slot). */
  get inFlight(): number {
    return this.held.size + this.prefetch.size;
  }

  /** How many jobs the loop may claim now: the free slots and the free prefetch room. */
  private room(): number {
    return this.capacity() + this.prefetch.allowance() - this.prefetch.size;
  }

  /** Starts the loop; returns at once. */
  start(): this {
    if (this.loopDone) return this;
    this.stopping = false;
    this.timers.startRenewing();
    this.loopDone = this.loop();
    return this;
  }

  /**
   * Stops claiming at the settle point, waits up to `timeoutMs` for jobs in hand to finish, then
   * aborts the rest (their leases lapse and they are reaped and run again) and releases the
   * doorbell connection. A parked consumer stops at once.
   */
  async stop(timeoutMs = this.stopTimeoutMs): Promise<void> {
    if (!this.loopDone) return;
    this.stopping = true;
    this.timers.clear();
    this.transport.interrupt();
    this.slotWaiter?.();
    await this.giveBack();
    // The loop may be waiting on a call to a Redis that is away: it ends when that call fails,
    // and stop() does not wait past its timeout for it, nor for the jobs in hand.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    const ended = this.runsLeft === 0 ? undefined : new Promise<void>((resolve) => (this.allEnded = resolve));
    await Promise.race([Promise.allSettled([this.loopDone, ended]), timeout]);
    this.allEnded = undefined;
    clearTimeout(timer);
    for (const h of this.held.values()) {
      h.abandoned = true;
      h.controller.abort(new ConsumerStoppedError());
    }
    this.held.clear();
    this.timers.stopRenewing();
    this.transport.interrupt();
    this.loopDone = undefined;
  }

  /** Takes a waiting job into hand as it starts. */
  protected track(waiting: HeldJob<Payload>, controller = waiting.controller): HeldJob<Payload> {
    const h: HeldJob<Payload> = { ...waiting, controller, startedAt: performance.now() };
    this.held.set(h.job.id, h);
    fireHook(this.hooks, 'onStarted', h.job);
    return h;
  }

  /**
   * A handler ended after `ms` (its settle not yet recorded): the moving average that decides
   * 'auto' prefetch learns it, and its slot takes the next waiting job at once.
   */
  protected handlerEnded(ms: number): void {
    this.prefetch.learn(ms);
    this.startWaiting();
  }

  /** Claimed jobs join the wait; as many as there are free slots start now. */
  private accept(jobs: ReadonlyArray<Job<Payload>>): void {
    // a handler's signal is made only if it reads it (see contextOf)
    for (const job of jobs) this.prefetch.add(job, new AbortController());
    this.startWaiting();
  }

  /** Starts waiting jobs while slots are free; a waiting job whose lease was lost never runs. */
  private startWaiting(): void {
    if (this.stopping) return;
    const dropped = this.prefetch.dropFenced();
    const n = Math.min(this.startable(), this.prefetch.size);
    if (n > 0) this.dispatch(this.prefetch.take(n));
    if (dropped) this.slotFreed();
  }

  /** stop(): jobs claimed but never started go back to their lanes, their attempt not counted. */
  private async giveBack(): Promise<void> {
    const left = this.prefetch.drain();
    if (left.length === 0) return;
    try {
      await this.leases.release(left.map(leaseOf));
    } catch (error) {
      // their leases lapse and they are reaped: run again, one attempt counted
      fireHook(this.hooks, 'onError', error);
    }
  }

  /** Keeps a running job's promise so stop() can wait for it. */
  protected keep(run: Promise<void>): void {
    // a count, not a set of promises: two promises and a closure less per job
    this.runsLeft++;
    run.then(this.runEnded, this.runFailed);
  }

  private readonly runEnded = (): void => {
    if (--this.runsLeft === 0) this.allEnded?.();
  };

  private readonly runFailed = (error: unknown): void => {
    fireHook(this.hooks, 'onError', error);
    this.runEnded();
  };

  /**
   * Records how held jobs ended and frees their slots; resolves once recorded. Settles that come
   * in during the same turn of the event loop go out together in one round trip, and when the
   * loop is only waiting for a free slot, that round trip also claims the next jobs (complete
   * with claimN), so a busy consumer spends one request per batch instead of two per job. A
   * settle that goes out on its own is retried with backoff while the leases last.
   */
  protected settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void> {
    return this.settles.settle(entries);
  }

  /** Tells a loop waiting for a free slot to look again: call whenever capacity() may have grown. */
  protected slotFreed(): void {
    this.slotWaiter?.();
  }

  /** How many more jobs the loop may claim once `requests` (settle calls) are recorded. */
  protected freedBy(requests: ReadonlyArray<SettleRequest<Payload>>): number {
    return requests.reduce((n, r) => n + r.entries.length, 0);
  }

  private async loop(): Promise<void> {
    let wake: Wake = 'beat';
    /** Jobs the park claimed behind its BLPOP, and how many it asked for. */
    let early: EarlyClaim<Payload> | undefined;
    /** A reply came back short (the queue ran dry): nothing more goes out until those in flight are back. */
    let drained = false;
    for (let failures = 0; !this.stopping; ) {
      if (early) {
        const { claimed, asked } = early;
        early = undefined;
        this.claiming = false;
        if (claimed.jobs.length > 0) this.accept(claimed.jobs);
        // the park ended on the schedule bell or the beat's end: the beat (reap, promote) is due
        if (wake === 'beat') continue;
        if (claimed.jobs.length === asked || this.settles.handingOff) {
          wake = 'claim';
          continue;
        }
        ({ wake, early, failures } = await this.parkOrBackOff(claimed, failures));
        continue;
      }
      // a busy loop never parks, so its beat (reap, promote, and arm the timers) comes due here
      if (wake === 'claim' && performance.now() - this.lastBeatAt >= this.beatMs && !this.requests.some((r) => r.beat)) {
        wake = 'beat';
      }
      // send a request when there is room for one: the first at once, a second behind it (it runs
      // in Redis while this process runs the first one's jobs) only when it fills its half
      if (this.requests.length < MAX_REQUESTS_IN_FLIGHT && !(wake === 'beat' && this.requests.some((r) => r.beat))) {
        const handedOff = this.settles.handedOff;
        const freed = handedOff.length > 0 ? this.freedBy(handedOff) : 0;
        // a request in flight takes what it asked for, less the slots its own settles free
        const taken = this.requests.reduce((n, r) => n + r.asked - r.freed, 0);
        const half = this.requestSize();
        const want = Math.max(0, Math.min(this.room() - taken + freed, half));
        // a second request waits until it fills its half, and none follows a reply that came back short
        const sendNow = this.requests.length === 0 || (want >= half && !drained);
        if (sendNow && want > 0) {
          this.requests.push(this.request(this.settles.takeHandoff(), freed, want, wake));
          if (wake === 'beat') wake = 'claim';
          this.claiming = true;
          continue;
        }
        if (sendNow && handedOff.length > 0) {
          void this.settles.sendAlone(this.settles.takeHandoff());
          continue;
        }
      }
      const oldest = this.requests[0];
      if (!oldest) {
        await new Promise<void>((resolve) => (this.slotWaiter = resolve));
        this.slotWaiter = undefined;
        continue;
      }
      // with room for a second request, a freed slot may send it before the oldest reply is back
      const reply =
        this.requests.length < MAX_REQUESTS_IN_FLIGHT
          ? await Promise.race([oldest.reply, new Promise<undefined>((resolve) => (this.slotWaiter = () => resolve(undefined)))])
          : await oldest.reply;
      this.slotWaiter = undefined;
      if (reply === undefined) continue;
      this.requests.shift();
      this.claiming = this.requests.length > 0;
      if (reply instanceof Error) {
        // a failed settle-and-claim recorded nothing: its settles go on their own, with retries
        if (oldest.handoff.length > 0) void this.settles.sendAlone(oldest.handoff);
        if (this.stopping) break;
        fireHook(this.hooks, 'onError', reply);
        wake = 'beat';
        await sleep(backoffMs(failures++));
        continue;
      }
      failures = 0;
      // its settles leave our hands as its jobs come in: the slots they free are the ones it filled
      this.settles.release(oldest.handoff);
      // stopped while the claim was in flight: leave the jobs to their leases (reaped, run again)
      if (this.stopping) break;
      if (reply.jobs.length > 0) this.accept(reply.jobs);
      // a beat, or a claim that took the schedule bell's news, reports the next due time and lease
      // deadline even when full: the timers promote and reap on time while the loop has no reason
      // to park
      if (reply.nextDueAt !== null || reply.nextLeaseEnd !== null) this.timers.arm(reply.nextDueAt, reply.nextLeaseEnd);
      if (reply.jobs.length < oldest.asked) drained = true;
      // the others in flight come back before anything else goes out
      if (this.requests.length > 0) continue;
      // settles came in while the claim was in flight: they go out now, not after a park
      if (!drained || this.settles.handingOff) {
        drained = false;
        wake = 'claim';
        continue;
      }
      drained = false;
      ({ wake, early, failures } = await this.parkOrBackOff(reply, failures));
    }
    // settles handed over as the loop stopped still go out; those riding with a request still in
    // flight are recorded by it (or, if it fails, go on their own), its jobs left to their leases
    const left = this.settles.takeHandoff();
    if (left.length > 0) void this.settles.sendAlone(left);
    for (const request of this.requests.splice(0)) {
      const reply = await request.reply;
      if (!(reply instanceof Error)) this.settles.release(request.handoff);
      else if (request.handoff.length > 0) void this.settles.sendAlone(request.handoff);
    }
    this.claiming = false;
  }

  /**
   * How many jobs one request claims at most: a share of what the consumer may hold (its slots
   * and prefetch) so that MAX_REQUESTS_IN_FLIGHT requests can be in flight, in whole claim units.
   */
  private requestSize(): number {
    const unit = this.claimUnit();
    const share = (this.prefetchSize() + this.prefetch.allowance()) / MAX_REQUESTS_IN_FLIGHT;
    return Math.max(unit, Math.ceil(share / unit) * unit);
  }

  /** Sends a claim (a beat, or settles with a claim) for `want` jobs; its reply never rejects. */
  private request(handoff: Array<SettleRequest<Payload>>, freed: number, want: number, wake: Wake): InFlight<Payload> {
    const t0 = performance.now();
    const beat = wake === 'beat';
    const sent =
      handoff.length > 0
        ? this.settles.sendWithClaim(handoff, want, beat)
        : beat
          ? this.leases.beat({ n: want, leaseMs: this.leaseMs })
          : this.leases.claim(want, this.leaseMs);
    const reply = sent.then(
      (claimed) => {
        const t1 = performance.now();
        this.timers.setClock(claimed.now, (t0 + t1) / 2);
        this.prefetch.learnRoundTrip(t1 - t0);
        if (beat) this.lastBeatAt = t1;
        return claimed;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    return { reply, asked: want, freed, handoff, beat };
  }

  /** Nothing more to claim now: arm the timers and park; a failed park backs off and beats next. */
  private async parkOrBackOff(
    claimed: Claimed<Payload>,
    failures: number,
  ): Promise<{ wake: Wake; early?: EarlyClaim<Payload>; failures: number }> {
    this.timers.arm(claimed.nextDueAt, claimed.nextLeaseEnd);
    try {
      return { ...(await this.park()), failures };
    } catch (error) {
      if (this.stopping) return { wake: 'beat', failures };
      fireHook(this.hooks, 'onError', error);
      await sleep(backoffMs(failures));
      return { wake: 'beat', failures: failures + 1 };
    }
  }

  /**
   * Waits on the doorbell for what is left of the beat: a wake token claims, anything else beats.
   * When the transport can, the claim for the free slots rides behind the BLPOP, so Redis runs
   * it the moment a token arrives and the handler starts one round trip sooner. A claim Redis
   * refused (NOSCRIPT after a restart, say) is dropped: the loop then claims the ordinary way.
   */
  private async park(): Promise<{ wake: Wake; early?: EarlyClaim<Payload> }> {
    const left = this.beatMs - (performance.now() - this.lastBeatAt);
    if (left <= 1) return { wake: 'beat' };
    const n = this.room();
    if (n <= 0 || !this.transport.blpopThen) {
      const bell = await this.transport.blpop(this.bells, left);
      return { wake: bell === this.bells[0] ? 'claim' : 'beat' };
    }
    const claim = this.leases.claimCall(n, this.leaseMs);
    const { key, reply } = await this.transport.blpopThen(this.bells, left, claim.call);
    const wake: Wake = key === this.bells[0] ? 'claim' : 'beat';
    if (reply === undefined || reply instanceof Error) return { wake };
    const claimed = claim.read(reply);
    // the claim ran as its reply left Redis: within a one-way trip of now
    this.timers.setClock(claimed.now, performance.now());
    return { wake, early: { claimed, asked: n } };
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 1) throw new InvalidArgumentError(`${name} must be a number >= 1, got ${value}`);
  return value;
}
