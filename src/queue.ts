import {
  DEFAULT_JOB_DEFAULTS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  decodeBackoff,
  encodeBackoff,
  encodeJob,
  type JobDefaults,
  toJobId,
} from './encode.js';
import { InvalidArgumentError, JobNotFoundError, JobStateError } from './errors.js';
import type { EnqueueOptions, EnqueueResult, Job, JobRecord, JobState, QueueCounts } from './job.js';
import { assertName } from './keyspace.js';
import {
  type ClaimResult,
  type ClaimedRow,
  type FailItem,
  type Held,
  type RetryItem,
  type RetryOutcome,
  type ScriptOp,
  Scripts,
} from './scripts.js';
import type { Transport } from './transport.js';

/** Options of a Queue. */
export interface QueueOptions {
  /** The largest payload accepted, in UTF-8 bytes of JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Defaults for jobs that do not say: max attempts (3) and backoff (exponential from 1 s). */
  readonly defaults?: Partial<JobDefaults>;
  /** How long a completed job stays readable, in ms (-1 forever, 0 not at all; default 1 hour). */
  readonly keepCompletedMs?: number;
}

/** One job of a bulk enqueue. */
export interface BulkJob<Payload> {
  readonly payload: Payload;
  readonly options?: EnqueueOptions;
}

/** What claim and beat hand back, payloads decoded. */
export interface Claimed<Payload> extends Omit<ClaimResult, 'jobs'> {
  readonly jobs: Array<Job<Payload>>;
}

/** One beat: claim up to `n` under `leaseMs`, after reaping and promoting at most the limits (1000 each). */
export interface BeatOptions {
  readonly n: number;
  readonly leaseMs: number;
  readonly reapLimit?: number;
  readonly promoteLimit?: number;
}

/**
 * What one consumer request records and claims, in the order its ops run: retries and fails
 * first (a job retried now is claimable by the claim that follows), given-back jobs, then
 * completes with the claim of `claimN` jobs, or, with `beat`, completes and then a beat (reap,
 * promote, claim) for them.
 */
export interface SettlePlan {
  readonly retries?: readonly RetryItem[];
  readonly fails?: readonly FailItem[];
  readonly releases?: readonly Held[];
  readonly completes?: readonly Held[];
  readonly claimN?: number;
  readonly beat?: boolean;
  /** The lease of the jobs claimed. */
  readonly leaseMs: number;
}

/** What a SettlePlan's request answered, item by item in the plan's order. */
export interface SettleReplies {
  readonly retried: readonly RetryOutcome[];
  readonly failed: ReadonlyArray<'dead' | 'fenced'>;
  readonly released: ReadonlyArray<'released' | 'fenced'>;
  readonly completed: readonly boolean[];
  /** The claim's (or the beat's) jobs and times, when the plan claimed. */
  readonly claimed: ClaimResult | null;
}

/** A queue's state at a glance. */
export interface QueueStats {
  readonly queue: string;
  readonly paused: boolean;
  readonly counts: QueueCounts;
}

const BULK_CHUNK = 1000;
const STATES: readonly JobState[] = ['pending', 'scheduled', 'active', 'completed', 'dead'];

const optionalNumber = (value: string | undefined): number | undefined =>
  value === undefined ? undefined : Number(value);

/**
 * A queue: produce jobs, inspect and control them, and the lease calls a consumer runs on. The
 * same class runs on Node and in a Worker: it only needs a Transport.
 *
 * @example
 * const queue = new Queue<{ to: string }>(transport, 'mail');
 * const { id } = await queue.add({ to: 'a@example.com' }, { group: 'tenant-1', delayMs: 5000 });
 */
export class Queue<Payload = unknown> {
  readonly name: string;
  readonly scripts: Scripts;
  readonly keepCompletedMs: number;
  private readonly defaults: JobDefaults;
  private readonly maxPayloadBytes: number;
  /** Whether this Queue has recorded its name in the registry (done with its first enqueue). */
  private registered = false;

