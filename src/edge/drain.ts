import type { Handler } from '../handler.js';
import type { Claimed, Leases } from '../lease.js';
import type { Queue } from '../queue.js';
import { type BeatSummary, boundedBeat, type BoundedBeatOptions, type FinishedJob } from './bounded-beat.js';

/** The beat settings a drain runs with (the Worker's, after its env overrides). */
export type DrainBeatOptions = Omit<BoundedBeatOptions, 'deadline' | 'first' | 'carried' | 'holdAcks' | 'moreWork' | 'leases'>;

/** How one isolate's drains behave. */
export interface DrainSettings {
  readonly beat: DrainBeatOptions;
  /** How long after an enqueue through the API jobs may still be started, in ms (0: no drain). */
  readonly drainOnEnqueueMs: number;
  /** How long a finished job's acknowledgement may wait for a request to ride with, in ms. */
  readonly ackWithinMs: number;
}

const jobTimeoutOf = (settings: DrainSettings): number => settings.beat.jobTimeoutMs ?? 10_000;

/**
 * What one isolate knows of a queue, shared by the drains its requests and scheduled events run.
 * Plain data only: a Worker may not resolve a promise of one request from another, so drains
 * never wake each other; they leave each other news and acknowledgements to pick up.
 */
export class IsolateQueue<P = unknown> {
  /** Completions waiting for a request to ride with: the next beat of any drain of this queue takes them. */
  private carried: Array<FinishedJob<P>> = [];
  private carriedSince = 0;
  /** Claimable work arrived while a drain was beating: it claims again before it ends. */
  private news = false;
  /** The earliest due time announced for a drain in its beats (local ms), or null. */
  private dueAnnounced: number | null = null;
  private readonly drains = new Set<QueueDrain<P>>();

  constructor(
    readonly queue: Queue<P>,
    readonly leases: Leases<P>,
    readonly handler: Handler<P>,
  ) {}

  /**
   * Whether a drain of this isolate will claim work that becomes claimable at `dueAt`: one in its
   * beats (it claims again, or reads the next due time as it runs dry) that may still start a job
   * then, or one asleep until no later than then. Else the caller starts a drain.
   */
  covers(dueAt: number): boolean {
    for (const drain of this.drains) if (drain.willClaimAt(dueAt)) return true;
    return false;
  }

  /**
   * Work arrived that a drain of this isolate covers (see covers): claimable now (`dueAt`
   * undefined), and a drain in its beats claims again; or due at `dueAt`, which a drain running
   * dry takes as its next wake even when its last claim was sent before the job was written.
   */
  announce(dueAt?: number): void {
    if (dueAt === undefined) this.news = true;
    else this.dueAnnounced = Math.min(this.dueAnnounced ?? Infinity, dueAt);
  }

  /** The earliest due time announced since the last call (and forgets it), or null. */
  takeAnnouncedDue(): number | null {
    const due = this.dueAnnounced;
    this.dueAnnounced = null;
    return due;
  }

  /** Whether work arrived since the last call (and forgets it). */
  takeNews(): boolean {
    const news = this.news;
    this.news = false;
    return news;
  }

  /** The completions held back, to send with the caller's next request. */
  takeCarried(): Array<FinishedJob<P>> {
    return this.carried.splice(0);
  }

  /** Completions a beat left as the queue ran dry: they wait here for a request to ride with. */
  hold(finished: ReadonlyArray<FinishedJob<P>>): void {
    if (this.carried.length === 0) this.carriedSince = Date.now();
    this.carried.push(...finished);
  }

  /** When the held completions must go, alone if no request took them by then; null when none wait. */
  carriedDueAt(ackWithinMs: number): number | null {
    return this.carried.length === 0 ? null : this.carriedSince + ackWithinMs;
  }

  joined(drain: QueueDrain<P>): void {
    this.drains.add(drain);
  }

  left(drain: QueueDrain<P>): void {
    this.drains.delete(drain);
  }
}

/** What one drain is doing now. */
type Phase = { readonly kind: 'beating' } | { readonly kind: 'sleeping'; readonly until: number; readonly forDue: boolean } | { readonly kind: 'done' };

/**
 * One run of bounded beats on a queue, inside one request's or scheduled event's lifetime: beats
 * until the queue is dry, then sleeps for a job that falls due before its deadline (and beats
 * again), or for held completions to be sent if no other request took them. A completion left as
 * the queue runs dry rides with the next beat of any drain of this queue in the isolate, so a
 * lone job and the claim after it cost one request, not two.
 */
export class QueueDrain<P = unknown> {
  private phase: Phase = { kind: 'beating' };
  /** No job starts after this (the deadline less a job timeout). */
  private readonly lastStart: number;
  private budgetLeft: number;
  /** Completions sent in requests of their own after the beats (in no beat's summary). */
  readonly acknowledgedLater = { completed: 0, fenced: 0, requests: 0 };

