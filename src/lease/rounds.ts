import { InvalidArgumentError, shown } from '../errors.js';
import type { Outcome } from '../handler.js';
import type { Job } from '../job.js';
import type { ClaimResult } from '../ops/claim.js';
import type { Held } from '../ops/op.js';
import type { ReleaseOutcome } from '../ops/release.js';
import type { CompleteOutcome } from '../ops/complete.js';
import type { Replication, Reply, ScriptCall } from '../transport.js';

/** What a claim or a beat handed out, payloads decoded, and what it saw of the queue. */
export interface Claimed<Payload> extends Omit<ClaimResult, 'jobs'> {
  /** The jobs claimed, payloads parsed, in turn order (the order n single claims would give). */
  readonly jobs: Array<Job<Payload>>;
  /**
   * Scheduler slots this step fired after its beat saw them due (`fireDue`): their jobs are
   * claimable now, so a caller that came up dry should claim again.
   */
  readonly fired: number;
}

/** One beat: claim up to `n` under `leaseMs`, after reaping and promoting at most the limits (1000 each). */
export interface BeatOptions {
  /** How many jobs to claim (0: reap and promote only). */
  readonly n: number;
  /** The lease of the jobs claimed, in ms. */
  readonly leaseMs: number;
  /** The most expired leases to take back (default 1000). */
  readonly reapLimit?: number;
  /** The most due scheduled jobs to promote (default 1000). */
  readonly promoteLimit?: number;
}

/** A held job whose handler has finished, and how. */
export interface Finished {
  /** The job and the lease token it was claimed under. */
  readonly job: Held;
  /** How its handler's run ended. */
  readonly outcome: Outcome;
}

/**
 * What became of a finished job once recorded: `completed`; retried now (`pending`) or after its
 * backoff (`scheduled`); `dead` (attempts used up, or failed for good); or `fenced`: its holder
 * had lost the lease (reaped, removed) and nothing was written. A settle sent again after its
 * reply was lost answers what the first did (docs/design.md, invariant 4), except a complete
 * whose row `keepCompletedMs` 0 deleted at once: that repeat is `fenced`. A job suspended at a
 * durable step is `scheduled` (a sleep), `awaiting` (a wait for an event), `waiting` (for an
 * invoked child), or `pending` when the step was over at once. A job whose cancel was asked while
 * it ran is `cancelled`, whatever its outcome (docs/guides/job-controls.md).
 */
export type Settled = 'completed' | 'pending' | 'scheduled' | 'dead' | 'fenced' | 'awaiting' | 'waiting' | 'cancelled';

/**
 * One consumer request: record how finished jobs ended, give back jobs never started, and claim
 * the next ones, in one round trip. Its scripts run in one order: retries and fails first (a job
 * retried now is claimable by the claim that follows), given-back jobs, then completes with the
 * claim, or, with `beat`, completes and then a beat (reap, promote, claim).
 */
export interface Round {
  /** Held jobs whose handlers finished: each recorded as its outcome says. */
  readonly finished?: readonly Finished[];
  /** Held jobs never started: back to their lanes, the claim not counted. */
  readonly giveBack?: readonly Held[];
  /** How many jobs to claim (default 0). */
  readonly claim?: number;
  /** The claim is a beat's: reap and promote first, and report the next due time and lease end. */
  readonly beat?: boolean;
  /** The lease of the jobs claimed. */
  readonly leaseMs: number;
}

/** What a Round's request answered. */
export interface RoundResult<Payload> {
  /** One per `finished` job, in its order. */
  readonly settled: readonly Settled[];
  /** One per `giveBack` job, in its order (`cancelled`: its cancel was asked, it never runs). */
  readonly givenBack: readonly ReleaseOutcome[];
  /** The jobs claimed and what the claim (or beat) saw; null when the round neither claimed nor beat. */
  readonly claimed: Claimed<Payload> | null;
  /**
   * Flow news the round wrote or its beat found (outbox entries, docs/design.md "Flows"):
   * `round()` and `sendRounds` relay them to the parents' queues before they resolve.
   */
  readonly outbox: readonly string[];
}

/** A Round ready to send: its script calls, and how to read their replies. */
export interface PreparedRound<Payload> {
  /** The queue the round is of. */
  readonly queue: string;
  /** Told the queues in which relaying the round's flow news released parents (`Leases.onRelease`). */
  readonly onRelease?: ((queues: readonly string[]) => void) | undefined;
  /** The script calls to send, in order, in one round trip. */
  readonly calls: readonly ScriptCall[];
  /** What the round trip waits for after them: a replica, when the round settles jobs under `durability: 'replicated'`. */
  readonly replication?: Replication | undefined;
  /** Reads the replies to `calls` (in the same order) into the round's result. */
  read(replies: readonly Reply[]): RoundResult<Payload>;
}

/** A claim sent some other way than runScripts (behind the parked consumer's BLPOP), and its reader. */
export interface ClaimCall<Payload> {
  /** The claim's script call. */
  readonly call: ScriptCall;
  /** Reads its reply into the jobs claimed. */
  read(reply: Reply): Claimed<Payload>;
}

/** Throws InvalidArgumentError unless `value` is an integer of at least `min`. */
export function assertCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got ${shown(value)}`);
  }
}

/** What `Leases.complete` answered. */
export interface Completed<Payload> {
  /** Per job, true when its completion was recorded. */
  readonly completed: boolean[];
  /** Per job, what complete did with it: `completed`, `cancelled` (its cancel was asked while it ran) or `fenced`. */
  readonly outcomes: CompleteOutcome[];
  /** What the same call claimed (with `claimN`), else null. */
  readonly claimed: Claimed<Payload> | null;
}
