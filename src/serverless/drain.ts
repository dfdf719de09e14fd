import type { Handler } from '../handler.js';
import type { Claimed, Leases } from '../lease/leases.js';
import type { Queue } from '../queue/queue.js';
import { sleep } from '../timers.js';
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

/** How often a drain that woke for a due job looks whether a beat in flight claims it. */
const BEAT_POLL_MS = 2;

/** A drain with no more requests than this left covers no enqueue: it may need them to finish. */
const RESERVED_REQUESTS = 3;

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
  /** Drains of other queues this queue's drains started (flow parents released): the last drain out awaits them. */
  private spawned: Array<Promise<unknown>> = [];
  private readonly drains = new Set<QueueDrain<P>>();
  /** First beats riding in an enqueue's request whose drain has not joined yet: a drain starts from each. */
  private ridesPending = 0;
  /** When the latest beat of any drain was sent, how many are in flight, and when the latest answered one was sent and the next due time it saw (local ms). */
  private beatSentAt = 0;
  private beatsInFlight = 0;
  private seenAt = 0;
  private seenNextDue: number | null = null;
  /** The same next due time as the server gave it (epoch ms on its clock), null for none. */
  private seenNextDueAt: number | null = null;

  constructor(
    readonly queue: Queue<P>,
    readonly leases: Leases<P>,
    readonly handler: Handler<P>,
  ) {}

  /**
   * Work claimable now arrived: true when a drain of this isolate in its beats, with time and
   * requests to spare, will claim it (it claims again before it ends); the caller then starts
   * none. A job due later always gets a drain of its own, asleep until then: its wake costs a
   * request only if no other drain's beat has claimed the job by then, and it spends its own
   * request's budget, not another's.
   */
  covers(): boolean {
    if (this.ridesPending > 0) {
      this.news = true;
      return true;
    }
    for (const drain of this.drains) {
      if (drain.claimsAgain()) {
        this.news = true;
        return true;
      }
    }
    return false;
  }

  /**
   * A drain's first beat rides in an enqueue's request (the Worker's `rideEnqueue`): until the
   * drain that starts from its reply has joined this queue's drains (`rideEnded`; or the ride was
   * withdrawn or failed), work arriving is covered, as by a drain in its beats, since that drain
   * claims again before it ends.
   */
  rideStarted(): void {
    this.ridesPending++;
  }

  rideEnded(): void {
    this.ridesPending--;
  }

  /**
   * Keeps a drain started on this queue's behalf (a flow parent it released, in another queue):
   * a drain of this queue awaits it before it ends, so it runs within the same event.
   */
  spawn(drain: Promise<unknown>): void {
    this.spawned.push(drain);
  }

  /** The drains started on this queue's behalf, to await (and forgets them). */
  takeSpawned(): Array<Promise<unknown>> {
    return this.spawned.splice(0);
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

  /**
   * A drain's beat was sent now: it promotes everything due when it runs, and the drain that sent
   * it claims all of that before it ends. Its reply says when the next job is due.
   */
  beatSent(reply: Promise<Claimed<P> | null>): void {
    const at = Date.now();
    this.beatSentAt = Math.max(this.beatSentAt, at);
    this.beatsInFlight++;
    reply
      .then(
        (claimed) => {
          if (!claimed || at < this.seenAt) return;
          this.seenAt = at;
          // from the send time: an estimate never late (the reply may come a firing's round trip
          // after the beat read the server's clock)
          this.seenNextDue = claimed.nextDueAt === null ? null : at + (claimed.nextDueAt - claimed.now);
          this.seenNextDueAt = claimed.nextDueAt;
        },
        () => {},
      )
      .finally(() => this.beatsInFlight--);
  }

  /**
   * Whether a drain waking for a job due at `dueAt` (local ms, no earlier than its due time on the
   * server), written before `writtenBy`, finds it claimed already: a beat sent since it fell due
   * (`yes`), or one sent after it was written that saw nothing scheduled until after `dueAt` (the
   * job was promoted by then: `yes`); `wait` while a beat is in flight, whose reply will tell;
   * else `no`: the drain beats. With `dueServer`, the due time as the server gave it, "after"
   * compares the server's own figures: the same due time seen from two local clock readings can
   * differ by a few ms either way (a Worker's clock stands still between I/O), and a scheduler's
   * next slot, seen by the beat that fired the one before, is exactly the time the drain sleeps for.
   */
  served(dueAt: number, writtenBy: number, dueServer: number | null = null): 'yes' | 'no' | 'wait' {
    if (this.beatSentAt >= dueAt) return 'yes';
    if (this.beatsInFlight > 0) return 'wait';
    if (this.seenAt < writtenBy) return 'no';
    if (this.seenNextDueAt === null) return 'yes';
    const later = dueServer === null ? this.seenNextDue! > dueAt : this.seenNextDueAt > dueServer;
    return later ? 'yes' : 'no';
  }

  /** No drain of this isolate runs on this queue. */
  idle(): boolean {
    return this.drains.size === 0;
  }

  joined(drain: QueueDrain<P>): void {
    this.drains.add(drain);
  }

  left(drain: QueueDrain<P>): void {
    this.drains.delete(drain);
  }
}