  constructor(
    private readonly shared: IsolateQueue<P>,
    private readonly settings: DrainSettings,
    private readonly deadline: number,
    budget: number,
    private readonly onOutcome?: BoundedBeatOptions['onOutcome'],
  ) {
    this.lastStart = deadline - jobTimeoutOf(settings);
    this.budgetLeft = budget;
  }

  /** How many jobs a first beat claims now: none once no job could finish in time. */
  firstClaim(): number {
    return Date.now() <= this.lastStart ? (this.settings.beat.batchSize ?? 20) : 0;
  }

  /** See IsolateQueue.covers. */
  willClaimAt(dueAt: number): boolean {
    if (this.phase.kind === 'beating') return dueAt <= this.lastStart;
    return this.phase.kind === 'sleeping' && this.phase.forDue && this.phase.until <= dueAt;
  }

  /**
   * Beats, sleeping between them for jobs that fall due, until the queue is dry with nothing due
   * before the deadline. `first` is the reply of a first beat the caller already sent (a scheduled
   * event sends every queue's in one request); `sleepUntil` starts asleep (a delayed job's drain).
   */
  async run(start: { first?: { claimed: Claimed<P>; asked: number }; sleepUntil?: number } = {}): Promise<BeatSummary[]> {
    const summaries: BeatSummary[] = [];
    let first = start.first;
    let dueAt = start.sleepUntil ?? null;
    this.shared.joined(this);
    try {
      for (;;) {
        if (dueAt !== null && !(await this.sleep(dueAt))) break;
        this.phase = { kind: 'beating' };
        const summary = await boundedBeat(this.shared.queue, this.shared.handler, {
          ...this.settings.beat,
          deadline: this.deadline,
          maxRequests: this.budgetLeft,
          leases: this.shared.leases,
          ...(first ? { first } : {}),
          carried: this.shared.takeCarried(),
          holdAcks: (finished) => this.shared.hold(finished),
          moreWork: () => this.shared.takeNews(),
          ...(this.onOutcome ? { onOutcome: this.onOutcome } : {}),
        });
        first = undefined;
        summaries.push(summary);
        this.budgetLeft -= summary.requests;
        if (summary.stoppedBy !== 'empty' || this.budgetLeft <= 1) break;
        // news that came after the beat's last look: claim again now, before anyone counts on us
        if (this.shared.takeNews()) {
          dueAt = null;
          continue;
        }
        const announced = this.shared.takeAnnouncedDue();
        const next = summary.nextDueInMs === null ? null : Date.now() + summary.nextDueInMs;
        dueAt = next === null ? announced : announced === null ? next : Math.min(next, announced);
        if (dueAt !== null && dueAt > this.lastStart) dueAt = null;
        if (dueAt === null && !(await this.sleep(null))) break;
      }
    } finally {
      this.phase = { kind: 'done' };
      this.shared.left(this);
    }
    return summaries;
  }

  /**
   * Sleeps until `dueAt` (null: no job due), sending held completions alone on the way if no
   * other request took them in time. True when it woke for the due job, false when nothing is
   * left to wait for.
   */
  private async sleep(dueAt: number | null): Promise<boolean> {
    for (;;) {
      const ackBy = this.shared.carriedDueAt(this.settings.ackWithinMs);
      if (dueAt === null && ackBy === null) return false;
      const until = Math.min(dueAt ?? Infinity, ackBy ?? Infinity);
      this.phase = { kind: 'sleeping', until: dueAt ?? until, forDue: dueAt !== null };
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
      if (dueAt !== null && Date.now() >= dueAt) return true;
      // the completions held now may be newer than those this sleep was timed for (another
      // request took those and left its own): only what has waited its time goes alone
      const heldUntil = this.shared.carriedDueAt(this.settings.ackWithinMs);
      if (heldUntil !== null && Date.now() >= heldUntil) await this.sendCarried();
    }
  }

  /** Sends the held completions in a request of their own, if they are still held. */
  private async sendCarried(): Promise<void> {
    const finished = this.shared.takeCarried();
    if (finished.length === 0) return;
    const before = this.shared.leases.requests;
    // leaseMs is the lease of jobs claimed: this round claims none
    const { settled } = await this.shared.leases.round({ finished, leaseMs: 1 });
    const requests = this.shared.leases.requests - before;
    this.budgetLeft -= requests;
    this.acknowledgedLater.requests += requests;
    settled.forEach((how, i) => {
      if (how === 'completed') this.acknowledgedLater.completed++;
      else this.acknowledgedLater.fenced++;
      this.onOutcome?.(finished[i]!.job, how === 'fenced' ? { kind: 'fenced' } : finished[i]!.outcome);
    });
  }
}
