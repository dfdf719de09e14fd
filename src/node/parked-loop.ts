import { performance } from 'node:perf_hooks';
import { InvalidArgumentError } from '../errors.js';
import type { Outcome } from '../handler.js';
import type { Job } from '../job.js';
import type { Claimed, Queue } from '../queue.js';
import type { ClaimResult, RetryOutcome, ScriptOp } from '../scripts.js';
import type { BlockingTransport } from '../transport.js';

/** What a consumer tells about the jobs it runs. A hook that throws is ignored. */
export interface ConsumerHooks<Payload> {
  onStarted?(job: Job<Payload>): void;
  onCompleted?(job: Job<Payload>, info: { durationMs: number }): void;
  /** A failed attempt that will run again: `outcome` says whether now or after a delay. */
  onRetried?(job: Job<Payload>, info: { durationMs: number; error: string; outcome: 'pending' | 'scheduled' }): void;
  onDead?(job: Job<Payload>, info: { durationMs: number; error: string }): void;
  /** The consumer lost the job's lease (it was reaped or removed): its result was not recorded. */
  onFenced?(job: Job<Payload>): void;
  /** Redis trouble or a failed settle: the consumer backs off and goes on. */
  onError?(error: unknown): void;
}

/** Options every parked consumer takes. */
export interface ParkedLoopOptions<Payload> {
  /** Lease per claim in ms, renewed while a job runs (default 30,000). */
  readonly leaseMs?: number;
  /** The longest park between beats (reap, promote, claim) in ms (default 5,000). */
  readonly beatMs?: number;
  /** A handler running longer than this is aborted and retried (ms; default 0 = no timeout). */
  readonly timeoutMs?: number;
  /** How often leases are renewed (default a third of the lease). */
  readonly renewMs?: number;
  /** How long stop() waits for jobs in hand by default (ms; default 10,000). */
  readonly stopTimeoutMs?: number;
  /**
   * How many claimed jobs may wait in hand for a free slot, besides those running, so a slot that
   * frees starts its next job at once while the settle (and the claim behind it) is in flight.
   * Waiting jobs' leases are renewed like running ones'; stop() gives them back uncounted.
   * `'auto'` (default) prefetches as many jobs as the slots hold while the recent handler
   * durations (a moving average) stay under 20 ms, and none once they are longer, so a consumer
   * with long jobs never hoards work another consumer could run. A number fixes it (0: never).
   *
   * @example
   * new Consumer(transport, 'thumbs', handler, { concurrency: 10, prefetch: 0 }); // no hoarding
   */
  readonly prefetch?: number | 'auto';
  readonly hooks?: ConsumerHooks<Payload>;
}

/** A job this consumer holds a lease on. */
export interface HeldJob<Payload> {
  readonly job: Job<Payload>;
  readonly controller: AbortController;
  readonly startedAt: number;
  /** The lease was lost: nothing about this job may be recorded any more. */
  fenced: boolean;
  /** stop() gave up on it: its lease lapses and it is reaped. */
  abandoned: boolean;
}

/** A held job and how its run ended. */
export interface SettleEntry<Payload> {
  readonly held: HeldJob<Payload>;
  readonly outcome: Outcome;
}

/** One settle() call waiting to go out. */
export interface SettleRequest<Payload> {
  readonly entries: ReadonlyArray<SettleEntry<Payload>>;
  readonly resolve: () => void;
}

/** Thrown into a held job's signal when its lease is lost. */
export class LeaseLostError extends Error {
  constructor(readonly jobId: string) {
    super(`the lease of ${jobId} was lost (reaped or removed): stop working on it`);
    this.name = 'LeaseLostError';
  }
}

/** Thrown into held jobs' signals when stop() runs out of time. */
export class ConsumerStoppedError extends Error {
  constructor() {
    super('the consumer stopped before the job finished');
    this.name = 'ConsumerStoppedError';
  }
}

/** 'auto' prefetch holds jobs back only while handlers take less than this on average (ms). */
const AUTO_PREFETCH_BELOW_MS = 20;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
 * Subclasses say how many jobs they can take and how they run them.
 */
