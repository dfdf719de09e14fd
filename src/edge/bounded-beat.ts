import { type Handler, type Outcome, runHandler } from '../handler.js';
import type { Job } from '../job.js';
import { type Claimed, Leases } from '../lease.js';
import type { Queue } from '../queue.js';

/** Options of one bounded beat. */
export interface BoundedBeatOptions {
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
}

/** What one bounded beat did. */
export interface BeatSummary {
  readonly queue: string;
  claimed: number;
  completed: number;
  retried: number;
  dead: number;
  /** Claimed but never started (no time left): given back uncounted. */
  released: number;
  /** Settled after the lease was lost: their result was not recorded. */
  fenced: number;
  /** Redis requests sent (each one HTTP request to Upstash). */
  requests: number;
  durationMs: number;
  /** Why it ended: nothing left to claim, the deadline, or the request budget. */
  stoppedBy: 'empty' | 'deadline' | 'budget';
  /** When the queue ran dry: how long until its next scheduled job is due (ms), else null. */
  nextDueInMs: number | null;
}

interface Finished<P> {
  readonly job: Job<P>;
  readonly outcome: Outcome;
}

/**
 * One bounded beat, the edge's way of consuming: it cannot hold a blocking command, so it reaps,
 * promotes and claims in one script, runs the jobs with `concurrency` handlers at once, and
 * acknowledges them in batches that also claim the next batch: an idle beat costs one Redis
 * request and a busy one about 1/batchSize per job. It starts a job only when its timeout fits
 * before the deadline, gives back (uncounted) what it claimed but cannot start, stops before
 * `maxRequests`, and claims with leases that outlive the deadline by `leaseMarginMs`, so a beat
 * cut off mid-drain loses nothing: the next beat reaps and runs what it held.
 *
 * @example
 * const summary = await boundedBeat(queue, handler, { deadline: Date.now() + 50_000 });
 */
export async function boundedBeat<P>(queue: Queue<P>, handler: Handler<P>, options: BoundedBeatOptions): Promise<BeatSummary> {
  const started = Date.now();
  const leases = new Leases(queue);
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
    dead: 0,
    released: 0,
    fenced: 0,
    requests: 0,
    durationMs: 0,
    stoppedBy: 'empty',
    nextDueInMs: null,
  };

  const waiting: Array<Job<P>> = [];
  const running = new Set<Promise<void>>();
  let finished: Array<Finished<P>> = [];
  let dry = false;

  const timeLeft = (): number => options.deadline - Date.now();
  const canStart = (): boolean => timeLeft() >= jobTimeoutMs;
  // one request is always kept for the last acknowledgement
  const canRequest = (): boolean => summary.requests < maxRequests - 1;
  const leaseMs = (): number => Math.max(1, timeLeft()) + leaseMarginMs;
  const room = (): number => (canStart() && canRequest() ? Math.max(0, batchSize - waiting.length - running.size) : 0);
  // A request of its own only to claim is worth it while the last claim was not dry; an
  // acknowledgement claims along for free, and whatever it settled (a retry due now, a freed
  // group slot) may have made work claimable again.
  const wanted = (): number => (dry ? 0 : room());

  const took = (claimed: Claimed<P> | null, asked: number): void => {
    if (!claimed) return;
    summary.claimed += claimed.jobs.length;
    waiting.push(...claimed.jobs);
    dry = false;
    if (claimed.jobs.length < asked) {
      dry = true;
      summary.nextDueInMs = claimed.nextDueAt === null ? null : Math.max(0, claimed.nextDueAt - claimed.now);
    }
  };

  /** Acknowledges what finished (and gives back `release`), claiming `claimN` more, in one request. */
  const flush = async (claimN: number, release: Array<Job<P>> = []): Promise<void> => {
    const done = finished;
    finished = [];
    if (done.length === 0 && release.length === 0 && claimN === 0) return;
    // every reapEveryMs the claim is a beat's, behind the acknowledgements: reap, promote, claim
    const beat = claimN > 0 && Date.now() - reapedAt >= reapEveryMs;
    if (beat) reapedAt = Date.now();
    summary.requests++;
    const { settled, givenBack, claimed } = await leases.round({ finished: done, giveBack: release, claim: claimN, beat, leaseMs: leaseMs() });
    settled.forEach((how, i) => count(done[i]!.job, how === 'pending' || how === 'scheduled' ? 'retried' : how, done[i]!.outcome));
    summary.released += givenBack.filter((r) => r === 'released').length;
    if (claimN > 0) took(claimed, claimN);
  };

  const count = (job: Job<P>, what: 'completed' | 'retried' | 'dead' | 'fenced', outcome: Outcome): void => {
    summary[what]++;
    options.onOutcome?.(job as Job<unknown>, what === 'fenced' ? { kind: 'fenced' } : outcome);
  };

  const start = (job: Job<P>): void => {
    const controller = new AbortController();
    const run = runHandler(handler, job, {
      controller,
      timeoutMs: Math.min(jobTimeoutMs, Math.max(1, timeLeft())),
      onTimeout: () => controller.abort(new Error(`handler timeout (${jobTimeoutMs} ms)`)),
    }).then((outcome) => {
      finished.push({ job, outcome });
      running.delete(run);
    });
    running.add(run);
  };

  // the first request reaps, promotes and claims: all an idle beat ever sends
  if (canStart()) {
    summary.requests++;
    const first = batchSize;
    took(await leases.beat({ n: first, leaseMs: leaseMs() }), first);
  }

  for (;;) {
    while (waiting.length > 0 && running.size < concurrency && canStart()) start(waiting.shift()!);
    if (running.size === 0 && (waiting.length === 0 || !canStart())) {
      const claimN = finished.length > 0 ? room() : wanted();
      if (claimN === 0) break;
      await flush(claimN);
      if (waiting.length === 0) break;
      continue;
    }
    await Promise.race(running);
    if (finished.length >= batchSize || (finished.length > 0 && running.size === 0 && waiting.length === 0)) {
      await flush(room());
    }
  }

  // what could not start goes back uncounted; whatever finished is acknowledged
  const unstarted = waiting.splice(0);
  if (finished.length > 0 || unstarted.length > 0) await flush(0, unstarted);
  summary.stoppedBy = !canRequest() ? 'budget' : dry && unstarted.length === 0 ? 'empty' : 'deadline';
  summary.durationMs = Date.now() - started;
  return summary;
}
