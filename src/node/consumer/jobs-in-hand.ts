import { performance } from 'node:perf_hooks';
import { JobCancelledError } from '../../handler.js';
import type { Job } from '../../job.js';
import { ConsumerStoppedError, LeaseLostError } from './errors.js';
import { type ConsumerHooks, fireHook } from './hooks.js';

/**
 * A job this consumer holds a lease on, from its claim to its recorded settle. Its `fenced` and
 * `abandoned` marks are what stop a result from being recorded once the lease is not ours any
 * more: only JobsInHand sets them.
 *
 * @example
 * const h = jobs.start(waiting);
 * if (!h.fenced) await settles.settle([{ held: h, outcome }]);
 */
export interface HeldJob<Payload> {
  readonly job: Job<Payload>;
  readonly controller: AbortController;
  readonly startedAt: number;
  /** The lease was lost: nothing about this job may be recorded any more. */
  readonly fenced: boolean;
  /** stop() gave up on it: given back (or, if that failed, its lease lapses and it is reaped). */
  readonly abandoned: boolean;
  /** Its run ended and its settle is on its way: stop() lets that settle decide, never gives it back. */
  readonly settling: boolean;
  /** Its settle was recorded: a renewal refused after that (the lease ended with it) changes nothing. */
  readonly recorded: boolean;
  /** Its lease's deadline (server ms): the claim's, then each renewal's. */
  readonly leaseEnd: number;
}

/** The marks as JobsInHand writes them (HeldJob shows them read-only to everyone else). */
type Marks = { fenced: boolean; abandoned: boolean; settling: boolean; recorded: boolean; leaseEnd: number };
const marksOf = <P>(h: HeldJob<P>): Marks => h;

/**
 * The lease a held job is recorded under: its id and the fencing token of its claim.
 *
 * @example
 * await leases.extend(live.map(leaseOf), leaseMs);
 */
export const leaseOf = <P>(h: HeldJob<P>): { id: string; token: number } => ({ id: h.job.id, token: h.job.token });

/**
 * The jobs in a parked consumer's hands, and the only writer of them: those running or settling
 * (held, by id, until their settle is recorded) and those claimed and waiting for a free slot
 * (prefetched, oldest first), with the fenced and abandoned marks on each. The loop's parts ask
 * it for counts and tell it what happened; it fires the hooks that say so (onStarted, onFenced).
 *
 * @example
 * const jobs = new JobsInHand<P>(hooks);
 * jobs.wait(job, new AbortController());
 * for (const waiting of jobs.takeWaiting(1)) run(jobs.start(waiting));
 */
export class JobsInHand<Payload> {
  /** Jobs running or settling: a recorded settle takes its jobs out. */
  private readonly held = new Map<string, HeldJob<Payload>>();
  /** Claimed jobs waiting for a free slot, oldest first (their leases are renewed too). */
  private readonly waiting: Array<HeldJob<Payload>> = [];

  constructor(private readonly hooks: ConsumerHooks<Payload>) {}

  /** Jobs running or settling. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Jobs claimed and waiting for a free slot. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** A claimed job joins the wait, with the controller its run will use. */
  wait(job: Job<Payload>, controller: AbortController): void {
    this.waiting.push({ job, controller, startedAt: 0, fenced: false, abandoned: false, settling: false, recorded: false, leaseEnd: job.leaseUntil });
  }

  /** Drops the waiting jobs whose lease was lost: they never run (onFenced tells). True if any. */
  dropFenced(): boolean {
    let dropped = false;
    for (let i = 0; i < this.waiting.length; ) {
      if (this.waiting[i]!.fenced) {
        fireHook(this.hooks, 'onFenced', this.waiting.splice(i, 1)[0]!.job);
        dropped = true;
      } else i++;
    }
    return dropped;
  }

  /** A renewal moved `h`'s lease deadline to `deadline` (server ms). */
  renewed(h: HeldJob<Payload>, deadline: number): void {
    marksOf(h).leaseEnd = deadline;
    const started = this.startedOf(h);
    if (started && started !== h) marksOf(started).leaseEnd = deadline;
  }

  /**
   * The started job of `h`'s claim: `h` itself, or the one made of it when it left waiting while
   * a renewal of it was out. Never a later claim of the same job (its settle recorded, the job
   * claimed again before the renewal's reply was read): that holds another lease, its token its own.
   */
  private startedOf(h: HeldJob<Payload>): HeldJob<Payload> | undefined {
    const started = this.held.get(h.job.id);
    return started && started.job.token === h.job.token ? started : undefined;
  }

