import { RedisError } from '../errors.js';
import { type Handler, type Outcome, runHandler, timeoutErrorOf } from '../handler.js';
import type { Job } from '../job.js';
import { type Claimed, Leases } from '../lease/leases.js';
import type { Queue } from '../queue/queue.js';
import { sleep } from '../timers.js';

/** A job whose handler finished in a beat, waiting to be acknowledged. */
export interface FinishedJob<P> {
  /** The job as it was claimed. */
  readonly job: Job<P>;
  /** How its handler's run ended: what its acknowledgement records. */
  readonly outcome: Outcome;
}

/** Options of one bounded beat. */
export interface BoundedBeatOptions<P = unknown> {
  /** When the beat must be over, in local epoch ms (Date.now() scale). */
  readonly deadline: number;
  /** Handlers running at once inside the isolate (default 10). */
  readonly concurrency?: number;
  /** Jobs per claim and per acknowledgement (default 20): requests per busy job ~ 1 / batchSize. */
  readonly batchSize?: number;
  /** The longest a handler may run (ms, default 10,000): no job is started unless it fits before the deadline. */
  readonly jobTimeoutMs?: number;
  /** The most Redis requests this beat may send (default 900, under Cloudflare's 1,000 subrequests). */
  readonly maxRequests?: number;
  /** How far a lease outlives the beat's deadline (ms, default 15,000): a beat cut off is reaped after it. */
  readonly leaseMarginMs?: number;
  /**
   * While it drains, how often a claim is a beat that also reaps and promotes (ms, default 5,000):
   * due jobs and lapsed leases do not wait for the next scheduled event.
   */
  readonly reapEveryMs?: number;
  /** Where a handler's outcome is reported, for logs. */
  readonly onOutcome?: (job: Job<unknown>, outcome: Outcome | { kind: 'fenced' }) => void;
  /** The lease protocol to send through (default: a new one on `queue`). */
  readonly leases?: Leases<P>;
  /**
   * The reply of this beat's first request (a beat claiming `asked`), when the caller already sent
   * it: one request carries the first beats of every queue of a scheduled event.
   */
  readonly first?: {
    /** What the request claimed (and reaped and promoted). */
    readonly claimed: Claimed<P>;
    /** How many jobs it asked for: fewer claimed means the queue ran dry. */
    readonly asked: number;
  };
  /** Jobs finished in an earlier beat whose acknowledgement waited: they ride with this beat's first request. */
  readonly carried?: ReadonlyArray<FinishedJob<P>>;
  /**
   * When set, completions left over as the queue runs dry are not sent on their own: they are
   * handed here, for the caller to send with its next request (`carried`), so a lone completion
   * and the claim after it cost one request, not two. Retries and fails are always sent at once.
   */
  readonly holdAcks?: (finished: ReadonlyArray<FinishedJob<P>>) => void;
  /** Whether claimable work arrived since last asked (an enqueue in this isolate): a dry beat claims again. */
  readonly moreWork?: () => boolean;
  /**
   * Told of every request that is a beat (it promotes and claims everything due when it runs), as
   * it is sent, with what its beat will answer: other drains need not wake for what it claims.
   */
  readonly onBeat?: (reply: Promise<Claimed<P> | null>) => void;
}

/** What one bounded beat did. */
export interface BeatSummary {
  /** The queue this beat served. */
  readonly queue: string;
  /** Jobs claimed, over every request of the beat. */
  claimed: number;
  /** Jobs whose completion was recorded. */
  completed: number;
  /** Jobs sent back to be tried again (now or after their backoff). */
  retried: number;
  /** Jobs given back unspent by a handler's RateLimitedError, their groups held. */
  held: number;
  /** Jobs whose handlers suspended at a durable step (a sleep, a wait for an event, an invoke). */
  suspended: number;
  /** Jobs sent to dead (attempts used up, or failed for good). */
  dead: number;
  /** Jobs whose cancel was asked while they ran: their settles ended them cancelled (docs/guides/job-controls.md). */
  cancelled: number;
  /** Claimed but never started (no time left): given back uncounted. */
  released: number;
  /** Settled after the lease was lost: their result was not recorded. */
  fenced: number;
  /** Redis requests sent (each one HTTP request to Upstash), a NOSCRIPT retry included. */
  requests: number;
  /** How long the beat took, in ms. */
  durationMs: number;
  /**
   * Why it ended: nothing left to claim (`empty`), the deadline, the request budget, or `no-time`:
   * no job could start at all, its timeout being longer than the time left (it still reaped and
   * promoted).
   */
  stoppedBy: 'empty' | 'deadline' | 'budget' | 'no-time';
  /**
   * When the queue ran dry: how long until its next scheduled job or scheduler slot is due (ms),
   * else null. A drain sleeps until then when that is before its deadline.
   */
  nextDueInMs: number | null;
  /** The same next due time as the server gave it (epoch ms on Redis's clock), else null. */
  nextDueAt: number | null;
  /** Scheduler slots this beat fired (each enqueued one job, which it claims like any other). */
  fired: number;
}