  constructor(transport: Transport, name: string, options: QueueOptions = {}) {
    assertName('queue', name);
    this.name = name;
    this.scripts = new Scripts(transport, name);
    this.defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
    encodeBackoff(this.defaults.backoff);
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isSafeInteger(this.maxPayloadBytes) || this.maxPayloadBytes < 1) {
      throw new InvalidArgumentError(`maxPayloadBytes must be a positive integer, got ${this.maxPayloadBytes}`);
    }
    this.keepCompletedMs = options.keepCompletedMs ?? 3_600_000;
    if (!Number.isSafeInteger(this.keepCompletedMs) || this.keepCompletedMs < -1) {
      throw new InvalidArgumentError(`keepCompletedMs must be an integer >= -1, got ${this.keepCompletedMs}`);
    }
  }

  /** Adds one job. A bad payload or option throws a typed error and writes nothing. */
  async add(payload: Payload, options?: EnqueueOptions): Promise<EnqueueResult> {
    const job = encodeJob(payload, options, this.defaults, this.maxPayloadBytes);
    const [result] = (await this.enqueue([this.scripts.enqueueOp([job])]))[0]!;
    return result!;
  }

  /**
   * Adds many jobs in one round trip (one script call per 1000). Every job is validated first:
   * one bad job throws and nothing is written.
   */
  async addBulk(jobs: ReadonlyArray<BulkJob<Payload>>): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('addBulk takes an array of {payload, options?}');
    const encoded = jobs.map((job, index) => {
      try {
        return encodeJob(job.payload, job.options, this.defaults, this.maxPayloadBytes);
      } catch (error) {
        if (error instanceof Error) error.message = `job ${index}: ${error.message}`;
        throw error;
      }
    });
    if (encoded.length === 0) return [];
    const ops: Array<ScriptOp<EnqueueResult[]>> = [];
    for (let i = 0; i < encoded.length; i += BULK_CHUNK) {
      ops.push(this.scripts.enqueueOp(encoded.slice(i, i + BULK_CHUNK)));
    }
    return (await this.enqueue(ops)).flat();
  }

  /** Runs enqueue ops, registering the queue's name in the same round trip the first time. */
  private async enqueue(ops: Array<ScriptOp<EnqueueResult[]>>): Promise<EnqueueResult[][]> {
    if (this.registered) return this.scripts.runOps(ops);
    const [, ...results] = await this.scripts.runOps([this.scripts.registerOp(), ...ops] as const);
    this.registered = true;
    return results as EnqueueResult[][];
  }

  /** One job, or null when there is no such job (or its completed row expired). */
  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    const jobId = toJobId(id);
    const row = await this.scripts.run(this.scripts.getJobOp(jobId));
    return row && this.decodeRow(jobId, row);
  }

  /** Counts per state and the paused flag. */
  async stats(): Promise<QueueStats> {
    const { paused, pending, scheduled, active, dead, completed } = await this.scripts.run(this.scripts.countsOp());
    return { queue: this.name, paused, counts: { pending, scheduled, active, dead, completed } };
  }

  /** Dead jobs, most recent first. */
  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
    }
    const entries = await this.scripts.run(this.scripts.listDeadOp(offset, limit));
    return entries.map(({ id, row }) => this.decodeRow(id, row));
  }

  /** Removes a job in any state. Throws JobNotFoundError when there is none. */
  async remove(id: string): Promise<void> {
    const jobId = toJobId(id);
    if (!(await this.scripts.run(this.scripts.removeOp(jobId)))) {
      throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    }
  }

  /** Puts a dead job back to be claimed, with a fresh allowance of attempts. */
  async reprocess(id: string): Promise<void> {
    const jobId = toJobId(id);
    const code = await this.scripts.run(this.scripts.reprocessOp(jobId));
    if (code === 0) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    if (code < 0) throw new JobStateError(`job ${jobId} is not dead`, { jobId });
  }

  /** Moves a pending job into `group`'s lane, or out of any group with null. */
  async moveToGroup(id: string, group: string | null): Promise<void> {
    const jobId = toJobId(id);
    if (group !== null) assertName('group', group);
    const code = await this.scripts.run(this.scripts.moveGroupOp(jobId, group ?? ''));
    if (code === 0) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    if (code < 0) throw new JobStateError(`job ${jobId} is not pending`, { jobId });
  }

  /** Stops handing out work; active jobs finish. Resolves false when it was already paused. */
  async pause(): Promise<boolean> {
    return this.scripts.run(this.scripts.pauseOp());
  }

  /** Hands out work again. Resolves false when it was not paused. */
  async resume(): Promise<boolean> {
    return this.scripts.run(this.scripts.resumeOp());
  }

  /** Stops handing out `group`'s work; its active jobs finish. */
  async pauseGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(this.scripts.pauseGroupOp(group));
  }

  /** Hands out `group`'s work again. */
  async resumeGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(this.scripts.resumeGroupOp(group));
  }

  /** At most `limit` of `group`'s jobs active at once; null lifts the limit. */
  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    assertName('group', group);
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new InvalidArgumentError(`a group limit must be an integer >= 0 or null, got ${String(limit)}`);
    }
    await this.scripts.run(this.scripts.groupLimitOp(group, limit));
  }

  /** The counted sweep: recounts `group`'s active jobs and repairs its stored count. */
  async sweepGroup(group: string): Promise<{ stored: number; counted: number }> {
    assertName('group', group);
    return this.scripts.run(this.scripts.sweepGroupOp(group));
  }

  /** Leases up to `n` jobs for `leaseMs`, one turn of the ring each. */
  async claim(n: number, leaseMs: number): Promise<Claimed<Payload>> {
    assertCount('n', n, 1);
    assertCount('leaseMs', leaseMs, 1);
    return this.decodeClaim(await this.scripts.run(this.scripts.claimOp(n, leaseMs)));
  }

  /**
   * One consumer step in one call: reap, promote, then claim up to `n`. Its reply carries the
   * next due time and lease deadline even when it claimed `n`.
   */
  async beat(options: BeatOptions): Promise<Claimed<Payload>> {
    return this.decodeClaim(await this.scripts.run(this.beatOp(options)));
  }

  /** The op of beat(), with its limits' defaults (1000 each), to run beside other ops. */
  beatOp(options: BeatOptions): ScriptOp<ClaimResult> {
    assertCount('n', options.n, 0);
    assertCount('leaseMs', options.leaseMs, 1);
    return this.scripts.beatOp({ reapLimit: 1000, promoteLimit: 1000, ...options });
  }

  /**
   * Completes held jobs; each resolves true, or false when fenced off (its lease was lost). With
   * `claimN`, the same call claims up to that many next jobs.
   */
  async complete(
    held: readonly Held[],
    options: { claimN?: number; leaseMs?: number } = {},
  ): Promise<{ completed: boolean[]; claimed: Claimed<Payload> | null }> {
    const { completed, claimed } = await this.scripts.run(
      this.scripts.completeOp(held, { keepMs: this.keepCompletedMs, ...options }),
    );
    return { completed, claimed: claimed && this.decodeClaim(claimed) };
  }

  /**
   * The ops of one consumer request (see SettlePlan), to send in one round trip with
   * `scripts.runOps`, and how to read their replies. The Node consumer and the edge beat both
   * record and claim through it.
   */
  settleOps(plan: SettlePlan): { ops: Array<ScriptOp<unknown>>; read: (replies: readonly unknown[]) => SettleReplies } {
    const { retries = [], fails = [], releases = [], completes = [], claimN = 0, beat = false, leaseMs } = plan;
    const ops: Array<ScriptOp<unknown>> = [];
    if (retries.length > 0) ops.push(this.scripts.retryOp(retries));
    if (fails.length > 0) ops.push(this.scripts.failOp(fails));
    if (releases.length > 0) ops.push(this.scripts.releaseOp(releases));
    const completeClaims = beat ? 0 : claimN;
    if (completes.length > 0 || completeClaims > 0) {
      ops.push(this.scripts.completeOp(completes, { keepMs: this.keepCompletedMs, claimN: completeClaims, leaseMs }));
    }
    if (beat && claimN > 0) ops.push(this.beatOp({ n: claimN, leaseMs }));
    const read = (replies: readonly unknown[]): SettleReplies => {
      let next = 0;
      const retried = retries.length > 0 ? (replies[next++] as RetryOutcome[]) : [];
      const failed = fails.length > 0 ? (replies[next++] as Array<'dead' | 'fenced'>) : [];
      const released = releases.length > 0 ? (replies[next++] as Array<'released' | 'fenced'>) : [];
      let completed: boolean[] = [];
      let claimed: ClaimResult | null = null;
      if (completes.length > 0 || completeClaims > 0) {
        ({ completed, claimed } = replies[next++] as { completed: boolean[]; claimed: ClaimResult | null });
      }
      if (beat && claimN > 0) claimed = replies[next++] as ClaimResult;
      return { retried, failed, released, completed, claimed };
    };
    return { ops, read };
  }

  /** Retries failed attempts with their backoff (or `delayMs`), dead once attempts are used up. */
  async retry(items: readonly RetryItem[]): Promise<RetryOutcome[]> {
    return this.scripts.run(this.scripts.retryOp(items));
  }

  /** Fails held jobs for good: straight to dead. */
  async fail(items: readonly FailItem[]): Promise<Array<'dead' | 'fenced'>> {
    return this.scripts.run(this.scripts.failOp(items));
  }

  /** Gives back held jobs that were never started: claimable again, the claim not counted. */
  async release(held: readonly Held[]): Promise<Array<'released' | 'fenced'>> {
    return this.scripts.run(this.scripts.releaseOp(held));
  }

  /** Renews leases; a null in place of a job's new deadline means its holder lost it. */
  async extend(held: readonly Held[], leaseMs: number): Promise<Array<number | null>> {
    assertCount('leaseMs', leaseMs, 1);
    return this.scripts.run(this.scripts.extendOp(held, leaseMs));
  }

  /** Moves up to `limit` due scheduled jobs to be claimed. */
  async promote(limit = 1000): Promise<{ promoted: number; nextDueAt: number | null }> {
    assertCount('limit', limit, 1);
    return this.scripts.run(this.scripts.promoteOp(limit));
  }

  /** Takes back up to `limit` expired leases. */
  async reap(limit = 1000): Promise<{ requeued: number; buried: number }> {
    assertCount('limit', limit, 1);
    return this.scripts.run(this.scripts.reapOp(limit));
  }

  /** A claim's rows as jobs with decoded payloads. */
  decodeClaim(result: ClaimResult): Claimed<Payload> {
    return { ...result, jobs: result.jobs.map((row) => this.decodeJob(row)) };
  }

  private decodeJob(row: ClaimedRow): Job<Payload> {
    return { ...row, payload: JSON.parse(row.payload) as Payload };
  }

  private decodeRow(id: string, row: Record<string, string>): JobRecord<Payload> {
    const state = STATES.includes(row.s as JobState) ? (row.s as JobState) : 'pending';
    return {
      id,
      state,
      payload: JSON.parse(row.d ?? 'null') as Payload,
      group: row.g,
      priority: Number(row.p ?? 0),
      attempts: Number(row.a ?? 0),
      maxAttempts: Number(row.m ?? 0),
      attemptsBase: Number(row.z ?? 0),
      backoff: decodeBackoff(row.b),
      error: row.e,
      createdAt: Number(row.c ?? 0),
      finishedAt: optionalNumber(row.f),
      leaseUntil: optionalNumber(row.l),
      runAt: optionalNumber(row.r),
    };
  }
}

function assertCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  }
}
