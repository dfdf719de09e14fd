import { performance } from 'node:perf_hooks';
import type { Outcome } from '../handler.js';
import type { Claimed, Finished, Leases, RoundResult, Settled } from '../lease.js';
import { backoffMs, sleep } from './backoff.js';
import { type ConsumerHooks, fireHook } from './consumer-types.js';
import { type HeldJob, type SettleEntry, type SettleRequest } from './held-job.js';

/**
 * What a SettleBatcher reads of the loop it feeds, and how it tells it a slot is free. The loop
 * hands in a view of itself: getters over its flags (only the loop sets them) and its held map.
 *
 * @example
 * const view: SettleLoop<P> = { get stopping() { return loop.stopping; }, ..., held, slotFreed: () => loop.slotFreed() };
 */
export interface SettleLoop<Payload> {
  /** Jobs running or settling: a recorded settle takes its jobs out. */
  readonly held: Map<string, HeldJob<Payload>>;
  /** stop() has begun: settles no longer wait for a claim to ride with. */
  readonly stopping: boolean;
  /** The loop waits for a free slot: this turn's settles wake it and go with its claim. */
  readonly waitingForSlot: boolean;
  /** The loop has a claim in flight: this turn's settles go with its next request. */
  readonly claiming: boolean;
  /** Settles were recorded (or handed over): the loop looks at its slots again. */
  slotFreed(): void;
}

/**
 * How a parked consumer records how its jobs ended. The settles of one event-loop turn are
 * collected and go out together in one round trip; when the loop is waiting for a free slot or
 * has a claim in flight they are handed over to it, and its next request both records them and
 * claims the next jobs (complete with claimN), so a busy consumer spends one request per batch
 * instead of two per job. A batch sent on its own is retried with backoff while the leases last
 * (after that the job is reaped and runs again: at least once, never lost). Replies fire the
 * hooks, mark lost leases fenced, and free the jobs' slots in the held map.
 *
 * @example
 * const settles = new SettleBatcher(leases, leaseMs, hooks, loopView);
 * await settles.settle([{ held: h, outcome: { kind: 'complete' } }]);
 */
export class SettleBatcher<Payload> {
  /** settle() calls of this turn, sent when it ends. */
  private pending: Array<SettleRequest<Payload>> = [];
  private flushTimer: ReturnType<typeof setImmediate> | undefined;
  /** Settles the loop sends with its next claim (it was waiting for a slot, or claiming, when they came). */
  private handoff: Array<SettleRequest<Payload>> = [];

  constructor(
    private readonly leases: Leases<Payload>,
    private readonly leaseMs: number,
    private readonly hooks: ConsumerHooks<Payload>,
    private readonly loop: SettleLoop<Payload>,
  ) {}

  /** Records how held jobs ended and frees their slots; resolves once recorded. */
  settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.pending.push({ entries, resolve });
      this.flushTimer ??= setImmediate(() => this.flush());
    });
  }

  /** Whether settles wait for the loop's next claim. */
  get handingOff(): boolean {
    return this.handoff.length > 0;
  }

  /** The settles waiting for the loop's next claim, to count (takeHandoff takes them out). */
  get handedOff(): ReadonlyArray<SettleRequest<Payload>> {
    return this.handoff;
  }

  /** Takes out the settles waiting for the loop's next claim (for sendWithClaim, or sendAlone). */
  takeHandoff(): Array<SettleRequest<Payload>> {
    return this.handoff.splice(0);
  }

  /** Sends what settled this turn: handed to the loop when it waits for a slot, else on its own. */
  private flush(): void {
    this.flushTimer = undefined;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    if (this.loop.waitingForSlot && !this.loop.stopping) {
      this.handoff.push(...batch);
      this.loop.slotFreed();
      return;
    }
    // a claim is in flight: these go out with the loop's next request, right after its reply
    if (this.loop.claiming && !this.loop.stopping) {
      this.handoff.push(...batch);
      return;
    }
    void this.sendAlone(batch);
  }

  /** Records `batch` in one round trip, retried with backoff while the leases last; never throws. */
  async sendAlone(batch: ReadonlyArray<SettleRequest<Payload>>): Promise<void> {
    try {
      const live = liveEntries(batch);
      if (live.length === 0) return;
      const giveUpAt = performance.now() + this.leaseMs;
      for (let failures = 0; ; failures++) {
        try {
          this.recorded(live, await this.leases.round({ finished: live.map(finishedOf), leaseMs: this.leaseMs }));
          return;
        } catch (error) {
          fireHook(this.hooks, 'onError', error);
          // The lease will lapse and the job run again: at least once, never lost.
          if (performance.now() > giveUpAt || this.loop.stopping) return;
          await sleep(backoffMs(failures));
        }
      }
    } finally {
      this.release(batch);
    }
  }

  /**
   * Records `batch` and claims up to `n` next jobs in one round trip (with `beat`, a beat claims
   * them: reap, promote, claim); throws, recording nothing, when the call fails. The batch stays
   * in hand until the caller, taking the claimed jobs into hand in the same step, calls
   * release(batch): in between, neither the freed slots nor the claimed jobs are counted twice.
   */
  async sendWithClaim(batch: ReadonlyArray<SettleRequest<Payload>>, n: number, beat = false): Promise<Claimed<Payload>> {
    const live = liveEntries(batch);
    const result = await this.leases.round({ finished: live.map(finishedOf), claim: n, beat, leaseMs: this.leaseMs });
    this.recorded(live, result);
    return result.claimed!;
  }

  /** Settled jobs leave our hands: their slots are free and their settle calls resolve. */
  release(batch: ReadonlyArray<SettleRequest<Payload>>): void {
    const inHand = this.loop.held;
    for (const { entries, resolve } of batch) {
      for (const { held } of entries) {
        if (inHand.get(held.job.id) === held) inHand.delete(held.job.id);
        if (held.fenced && !held.abandoned) fireHook(this.hooks, 'onFenced', held.job);
      }
      resolve();
    }
    this.loop.slotFreed();
  }

  /** What a round recorded: hooks fire, and a job whose lease was lost is marked fenced. */
  private recorded(entries: ReadonlyArray<SettleEntry<Payload>>, { settled }: RoundResult<Payload>): void {
    entries.forEach(({ held, outcome }, i) => {
      const how: Settled = settled[i] ?? 'fenced';
      const durationMs = durationOf(held);
      if (how === 'fenced') held.fenced = true;
      else if (how === 'completed') fireHook(this.hooks, 'onCompleted', held.job, { durationMs });
      else if (how === 'dead') fireHook(this.hooks, 'onDead', held.job, { durationMs, error: errorOf(outcome) });
      else fireHook(this.hooks, 'onRetried', held.job, { durationMs, error: errorOf(outcome), outcome: how });
    });
  }
}

const finishedOf = <P>(e: SettleEntry<P>): Finished => ({ job: e.held.job, outcome: e.outcome });
const errorOf = (outcome: Outcome): string => (outcome.kind === 'complete' ? '' : outcome.error);
const liveEntries = <P>(batch: ReadonlyArray<SettleRequest<P>>): Array<SettleEntry<P>> =>
  batch.flatMap((r) => r.entries.filter((e) => !e.held.fenced && !e.held.abandoned));
const durationOf = <P>(h: HeldJob<P>): number => performance.now() - h.startedAt;