/**
 * One bounded beat, the edge's way of consuming: it cannot hold a blocking command, so it reaps,
 * promotes and claims in one script, runs the jobs with `concurrency` handlers at once, and
 * acknowledges them in batches that also claim the next batch: an idle beat costs one Redis
 * request and a busy one about 1/batchSize per job. It always reaps and promotes, but claims only
 * what can finish: a job starts only when its timeout fits before the deadline. It gives back
 * (uncounted) what it claimed but cannot start, stops before `maxRequests`, and claims with leases
 * that outlive the deadline by `leaseMarginMs`, so a beat cut off mid-drain loses nothing: the
 * next beat reaps and runs what it held.
 *
 * @example
 * const summary = await boundedBeat(queue, handler, { deadline: Date.now() + 50_000 });
 */
export async function boundedBeat<P>(queue: Queue<P>, handler: Handler<P>, options: BoundedBeatOptions<P>): Promise<BeatSummary> {
  const started = Date.now();
  const leases = options.leases ?? new Leases(queue);
  const requestsBefore = leases.requests;
  const concurrency = options.concurrency ?? 10;
  const batchSize = options.batchSize ?? 20;
  const jobTimeoutMs = options.jobTimeoutMs ?? 10_000;
  const maxRequests = options.maxRequests ?? 900;
  const leaseMarginMs = options.leaseMarginMs ?? 15_000;
  const reapEveryMs = options.reapEveryMs ?? 5_000;
  /** When the last request that reaped and promoted went out. */
  let reapedAt = started;
  const summary: BeatSummary = {
    queue: queue.name,
    claimed: 0,
    completed: 0,
    retried: 0,
    held: 0,
    suspended: 0,
    cancelled: 0,
    dead: 0,
    released: 0,
    fenced: 0,
    requests: 0,
    durationMs: 0,
    stoppedBy: 'empty',
    nextDueInMs: null,
    nextDueAt: null,
    fired: 0,
  };

  const waiting: Array<Job<P>> = [];
  const running = new Set<Promise<void>>();
  let finished: Array<FinishedJob<P>> = [...(options.carried ?? [])];
  let dry = false;

  const requests = (): number => leases.requests - requestsBefore;
  const timeLeft = (): number => options.deadline - Date.now();
  const canStart = (): boolean => timeLeft() >= jobTimeoutMs;
  /** A job's timeout here: its own (EnqueueOptions.timeoutMs) over the beat's jobTimeoutMs. */
  const timeoutOf = (job: Job<P>): number => job.timeoutMs ?? jobTimeoutMs;
  /** Claimed jobs whose own timeout cannot end before the deadline: given back unstarted at the end. */
  const tooLong: Array<Job<P>> = [];
  // one request is always kept for the last acknowledgement
  const canRequest = (): boolean => requests() < maxRequests - 1;
  const leaseMs = (): number => Math.max(1, timeLeft()) + leaseMarginMs;
  const room = (): number => (canStart() && canRequest() ? Math.max(0, batchSize - waiting.length - running.size) : 0);
  // A request of its own only to claim is worth it while the last claim was not dry (or work
  // arrived since); an acknowledgement claims along for free, and whatever it settled (a retry due
  // now, a freed group slot) may have made work claimable again.
  const wanted = (): number => {
    if (options.moreWork?.()) dry = false;
    return dry ? 0 : room();
  };
  // with holdAcks, completions left as the queue runs dry wait for the caller's next request
  const holding = (): boolean =>
    options.holdAcks !== undefined && dry && finished.every((f) => f.outcome.kind === 'complete');

  const took = (claimed: Claimed<P> | null, asked: number): void => {
    if (!claimed) return;
    summary.claimed += claimed.jobs.length;
    summary.fired += claimed.fired;
    waiting.push(...claimed.jobs);
    dry = false;
    // slots fired after the beat made jobs claimable that this reply could not carry
    if ((claimed.jobs.length < asked || asked === 0) && claimed.fired === 0) {
      dry = true;
      summary.nextDueInMs = claimed.nextDueAt === null ? null : Math.max(0, claimed.nextDueAt - claimed.now);
      summary.nextDueAt = claimed.nextDueAt;
    }
  };

  // A round whose request failed (Redis or the network away, a reply lost) goes again, the same
  // request, while the beat has time and requests: what finished is recorded instead of its lease
  // lapsing into a re-run. Three tries more at most, 25, 100 and 400 ms apart.
  const sendAgain = async (error: unknown, failures: number): Promise<boolean> => {
    if (!(error instanceof RedisError) || failures >= 3 || !canRequest()) return false;
    const pause = 25 * 4 ** failures;
    if (timeLeft() < pause + 100) return false;
    await sleep(pause);
    return true;
  };

  const count = (job: Job<P>, what: 'completed' | 'retried' | 'held' | 'suspended' | 'dead' | 'cancelled' | 'fenced', outcome: Outcome): void => {
    summary[what]++;
    options.onOutcome?.(job as Job<unknown>, what === 'fenced' ? { kind: 'fenced' } : outcome);
  };

  /**
   * Acknowledges what finished (and gives back `release`), claiming `claimN` more, in one request.
   * Every reapEveryMs, and always with `beat`, the claim is a beat's: reap, promote, claim.
   */
  const flush = async (claimN: number, release: Array<Job<P>> = [], beat = false): Promise<void> => {
    const done = finished;
    finished = [];
    const beats = beat || (claimN > 0 && Date.now() - reapedAt >= reapEveryMs);
    if (!beats && done.length === 0 && release.length === 0 && claimN === 0) return;
    if (beats) reapedAt = Date.now();
    const sent = leases.round({ finished: done, giveBack: release, claim: claimN, beat: beats, leaseMs: leaseMs() }, sendAgain);
    if (beats) options.onBeat?.(sent.then((r) => r.claimed));
    const { settled, givenBack, claimed } = await sent;
    settled.forEach((how, i) => {
      const { job, outcome } = done[i]!;
      count(job, how === 'fenced' || how === 'cancelled' ? how : outcome.kind === 'hold' ? 'held' : outcome.kind === 'suspend' ? 'suspended' : how === 'completed' || how === 'dead' ? how : 'retried', outcome);
    });
    summary.released += givenBack.filter((r) => r === 'released').length;
    if (claimN > 0 || beats) took(claimed, claimN);
  };

  // a handler's progress report: one request of its own, counted in the beat's budget like any
  const progress = async (job: Job<P>, value: unknown): Promise<boolean> => (await leases.progress([job], value))[0] ?? false;

  const start = (job: Job<P>): void => {
    const controller = new AbortController();
    const run = runHandler(handler, job, {
      controller,
      timeoutMs: Math.min(timeoutOf(job), Math.max(1, timeLeft())),
      queue: queue.name,
      maxResultBytes: queue.maxResultBytes,
      progress: (value) => progress(job, value),
      steps: leases.steps,
      onTimeout: () => controller.abort(timeoutErrorOf(timeoutOf(job), job.timeoutMs)),
    }).then((outcome) => {
      finished.push({ job, outcome });
      running.delete(run);
    });
    running.add(run);
  };

  // The first request always reaps and promotes (and carries what an earlier beat left to
  // acknowledge); it claims only when a job could still finish: all an idle beat ever sends.
  const noTime = !canStart();
  // (a first request sent by the caller may have seen scheduler slots due: they are fired here)
  if (options.first) took(await leases.fireDueOrDefer(options.first.claimed, sendAgain), options.first.asked);
  else await flush(noTime ? 0 : batchSize, [], true);

  for (;;) {
    while (waiting.length > 0 && running.size < concurrency && canStart()) {
      const job = waiting.shift()!;
      if (timeLeft() >= timeoutOf(job)) start(job);
      else tooLong.push(job);
    }
    if (running.size === 0 && (waiting.length === 0 || !canStart())) {
      const claimN = finished.length > 0 && !holding() ? room() : wanted();
      if (claimN === 0) break;
      await flush(claimN);
      if (waiting.length === 0) break;
      continue;
    }
    await Promise.race(running);
    if (finished.length >= batchSize || (finished.length > 0 && running.size === 0 && waiting.length === 0 && !holding())) {
      await flush(room());
    }
  }

  // what could not start goes back uncounted; whatever finished is acknowledged, or held for the
  // caller's next request
  const unstarted = [...waiting.splice(0), ...tooLong];
  if (unstarted.length === 0 && finished.length > 0 && holding()) options.holdAcks!(finished.splice(0));
  else if (finished.length > 0 || unstarted.length > 0) await flush(0, unstarted);
  // the flow news the rounds wrote is relayed in the background: it ends inside this beat
  await leases.relayed();
  summary.requests = requests();
  summary.stoppedBy = !canRequest() ? 'budget' : noTime ? 'no-time' : dry && unstarted.length === 0 ? 'empty' : 'deadline';
  summary.durationMs = Date.now() - started;
  return summary;
}

