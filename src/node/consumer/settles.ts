import { performance } from 'node:perf_hooks';
import type { Outcome } from '../../handler.js';
import type { Claimed, Finished, Leases, RoundResult, Settled } from '../../lease/leases.js';
import { sleep } from '../../timers.js';
import { backoffMs } from './backoff.js';
import { type ConsumerHooks, fireHook } from './hooks.js';
import { type HeldJob, type JobsInHand, leaseOf } from './jobs-in-hand.js';

/**
 * A held job and how its run ended.
 *
 * @example
 * const entry: SettleEntry<P> = { held, outcome: { kind: 'complete' } };
 */
export interface SettleEntry<Payload> {
  readonly held: HeldJob<Payload>;
  readonly outcome: Outcome;
}

/**
 * One settle() call waiting to go out: its entries, and how to tell the caller they are recorded.
 *
 * @example
 * new Promise<void>((resolve) => thisTurn.push({ entries, resolve }));
 */
export interface SettleCall<Payload> {
  readonly entries: ReadonlyArray<SettleEntry<Payload>>;
  readonly resolve: () => void;
}

/**
 * What the batcher asks of the loop it feeds; the loop's other parts take a Pick of it. The Loop
 * implements it and passes itself: only it sets these.
 *
 * @example
 * new Settles(leases, leaseMs, hooks, jobs, loop);
 */
export interface SettlesLoop {
  /** stop() has begun: settles no longer wait for a request to ride with. */
  readonly stopping: boolean;
  /** The loop waits for a free slot: this turn's settles wake it and go with its claim. */
  readonly waitingForSlot: boolean;
  /** The loop has a request in flight: this turn's settles go with its next one. */
  readonly claiming: boolean;
  /** Settles were recorded (or became cargo): the loop looks at its slots again. */
  slotFreed(): void;
}

/**
 * How a parked consumer records how its jobs ended. The settles of one event-loop turn are
 * collected and go out together in one round trip; when the loop is waiting for a free slot or
 * has a request in flight they become its cargo: its next request both records them and claims
 * the next jobs (complete with claimN), so a busy consumer spends one request per batch instead
 * of two per job. A batch sent on its own is retried with backoff while the leases last (after
 * that the job is reaped and runs again: at least once, never lost). Replies fire the hooks and
 * mark lost leases fenced; a recorded settle's jobs then leave our hands (letGo).
 *
 * @example
 * const settles = new Settles(leases, leaseMs, hooks, jobs, loop);
 * await settles.settle([{ held: h, outcome: { kind: 'complete' } }]);
 */
export class Settles<Payload> {
  /** settle() calls of this turn, sent when it ends. */
  private readonly thisTurn: Array<SettleCall<Payload>> = [];
  private flushTimer: ReturnType<typeof setImmediate> | undefined;
  /** The cargo: settles waiting to ride with the loop's next request (see takeCargo). */
  readonly #cargo: Array<SettleCall<Payload>> = [];

  constructor(
    private readonly leases: Leases<Payload>,
    private readonly leaseMs: number,
    private readonly hooks: ConsumerHooks<Payload>,
    private readonly jobs: JobsInHand<Payload>,
    private readonly loop: SettlesLoop,
  ) {}

  /** Records how held jobs ended and frees their slots; resolves once recorded. */
  settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void> {
    for (const { held } of entries) this.jobs.settling(held);
    return new Promise<void>((resolve) => {
      this.thisTurn.push({ entries, resolve });
      this.flushTimer ??= setImmediate(() => this.flush());
    });
  }

  /** The settles waiting to ride with the loop's next request, to count (takeCargo takes them out). */
  get cargo(): ReadonlyArray<SettleCall<Payload>> {
    return this.#cargo;
  }

  /** Takes the cargo out, for the loop's request to carry (sendWithClaim) or to send alone. */
  takeCargo(): Array<SettleCall<Payload>> {
    return this.#cargo.splice(0);
  }

  /** Sends what settled this turn: cargo when the loop waits for a slot or claims, else on its own. */
  private flush(): void {
    this.flushTimer = undefined;
    const batch = this.thisTurn.splice(0);
    if (batch.length === 0) return;
    if (this.loop.waitingForSlot && !this.loop.stopping) {
      this.#cargo.push(...batch);
      this.loop.slotFreed();
      return;
    }
    // a claim is in flight: these go out with the loop's next request, right after its reply
    if (this.loop.claiming && !this.loop.stopping) {
      this.#cargo.push(...batch);
      return;
    }
    void this.sendAlone(batch);
  }