export abstract class ParkedLoop<Payload> {
  protected readonly held = new Map<string, HeldJob<Payload>>();
  protected readonly leaseMs: number;
  protected readonly timeoutMs: number;
  private readonly beatMs: number;
  private readonly renewMs: number;
  private readonly stopTimeoutMs: number;
  private readonly prefetch: number | 'auto';
  /** Claimed jobs waiting for a free slot (prefetched), oldest first. */
  private readonly waiting: Array<HeldJob<Payload>> = [];
  /** Moving average of handler durations in ms (undefined until one finished). */
  private recentMs: number | undefined;
  /** The loop has a claim (or settle and claim) in flight: settles wait for its next turn. */
  private claiming = false;
  private readonly hooks: ConsumerHooks<Payload>;
  private readonly bells: readonly string[];
  private readonly runs = new Set<Promise<void>>();
  private loopDone: Promise<void> | undefined;
  private stopping = false;
  private slotWaiter: (() => void) | undefined;
  private settleQueue: Array<SettleRequest<Payload>> = [];
  private flushTimer: ReturnType<typeof setImmediate> | undefined;
  /** Settles the loop sends with its next claim (it was waiting for a slot when they came). */
  private handoff: Array<SettleRequest<Payload>> = [];
  private lastBeatAt = 0;
  /** Server ms minus performance.now(), from the last reply that carried the server time. */
  private serverOffset = 0;
  private dueTimer: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  private leaseTimer: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  /** A controller made before parking, for the job a wake brings (see freshController). */
  private spare: AbortController | undefined;

