/** Where a job stands. A completed row stays readable for the queue's `keepCompletedMs`. */
export type JobState = 'pending' | 'scheduled' | 'active' | 'completed' | 'dead';

/** How long to wait before retrying a failed attempt. */
export interface BackoffOptions {
  /** `fixed`: always `delayMs`; `exponential`: `delayMs * 2^(attempt - 1)`. */
  readonly type: 'fixed' | 'exponential';
  /** The base delay in ms (>= 0). */
  readonly delayMs: number;
  /** The longest delay in ms, after growth (default 1 hour). */
  readonly maxDelayMs?: number;
  /** Take off up to this fraction of the delay at random, so retries spread out (0..1, default 0.2). */
  readonly jitter?: number;
}

/** Options for one job at enqueue. */
export interface EnqueueOptions {
  /**
   * The job's id, for idempotent enqueue: the same id again writes nothing and reports a
   * duplicate. Letters, digits and `._:-`, at most 200; it becomes `JOB:<id>`. Default: a fresh
   * `JOB:<sequence>`.
   */
  readonly id?: string;
  /** The group whose lane the job joins: groups share the queue fairly and may have limits. */
  readonly group?: string;
  /** Run no sooner than this many ms from now (server time). */
  readonly delayMs?: number;
  /** Run no sooner than this instant (epoch ms or a Date). */
  readonly runAt?: number | Date;
  /** Lower runs first among claimable jobs of the same lane (0..2097151, default 0). */
  readonly priority?: number;
  /** Attempts before the job is dead (>= 1, default 3). */
  readonly maxAttempts?: number;
  /** Backoff between attempts: a fixed delay in ms, or options (default exponential from 1 s). */
  readonly backoff?: number | BackoffOptions;
}

/** The result of adding one job. */
export interface EnqueueResult {
  readonly id: string;
  /** Where the job went, or `duplicate` when a job with that id already exists (nothing written). */
  readonly state: 'pending' | 'scheduled' | 'duplicate';
}

/** A job handed to a handler: claimed under a lease, fenced by `token`. */
export interface Job<Payload = unknown> {
  readonly id: string;
  readonly payload: Payload;
  /** This run's attempt, from 1. */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly group: string | undefined;
  /** The lease token (the row's total claims): every settle call about this job carries it. */
  readonly token: number;
  /** When the job was enqueued (server time, epoch ms). */
  readonly createdAt: number;
  /** When the lease ends unless extended (server time, epoch ms). */
  readonly leaseUntil: number;
  /**
   * The W3C traceparent of the span that enqueued it, when there was one (README, "Telemetry"):
   * the parent of its `process` span, for a consumer of your own to continue the trace.
   */
  readonly traceparent?: string | undefined;
}

/** A job as read back from its row. */
export interface JobRecord<Payload = unknown> {
  readonly id: string;
  readonly state: JobState;
  readonly payload: Payload;
  readonly group: string | undefined;
  readonly priority: number;
  /** Claims so far, across every run (the fence token of the latest). */
  readonly attempts: number;
  /** Attempts allowed per run. */
  readonly maxAttempts: number;
  /** Claims made before the latest reprocess: this run's attempts are `attempts - attemptsBase`. */
  readonly attemptsBase: number;
  readonly backoff: BackoffOptions;
  /** The last error an attempt ended with. */
  readonly error: string | undefined;
  readonly createdAt: number;
  /** When it completed or died. */
  readonly finishedAt: number | undefined;
  /** Its lease deadline, while active. */
  readonly leaseUntil: number | undefined;
  /** Its due time, while scheduled. */
  readonly runAt: number | undefined;
}

/** How many jobs are in each state. */
export interface QueueCounts {
  readonly pending: number;
  readonly scheduled: number;
  readonly active: number;
  readonly dead: number;
  /** Jobs completed since the queue began (a counter: completed rows expire). */
  readonly completed: number;
}

/**
 * How long a queue keeps its dead jobs and how many: a setting stored with the queue, applied by
 * whichever runtime buries a job (each burial deletes at most two of the oldest dead jobs past
 * it). null: no limit of that kind. Both null (the default): dead jobs stay until removed,
 * cleaned or reprocessed.
 */
export interface DeadRetention {
  /** The most ms a dead job is kept after it died. */
  readonly maxAgeMs: number | null;
  /** The most dead jobs kept: past it, the oldest go first. */
  readonly maxCount: number | null;
}

/** Which jobs a page lists: `limit` (1 to 1000, default 50) from `offset` (default 0). */
export interface PageOptions {
  readonly offset?: number;
  readonly limit?: number;
}
