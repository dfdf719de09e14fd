import type { Job } from '../../job.js';
import type { Leases } from '../../lease/leases.js';
import type { StepHost } from '../../steps/job-steps.js';
import { type ConsumerHooks, fireHook } from './hooks.js';
import { type HeldJob, type JobsInHand, leaseOf } from './jobs-in-hand.js';
import type { Prefetch } from './prefetch.js';
import type { SettleEntry, Settles, SettlesLoop } from './settles.js';
import type { SlotHost, SlotStrategy } from './slots.js';

/** What the runs read of the loop. The loop passes itself: only it sets these. */
export type RunsLoop = Pick<SettlesLoop, 'stopping' | 'slotFreed'>;

/**
 * A parked consumer's runs: claimed jobs wait in hand and start as slots free (the slot strategy
 * says how many and how they run), and each run is kept, as a count, so stop() can wait for them
 * all to end. It is the host the strategy runs jobs through.
 *
 * @example
 * const runs = new Runs(slots, jobs, settles, prefetch, hooks, loop, queue.name, leases);
 * runs.accept(claimed.jobs);
 * await runs.allEnded();
 */
export class Runs<Payload> implements SlotHost<Payload> {
  /** Runs kept (see keep) that have not ended, and who waits for them all to end (stop). */
  private runsLeft = 0;
  private onAllEnded: (() => void) | undefined;

  constructor(
    private readonly slots: SlotStrategy<Payload>,
    private readonly jobs: JobsInHand<Payload>,
    private readonly settles: Settles<Payload>,
    private readonly prefetch: Prefetch,
    private readonly hooks: ConsumerHooks<Payload>,
    private readonly loop: RunsLoop,
    readonly queue: string,
    private readonly leases: Leases<Payload>,
    /** The server's clock as the loop estimates it (LeaseTimers.serverNow): a waiting job whose lease ended never starts. */
    private readonly serverNow: () => number = () => Number.NEGATIVE_INFINITY,
  ) {}

  /** Claimed jobs join the wait; as many as there are free slots start now. */
  accept(jobs: ReadonlyArray<Job<Payload>>): void {
    // a handler's signal is made only if it reads it (see contextOf)
    for (const job of jobs) this.jobs.wait(job, new AbortController());
    this.startWaiting();
  }

  /**
   * Starts waiting jobs while slots are free; a waiting job whose lease was lost never runs, nor one
   * whose lease has ended by the server's clock (a consumer frozen past it: the reaper may have
   * given it to another consumer, or ended it cancelled).
   */
  startWaiting(): void {
    if (this.loop.stopping) return;
    this.jobs.expireWaiting(this.serverNow());
    const dropped = this.jobs.dropFenced();
    const n = Math.min(this.slots.startable(), this.jobs.waitingCount);
    if (n > 0) this.slots.dispatch(this.jobs.takeWaiting(n), this);
    if (dropped) this.loop.slotFreed();
  }

  /** Where handlers record their durable steps: the queue's leases'. */
  get steps(): StepHost {
    return this.leases.steps;
  }

  start(waiting: HeldJob<Payload>, controller?: AbortController): HeldJob<Payload> {
    return this.jobs.start(waiting, controller);
  }

  settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void> {
    return this.settles.settle(entries);
  }

  /**
   * A handler ended after `ms` (its settle not yet recorded): the moving average that decides
   * 'auto' prefetch learns it, and its slot takes the next waiting job at once.
   */
  handlerEnded(ms: number): void {
    this.prefetch.learn(ms);
    this.startWaiting();
  }

  slotFreed(): void {
    this.loop.slotFreed();
  }

  async progress(jobs: ReadonlyArray<HeldJob<Payload>>, value: unknown): Promise<boolean> {
    const written = await this.leases.progress(jobs.map(leaseOf), value);
    // the lease is lost: the same as a refused renewal (fenced, the run aborted)
    written.forEach((ok, i) => ok || this.jobs.leaseLost(jobs[i]!));
    return written.every(Boolean);
  }

  keep(run: Promise<void>): void {
    // a count, not a set of promises: two promises and a closure less per job
    this.runsLeft++;
    run.then(this.runEnded, this.runFailed);
  }

  /** stop(): resolves when every kept run has ended (undefined when none runs); see stopWaiting. */
  allEnded(): Promise<void> | undefined {
    return this.runsLeft === 0 ? undefined : new Promise<void>((resolve) => (this.onAllEnded = resolve));
  }

  /** stop() no longer waits (its timeout came first, or the runs ended). */
  stopWaiting(): void {
    this.onAllEnded = undefined;
  }

  private readonly runEnded = (): void => {
    if (--this.runsLeft === 0) this.onAllEnded?.();
  };

  private readonly runFailed = (error: unknown): void => {
    fireHook(this.hooks, 'onError', error);
    this.runEnded();
  };
}