  /** Waiting jobs whose lease ended by `serverNow` (ms) are lost: fenced, for dropFenced to drop. */
  expireWaiting(serverNow: number): void {
    for (const h of this.waiting) if (!h.fenced && h.leaseEnd <= serverNow) this.leaseLost(h);
  }

  /** Whether a waiting job's lease was lost (dropFenced drops it). */
  anyWaitingFenced(): boolean {
    return this.waiting.some((h) => h.fenced);
  }

  /** Takes the `n` oldest waiting jobs out, to start them. */
  takeWaiting(n: number): Array<HeldJob<Payload>> {
    return this.waiting.splice(0, n);
  }

  /** stop(): takes every waiting job out, and returns those whose lease is still ours. */
  drainWaiting(): Array<HeldJob<Payload>> {
    return this.waiting.splice(0).filter((h) => !h.fenced);
  }

  /** Takes a waiting job into hand as it starts (onStarted tells). */
  start(waiting: HeldJob<Payload>, controller = waiting.controller): HeldJob<Payload> {
    const h: HeldJob<Payload> = { ...waiting, controller, startedAt: performance.now() };
    this.held.set(h.job.id, h);
    fireHook(this.hooks, 'onStarted', h.job);
    return h;
  }

  /** A settled job leaves our hands, its slot free; onFenced tells if its lease had been lost. */
  leave(h: HeldJob<Payload>): void {
    if (this.held.get(h.job.id) === h) this.held.delete(h.job.id);
    if (h.fenced && !h.abandoned) fireHook(this.hooks, 'onFenced', h.job);
  }

  /** A settle found the lease lost (reaped, removed): nothing more about the job is recorded. */
  fence(h: HeldJob<Payload>): void {
    marksOf(h).fenced = true;
  }

  /**
   * A settle recorded the job's outcome: the lease ended with it, the job leaves our hands next.
   * The settle proves the lease was ours until it ran, so a renewal that found the lease gone (sent
   * on another connection, run after the settle, its reply read first) raced it: not a fence.
   */
  recorded(h: HeldJob<Payload>): void {
    marksOf(h).recorded = true;
    marksOf(h).fenced = false;
  }

  /**
   * A renewal found `h`'s lease lost: it is fenced, and its run (if it started) is aborted. Unless
   * its settle was recorded meanwhile (the renewal went out before the settle, its reply came after):
   * then the lease ended because the job did, and nothing changes.
   */
  leaseLost(h: HeldJob<Payload>): void {
    // a waiting job may have started while the call was out: the one in hand is the one to fence
    const started = this.startedOf(h);
    if (h.recorded || started?.recorded) return;
    marksOf(h).fenced = true;
    if (started && !started.fenced) marksOf(started).fenced = true;
    (started ?? h).controller.abort(new LeaseLostError(h.job.id));
  }

  /**
   * Job `id`'s cancel was asked (queue.cancel; heard on its queue's cancel channel, or answered by
   * a renewal): a run not yet ended has its signal aborted with JobCancelledError, and its settle
   * ends it cancelled whatever it returns. A job waiting for a slot never starts: it is taken out
   * and returned, for the caller to give back (release ends it cancelled). Anything else (not
   * ours, settling, recorded) is left as it is: its settle or the reaper ends it.
   */
  cancelAsked(id: string, reason: string): HeldJob<Payload> | undefined {
    const held = this.held.get(id);
    if (held) {
      if (!held.fenced && !held.settling && !held.recorded && !held.controller.signal.aborted) held.controller.abort(new JobCancelledError(id, reason));
      return undefined;
    }
    const i = this.waiting.findIndex((h) => h.job.id === id && !h.fenced);
    return i < 0 ? undefined : this.waiting.splice(i, 1)[0];
  }

  /** `h`'s run ended: its settle is on its way. */
  settling(h: HeldJob<Payload>): void {
    marksOf(h).settling = true;
  }

  /**
   * stop() ran out of time: the jobs still held are given up and their runs aborted; nothing about
   * them is recorded any more. Returns those still running whose lease is ours, for stop() to give
   * back (a job whose settle is on its way is left to that settle).
   */
  abandonAll(): Array<HeldJob<Payload>> {
    const running: Array<HeldJob<Payload>> = [];
    for (const h of this.held.values()) {
      if (!h.fenced && !h.settling) running.push(h);
      marksOf(h).abandoned = true;
      h.controller.abort(new ConsumerStoppedError());
    }
    this.held.clear();
    return running;
  }

  /** The jobs whose leases are ours to renew: held and waiting, neither fenced nor abandoned. */
  renewable(): Array<HeldJob<Payload>> {
    return [...this.held.values(), ...this.waiting].filter((h) => !h.fenced && !h.abandoned && !h.recorded);
  }
}