/** What one drain is doing now. */
type Phase = 'beating' | 'sleeping' | 'done';

/**
 * One run of bounded beats on a queue, inside one request's or scheduled event's lifetime: beats
 * until the queue is dry, then sleeps for a job that falls due before its deadline (and beats
 * again), or for held completions to be sent if no other request took them. A completion left as
 * the queue runs dry rides with the next beat of any drain of this queue in the isolate, so a
 * lone job and the claim after it cost one request, not two.
 */
export class QueueDrain<P = unknown> {
  private phase: Phase = 'beating';
  /** No job starts after this (the deadline less a job timeout). */
  private readonly lastStart: number;
  private budgetLeft: number;
  /** When this drain was made: after the enqueue that made it was written. */
  private readonly bornAt = Date.now();
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

  /** Whether this drain is in its beats and will claim again before it ends (see IsolateQueue.covers). */
  claimsAgain(): boolean {
    return this.phase === 'beating' && Date.now() <= this.lastStart && this.budgetLeft > RESERVED_REQUESTS;
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
    /** dueAt as the server gave it, when a beat's reply did. */
    let dueServer: number | null = null;
    this.shared.joined(this);
    try {
      for (;;) {
        if (dueAt !== null && !(await this.sleep(dueAt, dueServer))) break;
        this.phase = 'beating';
        const summary = await boundedBeat(this.shared.queue, this.shared.handler, {
          ...this.settings.beat,
          deadline: this.deadline,
          maxRequests: this.budgetLeft,
          leases: this.shared.leases,
          ...(first ? { first } : {}),
          carried: this.shared.takeCarried(),
          holdAcks: (finished) => this.shared.hold(finished),
          moreWork: () => this.shared.takeNews(),
          onBeat: (reply) => this.shared.beatSent(reply),
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
        dueAt = summary.nextDueInMs === null ? null : Date.now() + summary.nextDueInMs;
        dueServer = summary.nextDueAt;
        if (dueAt !== null && dueAt > this.lastStart) dueAt = null;
        if (dueAt === null && !(await this.sleep(null))) break;
      }
    } finally {
      this.phase = 'done';
      this.shared.left(this);
      // out of time or budget with completions still held: the last drain out sends them, so none
      // is left to its lease (reaped and run again)
      if (this.shared.idle()) await this.sendCarried();
      await this.shared.leases.relayed();
      // drains this queue's relays started (parents released elsewhere) end inside this event
      for (let spawned = this.shared.takeSpawned(); spawned.length > 0; spawned = this.shared.takeSpawned()) await Promise.allSettled(spawned);
    }
    return summaries;
  }

  /**
   * Sleeps until `dueAt` (null: no job due), sending held completions alone on the way if no
   * other request took them in time. True when it woke for the due job and no other drain's beat
   * has claimed it, false when nothing is left to wait for.
   */
  private async sleep(dueAt: number | null, dueServer: number | null = null): Promise<boolean> {
    for (;;) {
      const ackBy = this.shared.carriedDueAt(this.settings.ackWithinMs);
      if (dueAt === null && ackBy === null) {
        // ending, as of now: work that arrives before the caller's `break` runs (its replies read
        // in the same turn as ours) is not ours to claim (covers() says so), it starts a drain
        this.phase = 'done';
        return false;
      }
      const until = Math.min(dueAt ?? Infinity, ackBy ?? Infinity);
      this.phase = 'sleeping';
      await sleep(until - Date.now());
      if (dueAt !== null && Date.now() >= dueAt) {
        // another drain's beat claimed what was due: nothing to wake for but held completions
        const served = this.shared.served(dueAt, this.bornAt, dueServer);
        if (served === 'no') return true;
        if (served === 'wait') {
          await sleep(BEAT_POLL_MS);
          continue;
        }
        dueAt = null;
        continue;
      }
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