  constructor(
    protected readonly transport: BlockingTransport,
    readonly queue: Queue<Payload>,
    options: ParkedLoopOptions<Payload>,
  ) {
    this.leaseMs = positive('leaseMs', options.leaseMs ?? 30_000);
    this.beatMs = positive('beatMs', options.beatMs ?? 5_000);
    this.timeoutMs = options.timeoutMs ?? 0;
    this.renewMs = positive('renewMs', options.renewMs ?? Math.max(1, Math.floor(this.leaseMs / 3)));
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    const prefetch = options.prefetch ?? 'auto';
    if (prefetch !== 'auto' && (!Number.isSafeInteger(prefetch) || prefetch < 0)) {
      throw new InvalidArgumentError(`prefetch must be 'auto' or an integer >= 0, got ${String(prefetch)}`);
    }
    this.prefetch = prefetch;
    this.hooks = options.hooks ?? {};
    this.bells = [queue.scripts.keys.key('wake'), queue.scripts.keys.key('sched')];
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

  /** Starts running claimed jobs (never more than startable()); each must end in `settle`. */
  protected abstract dispatch(jobs: Array<HeldJob<Payload>>): void;

  /** Whether the loop runs (started and not stopped). */
  get running(): boolean {
    return this.loopDone !== undefined && !this.stopping;
  }

  /** How many jobs are in hand (running, settling, or prefetched and waiting for a slot). */
  get inFlight(): number {
    return this.held.size + this.waiting.length;
  }

  /** How many claimed jobs may wait for a slot now (see ParkedLoopOptions.prefetch). */
  protected prefetchNow(): number {
    if (this.prefetch !== 'auto') return this.prefetch;
    return this.recentMs !== undefined && this.recentMs < AUTO_PREFETCH_BELOW_MS ? this.prefetchSize() : 0;
  }

  /** How many jobs the loop may claim now: the free slots and the free prefetch room. */
  private room(): number {
    return this.capacity() + this.prefetchNow() - this.waiting.length;
  }

  /** Starts the loop; returns at once. */
  start(): this {
    if (this.loopDone) return this;
    this.stopping = false;
    this.renewTimer = setInterval(() => void this.renew(), this.renewMs);
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
    this.clearTimers();
    this.transport.interrupt();
    this.slotWaiter?.();
    await this.giveBack();
    // The loop may be waiting on a call to a Redis that is away: it ends when that call fails,
    // and stop() does not wait past its timeout for it, nor for the jobs in hand.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([this.loopDone, ...this.runs]), timeout]);
    clearTimeout(timer);
    for (const h of this.held.values()) {
      h.abandoned = true;
      h.controller.abort(new ConsumerStoppedError());
    }
    this.held.clear();
    clearInterval(this.renewTimer);
    this.renewTimer = undefined;
    this.transport.interrupt();
    this.loopDone = undefined;
  }

  /** Takes a waiting job into hand as it starts. */
  protected track(waiting: HeldJob<Payload>, controller = waiting.controller): HeldJob<Payload> {
    const h: HeldJob<Payload> = { ...waiting, controller, startedAt: performance.now() };
    this.held.set(h.job.id, h);
    this.hook('onStarted', h.job);
    return h;
  }

  /**
   * A handler ended after `ms` (its settle not yet recorded): the moving average that decides
   * 'auto' prefetch learns it, and its slot takes the next waiting job at once.
   */
  protected handlerEnded(ms: number): void {
    this.recentMs = this.recentMs === undefined ? ms : this.recentMs + (ms - this.recentMs) * 0.2;
    this.startWaiting();
  }

  /** Claimed jobs join the wait; as many as there are free slots start now. */
  private accept(jobs: ReadonlyArray<Job<Payload>>): void {
    for (const job of jobs) {
      this.waiting.push({ job, controller: this.freshController(), startedAt: 0, fenced: false, abandoned: false });
    }
    this.startWaiting();
  }

  /** Starts waiting jobs while slots are free; a waiting job whose lease was lost never runs. */
  private startWaiting(): void {
    if (this.stopping) return;
    let dropped = false;
    for (let i = 0; i < this.waiting.length; ) {
      if (this.waiting[i]!.fenced) {
        this.hook('onFenced', this.waiting.splice(i, 1)[0]!.job);
        dropped = true;
      } else i++;
    }
    const n = Math.min(this.startable(), this.waiting.length);
    if (n > 0) this.dispatch(this.waiting.splice(0, n));
    if (dropped) this.slotFreed();
  }

  /** stop(): jobs claimed but never started go back to their lanes, their attempt not counted. */
  private async giveBack(): Promise<void> {
    const left = this.waiting.splice(0).filter((h) => !h.fenced);
    if (left.length === 0) return;
    try {
      await this.queue.release(left.map(held));
    } catch (error) {
      // their leases lapse and they are reaped: run again, one attempt counted
      this.hook('onError', error);
    }
  }

  /**
   * An AbortController with its signal made: the one set aside while parked when there is one.
   * Node makes a signal on first use, and that costs microseconds a woken job would otherwise
   * wait for between the claim's reply and its handler.
   */
  protected freshController(): AbortController {
    const controller = this.spare ?? withSignal();
    this.spare = undefined;
    return controller;
  }

  /** Keeps a running job's promise so stop() can wait for it. */
  protected keep(run: Promise<void>): void {
    const kept = run.catch((error: unknown) => this.hook('onError', error));
    this.runs.add(kept);
    void kept.finally(() => this.runs.delete(kept));
  }

  /**
   * Records how held jobs ended and frees their slots; resolves once recorded. Settles that come
   * in during the same turn of the event loop go out together in one round trip, and when the
   * loop is only waiting for a free slot, that round trip also claims the next jobs (complete
   * with claimN), so a busy consumer spends one request per batch instead of two per job. A
   * settle that goes out on its own is retried with backoff while the leases last.
   */
  protected settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.settleQueue.push({ entries, resolve });
      this.flushTimer ??= setImmediate(() => this.flush());
    });
  }

  /** Tells a loop waiting for a free slot to look again: call whenever capacity() may have grown. */
  protected slotFreed(): void {
    this.slotWaiter?.();
  }

  /** How many more jobs the loop may claim once `requests` (settle calls) are recorded. */
  protected freedBy(requests: ReadonlyArray<SettleRequest<Payload>>): number {
    return requests.reduce((n, r) => n + r.entries.length, 0);
  }

  /** Sends what settled this turn: handed to the loop when it waits for a slot, else on its own. */
  private flush(): void {
    this.flushTimer = undefined;
    const batch = this.settleQueue.splice(0);
    if (batch.length === 0) return;
    if (this.slotWaiter && !this.stopping) {
      this.handoff.push(...batch);
      this.slotWaiter();
      return;
    }
    // a claim is in flight: these go out with the loop's next request, right after its reply
    if (this.claiming && !this.stopping) {
      this.handoff.push(...batch);
      return;
    }
    void this.settleAlone(batch);
  }

  private async settleAlone(batch: ReadonlyArray<SettleRequest<Payload>>): Promise<void> {
    try {
      const live = liveEntries(batch);
      if (live.length === 0) return;
      const { ops, apply } = this.settleOps(live, 0);
      const giveUpAt = performance.now() + this.leaseMs;
      for (let failures = 0; ; failures++) {
        try {
          apply(await this.queue.scripts.runOps(ops));
          return;
        } catch (error) {
          this.hook('onError', error);
          // The lease will lapse and the job run again: at least once, never lost.
          if (performance.now() > giveUpAt || this.stopping) return;
          await sleep(backoffMs(failures));
        }
      }
    } finally {
      this.release(batch);
    }
  }

  /** Records `batch` and claims up to `n` next jobs in one round trip; throws, recording nothing, when the call fails. */
  private async settleAndClaim(batch: ReadonlyArray<SettleRequest<Payload>>, n: number): Promise<Claimed<Payload>> {
    const { ops, apply } = this.settleOps(liveEntries(batch), n);
    const claimed = apply(await this.queue.scripts.runOps(ops));
    this.release(batch);
    return this.queue.decodeClaim(claimed!);
  }

  /** Settled jobs leave our hands: their slots are free and their settle calls resolve. */
  private release(batch: ReadonlyArray<SettleRequest<Payload>>): void {
    for (const { entries, resolve } of batch) {
      for (const { held } of entries) {
        if (this.held.get(held.job.id) === held) this.held.delete(held.job.id);
        if (held.fenced && !held.abandoned) this.hook('onFenced', held.job);
      }
      resolve();
    }
    this.slotFreed();
  }

  /**
   * The ops that record `entries` (retries and fails first, so a retried job is claimable by the
   * claim that follows; completes last, with the claim of `claimN` jobs) and how to read their
   * replies: hooks fire, lost leases are marked fenced, and the claim (if any) is returned.
   */
  private settleOps(
    entries: ReadonlyArray<SettleEntry<Payload>>,
    claimN: number,
  ): { ops: Array<ScriptOp<unknown>>; apply: (replies: readonly unknown[]) => ClaimResult | null } {
    const scripts = this.queue.scripts;
    const completes = entries.filter((e) => e.outcome.kind === 'complete');
    const retries = entries.flatMap((e) => (e.outcome.kind === 'retry' ? [{ ...e, outcome: e.outcome }] : []));
    const fails = entries.flatMap((e) => (e.outcome.kind === 'fail' ? [{ ...e, outcome: e.outcome }] : []));
    const ops: Array<ScriptOp<unknown>> = [];
    if (retries.length > 0) {
      ops.push(
        scripts.retryOp(
          retries.map((e) => ({ ...held(e.held), error: e.outcome.error, ...(e.outcome.delayMs === undefined ? {} : { delayMs: e.outcome.delayMs }) })),
        ),
      );
    }
    if (fails.length > 0) ops.push(scripts.failOp(fails.map((e) => ({ ...held(e.held), error: e.outcome.error }))));
    if (completes.length > 0 || claimN > 0) {
      ops.push(
        scripts.completeOp(completes.map((e) => held(e.held)), {
          keepMs: this.queue.keepCompletedMs,
          claimN,
          leaseMs: this.leaseMs,
        }),
      );
    }
    const apply = (replies: readonly unknown[]): ClaimResult | null => {
      let next = 0;
      if (retries.length > 0) {
        const outcomes = replies[next++] as RetryOutcome[];
        retries.forEach((e, i) => this.afterRetry(e.held, outcomes[i] ?? 'fenced', e.outcome.error));
      }
      if (fails.length > 0) {
        const outcomes = replies[next++] as Array<'dead' | 'fenced'>;
        fails.forEach((e, i) => this.afterRetry(e.held, outcomes[i] ?? 'fenced', e.outcome.error));
      }
      if (completes.length === 0 && claimN === 0) return null;
      const { completed, claimed } = replies[next++] as { completed: boolean[]; claimed: ClaimResult | null };
      completes.forEach((e, i) => {
        if (completed[i]) this.hook('onCompleted', e.held.job, { durationMs: durationOf(e.held) });
        else e.held.fenced = true;
      });
      return claimed;
    };
    return { ops, apply };
  }

  private afterRetry(h: HeldJob<Payload>, outcome: RetryOutcome, error: string): void {
    const durationMs = durationOf(h);
    if (outcome === 'fenced') h.fenced = true;
    else if (outcome === 'dead') this.hook('onDead', h.job, { durationMs, error });
    else this.hook('onRetried', h.job, { durationMs, error, outcome });
  }

  private async loop(): Promise<void> {
    let wake: Wake = 'beat';
    /** Jobs the park claimed behind its BLPOP, and how many it asked for. */
    let early: EarlyClaim<Payload> | undefined;
    for (let failures = 0; !this.stopping; ) {
      let claimed: Claimed<Payload>;
      let want: number;
      const fromPark = early !== undefined;
      if (early) {
        ({ claimed, asked: want } = early);
        early = undefined;
      } else {
        const handoff = this.handoff.splice(0);
        want = Math.max(0, this.room() + (handoff.length > 0 ? this.freedBy(handoff) : 0));
        if (want === 0) {
          if (handoff.length > 0) {
            void this.settleAlone(handoff);
            continue;
          }
          await new Promise<void>((resolve) => (this.slotWaiter = resolve));
          this.slotWaiter = undefined;
          continue;
        }
        try {
          const t0 = performance.now();
          this.claiming = true;
          if (handoff.length > 0) claimed = await this.settleAndClaim(handoff, want);
          else if (wake === 'beat') claimed = await this.queue.beat({ n: want, leaseMs: this.leaseMs });
          else claimed = await this.queue.claim(want, this.leaseMs);
          this.serverOffset = claimed.now - (t0 + performance.now()) / 2;
          if (wake === 'beat' && handoff.length === 0) this.lastBeatAt = performance.now();
          failures = 0;
        } catch (error) {
          this.claiming = false;
          // a failed settle-and-claim recorded nothing: its settles go on their own, with retries
          if (handoff.length > 0) void this.settleAlone(handoff);
          if (this.stopping) break;
          this.hook('onError', error);
          wake = 'beat';
          await sleep(backoffMs(failures++));
          continue;
        }
      }
      this.claiming = false;
      // stopped while the claim was in flight: leave the jobs to their leases (reaped, run again)
      if (this.stopping) break;
      if (claimed.jobs.length > 0) this.accept(claimed.jobs);
      // the park ended on the schedule bell or the beat's end: the beat (reap, promote) is due
      if (fromPark && wake === 'beat') continue;
      // settles came in while the claim was in flight: they go out now, not after a park
      if (claimed.jobs.length === want || this.stopping || this.handoff.length > 0) {
        wake = 'claim';
        continue;
      }
      this.armTimers(claimed.nextDueAt, claimed.nextLeaseEnd);
      try {
        ({ wake, early } = await this.park());
      } catch (error) {
        if (this.stopping) break;
        this.hook('onError', error);
        wake = 'beat';
        await sleep(backoffMs(failures++));
      }
    }
    // settles handed over as the loop stopped still go out
    const left = this.handoff.splice(0);
    if (left.length > 0) void this.settleAlone(left);
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
    const op = this.queue.scripts.claimOp(n, this.leaseMs);
    this.spare ??= withSignal();
    const { key, reply } = await this.transport.blpopThen(this.bells, left, op.call);
    const wake: Wake = key === this.bells[0] ? 'claim' : 'beat';
    if (reply === undefined || reply instanceof Error) return { wake };
    const claimed = this.queue.decodeClaim(op.parse(reply));
    // the claim ran as its reply left Redis: within a one-way trip of now
    this.serverOffset = claimed.now - performance.now();
    return { wake, early: { claimed, asked: n } };
  }

  private serverNow(): number {
    return performance.now() + this.serverOffset;
  }

  /**
   * Local timers for the next due job and the next lease deadline: Redis wakes a blocked BLPOP
   * on timeout only at its hz tick, so promotion and reaping run on our own timers. The tick
   * promotes or reaps, which rings the doorbell for whoever is parked.
   */
  private armTimers(nextDueAt: number | null, nextLeaseEnd: number | null): void {
    if (this.stopping) return;
    if (nextDueAt !== null && (!this.dueTimer || nextDueAt < this.dueTimer.at)) {
      if (this.dueTimer) clearTimeout(this.dueTimer.timer);
      const timer = setTimeout(() => {
        this.dueTimer = undefined;
        void this.tick();
      }, Math.max(0, nextDueAt - this.serverNow() + 1));
      this.dueTimer = { at: nextDueAt, timer };
    }
    if (nextLeaseEnd !== null && (!this.leaseTimer || nextLeaseEnd < this.leaseTimer.at)) {
      if (this.leaseTimer) clearTimeout(this.leaseTimer.timer);
      const timer = setTimeout(() => {
        this.leaseTimer = undefined;
        void this.tick();
      }, Math.max(0, nextLeaseEnd - this.serverNow() + 1));
      this.leaseTimer = { at: nextLeaseEnd, timer };
    }
  }

  /** Reap and promote without claiming; re-arm the timers from what it saw. */
  private async tick(): Promise<void> {
    if (this.stopping) return;
    try {
      const t0 = performance.now();
      const seen = await this.queue.beat({ n: 0, leaseMs: this.leaseMs });
      this.serverOffset = seen.now - (t0 + performance.now()) / 2;
      this.armTimers(seen.nextDueAt, seen.nextLeaseEnd);
    } catch (error) {
      this.hook('onError', error);
    }
  }

  /** Renews every held lease in one call; a job whose renewal is fenced off is aborted. */
  private async renew(): Promise<void> {
    const live = [...this.held.values(), ...this.waiting].filter((h) => !h.fenced && !h.abandoned);
    if (live.length === 0) return;
    try {
      const deadlines = await this.queue.extend(live.map(held), this.leaseMs);
      live.forEach((h, i) => {
        if (deadlines[i] === null && !h.fenced) {
          h.fenced = true;
          // a waiting job may have started while the call was out: fence the one in hand too
          const started = this.held.get(h.job.id);
          if (started && !started.fenced) started.fenced = true;
          (started ?? h).controller.abort(new LeaseLostError(h.job.id));
        }
      });
      // a waiting job whose lease was lost is dropped without running, and its room claims again
      if (this.waiting.some((h) => h.fenced)) this.startWaiting();
    } catch (error) {
      this.hook('onError', error);
    }
  }

  private clearTimers(): void {
    if (this.dueTimer) clearTimeout(this.dueTimer.timer);
    if (this.leaseTimer) clearTimeout(this.leaseTimer.timer);
    this.dueTimer = this.leaseTimer = undefined;
  }

  protected hook<K extends keyof ConsumerHooks<Payload>>(
    name: K,
    ...args: Parameters<NonNullable<ConsumerHooks<Payload>[K]>>
  ): void {
    try {
      (this.hooks[name] as ((...a: typeof args) => void) | undefined)?.(...args);
    } catch {
      // a hook must never stop the loop
    }
  }
}

const withSignal = (): AbortController => {
  const controller = new AbortController();
  void controller.signal;
  return controller;
};
const liveEntries = <P>(batch: ReadonlyArray<SettleRequest<P>>): Array<SettleEntry<P>> =>
  batch.flatMap((r) => r.entries.filter((e) => !e.held.fenced && !e.held.abandoned));
const held = <P>(h: HeldJob<P>): { id: string; token: number } => ({ id: h.job.id, token: h.job.token });
const durationOf = <P>(h: HeldJob<P>): number => performance.now() - h.startedAt;

/** 100 ms doubling to 5 s, with jitter, after `failures` failures in a row. */
function backoffMs(failures: number): number {
  const base = Math.min(5_000, 100 * 2 ** failures);
  return base / 2 + Math.random() * (base / 2);
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 1) throw new InvalidArgumentError(`${name} must be a number >= 1, got ${value}`);
  return value;
}