  /** Records `batch` in one round trip, retried with backoff while the leases last; never throws. */
  async sendAlone(batch: ReadonlyArray<SettleCall<Payload>>): Promise<void> {
    try {
      const live = liveEntries(batch);
      if (live.length === 0) return;
      const giveUpAt = performance.now() + this.leaseMs;
      const finished = live.map(finishedOf);
      for (let failures = 0; ; failures++) {
        try {
          this.recorded(live, await this.leases.round({ finished, leaseMs: this.leaseMs }));
          return;
        } catch (error) {
          fireHook(this.hooks, 'onError', error);
          // The lease will lapse and the job run again: at least once, never lost.
          if (performance.now() > giveUpAt || this.loop.stopping) return;
          await sleep(backoffMs(failures));
        }
      }
    } finally {
      this.letGo(batch);
    }
  }

  /**
   * Records `batch` and claims up to `n` next jobs in one round trip (with `beat`, a beat claims
   * them: reap, promote, claim); throws, recording nothing, when the call fails. The batch stays
   * in hand until the caller, taking the claimed jobs into hand in the same step, calls
   * letGo(batch): in between, neither the freed slots nor the claimed jobs are counted twice.
   */
  async sendWithClaim(batch: ReadonlyArray<SettleCall<Payload>>, n: number, beat = false): Promise<Claimed<Payload>> {
    const live = liveEntries(batch);
    const result = await this.leases.round({ finished: live.map(finishedOf), claim: n, beat, leaseMs: this.leaseMs });
    this.recorded(live, result);
    return result.claimed!;
  }

  /** Settled jobs leave our hands: their slots are free and their settle calls resolve. */
  letGo(batch: ReadonlyArray<SettleCall<Payload>>): void {
    for (const { entries, resolve } of batch) {
      for (const { held } of entries) this.jobs.leave(held);
      resolve();
    }
    this.loop.slotFreed();
  }

  /**
   * stop(): jobs claimed but never started, and those still running when its time ran out, go
   * back to their lanes, claimable at once, their attempt not counted (`release`). So does a
   * prefetched job whose cancel was asked, which release ends cancelled (onCancelled tells).
   */
  async giveBack(jobs: ReadonlyArray<HeldJob<Payload>>): Promise<void> {
    if (jobs.length === 0) return;
    try {
      const outcomes = await this.leases.release(jobs.map(leaseOf));
      outcomes.forEach((how, i) => how === 'cancelled' && fireHook(this.hooks, 'onCancelled', jobs[i]!.job, { durationMs: 0 }));
    } catch (error) {
      // their leases lapse and they are reaped: run again, one attempt counted
      fireHook(this.hooks, 'onError', error);
    }
  }

  /** What a round recorded: hooks fire, and a job whose lease was lost is marked fenced. */
  private recorded(entries: ReadonlyArray<SettleEntry<Payload>>, { settled }: RoundResult<Payload>): void {
    entries.forEach(({ held, outcome }, i) => {
      const how: Settled = settled[i] ?? 'fenced';
      const durationMs = durationOf(held);
      if (how === 'fenced') {
        this.jobs.fence(held);
        return;
      }
      this.jobs.recorded(held);
      if (how === 'completed') fireHook(this.hooks, 'onCompleted', held.job, { durationMs });
      else if (how === 'cancelled') fireHook(this.hooks, 'onCancelled', held.job, { durationMs });
      else if (outcome.kind === 'suspend') fireHook(this.hooks, 'onSuspended', held.job, { durationMs, step: outcome.step.name, state: how === 'dead' ? 'pending' : how });
      else if (how === 'dead') fireHook(this.hooks, 'onDead', held.job, { durationMs, error: errorOf(outcome) });
      else if (how === 'pending' || how === 'scheduled') fireHook(this.hooks, 'onRetried', held.job, { durationMs, error: errorOf(outcome), outcome: how });
    });
  }
}

const finishedOf = <P>(e: SettleEntry<P>): Finished => ({ job: e.held.job, outcome: e.outcome });
const errorOf = (outcome: Outcome): string => (outcome.kind === 'complete' || outcome.kind === 'suspend' ? '' : outcome.error);
/** The entries of `batch` whose leases are still ours: neither fenced nor abandoned. */
function liveEntries<P>(batch: ReadonlyArray<SettleCall<P>>): Array<SettleEntry<P>> {
  const live: Array<SettleEntry<P>> = [];
  for (const { entries } of batch) for (const e of entries) if (!e.held.fenced && !e.held.abandoned) live.push(e);
  return live;
}
const durationOf = <P>(h: HeldJob<P>): number => performance.now() - h.startedAt;
