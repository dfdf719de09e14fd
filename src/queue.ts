import {
  DEFAULT_JOB_DEFAULTS,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  type EncodedJob,
  encodeJob,
  encodePayload,
  type JobDefaults,
  MAX_PRIORITY,
  jobIdOf,
} from './encode.js';
import { IdempotencyConflictError, InvalidArgumentError, JobFailedError, JobNotFoundError, JobStateError, shown, WaitTimeoutError } from './errors.js';
import {
  assertEventId,
  decodeEntry,
  type EventsPage,
  type EventsSettings,
  MAX_EVENT_RESULT_BYTES,
  MAX_EVENTS_MAX_LEN,
  type QueueEvent,
  type ReadEventsOptions,
} from './events.js';
import type { DeadRetention, EnqueueOptions, EnqueueResult, JobRecord, JobState, PageOptions, QueueCounts } from './job.js';
import { checkGroupsOptions, type GroupsOptions, type GroupsPage } from './groups.js';
import { assertName } from './keyspace.js';
import type { LastHour } from './last-hour.js';
import { assertPartitions, parsePartitionName } from './partitions.js';
import { checkHoldMs, checkRateLimit, type RateLimit, type RateLimits, rateLimitsOf } from './rate-limits.js';
import { checkChangePriority, changePriorityOp } from './ops/change-priority.js';
import { cleanOp } from './ops/clean.js';
import { countsOp } from './ops/counts.js';
import { deadRetentionOp } from './ops/dead-retention.js';
import { drainOp } from './ops/drain.js';
import { type EnqueueRequest, enqueueOp } from './ops/enqueue.js';
import { eventsSettingsOp } from './ops/events-settings.js';
import { getJobOp } from './ops/get-job.js';
import { getSchedulerOp } from './ops/get-scheduler.js';
import { groupLimitOp } from './ops/group-limit.js';
import { holdGroupOp } from './ops/hold-group.js';
import { listDeadOp } from './ops/list-dead.js';
import { listGroupsOp } from './ops/list-groups.js';
import { listJobsOp } from './ops/list-jobs.js';
import { listSchedulersOp } from './ops/list-schedulers.js';
import { checkMoveGroup, moveGroupOp } from './ops/move-group.js';
import { obliterateOp } from './ops/obliterate.js';
import { type AdminRequest, type ScriptOp } from './ops/op.js';
import { pauseOp } from './ops/pause.js';
import { pauseGroupOp } from './ops/pause-group.js';
import { rateLimitsOp } from './ops/rate-limits.js';
import { readEventsOp } from './ops/read-events.js';
import { type Registration, registerQueueOp } from './ops/register-queue.js';
import { removeOp } from './ops/remove.js';
import { removeSchedulerOp } from './ops/remove-scheduler.js';
import { checkReprocess, reprocessOp } from './ops/reprocess.js';
import { reprocessDeadOp } from './ops/reprocess-dead.js';
import { resumeOp } from './ops/resume.js';
import { resumeGroupOp } from './ops/resume-group.js';
import { setDeadRetentionOp } from './ops/set-dead-retention.js';
import { setEventsOp } from './ops/set-events.js';
import { setRateOp } from './ops/set-rate.js';
import { sweepGroupOp } from './ops/sweep-group.js';
import { unregisterQueueOp } from './ops/unregister-queue.js';
import { checkUpdateData, updateDataOp } from './ops/update-data.js';
import { upsertSchedulerOp } from './ops/upsert-scheduler.js';
import { type WatchStart, watchJobOp } from './ops/watch-job.js';
import { JOB_STATES as STATES } from './ops/job-row.js';
import { Scripts } from './scripts.js';
import {
  assertSchedulerId,
  checkSpec,
  decodeScheduler,
  encodeSchedulerJob,
  planUpsert,
  type SchedulerJob,
  type SchedulerRecord,
  type SchedulerSpec,
  type UpsertSchedulerResult,
} from './schedulers.js';
import { type EventBatch, eventBatches, EVENTS_POLL_MS, type EventSource } from './subscribe.js';
import { sleep, startTimer } from './timers.js';
import type { Replication, Transport } from './transport.js';
import { type DurabilityOptions, replicationOf } from './durability.js';
import { randomHex } from './random-hex.js';
import { findOpenTelemetry } from './opentelemetry.js';
import { traceSend } from './telemetry.js';
import { relayFlowNews } from './flow-relay.js';

/**
 * Options of a Queue. `durability` and `replicationTimeoutMs` (DurabilityOptions) say when its
 * enqueues count as done, and are the default of the consumers built on it.
 */
export interface QueueOptions extends DurabilityOptions {
  /** The largest payload accepted, in UTF-8 bytes of JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Defaults for jobs that do not say: max attempts (3) and backoff (exponential from 1 s). */
  readonly defaults?: Partial<JobDefaults>;
  /** How long a completed job stays readable, in ms (-1 forever, 0 not at all; default 1 hour). */
  readonly keepCompletedMs?: number;
  /**
   * The largest handler result stored, in UTF-8 bytes of JSON (default 64 KiB), checked by the
   * consumer before it writes anything: a job whose result is larger fails for good (dead) with
   * an error naming the size and the cap. Consumers built on this Queue use it unless given their own.
   */
  readonly maxResultBytes?: number;
  /** How long an idempotency key of the caller's is remembered, in ms (default 24 hours). */
  readonly idempotencyTtlMs?: number;
  /**
   * close() also closes the transport: for a Queue on a transport opened for it alone, as
   * `connectQueue` (echomq/node) opens one. Default false: a transport you pass in is yours.
   */
  readonly ownsTransport?: boolean;
  /**
   * Set by PartitionedQueue on the Queue of each of its partitions (named `mail~3`): the count of
   * partitions its first enqueue records for `mail` in the registry. A queue of one's own has no
   * use for it: open a partitioned queue with PartitionedQueue.
   */
  readonly partitions?: number;
}

/** How long a key the core makes for one enqueue call is remembered: longer than any transport retries a request. */
const OWN_REQUEST_TTL_MS = 120_000;
const CALLER_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * What makes one call to `add` or `addBulk` safe to repeat.
 *
 * @example
 * await queue.add({ to }, { idempotencyKey: `welcome-${userId}` }); // a retry after a timeout is the same enqueue
 */
export interface RequestOptions {
  /**
   * A key of yours for this call (letters, digits and `._:-`, at most 200): the same key again,
   * within the queue's `idempotencyTtlMs`, answers what the first call answered and writes
   * nothing (with other jobs: `IdempotencyConflictError`, EMQCONFLICT), so a retry after an
   * ambiguous failure is safe even for jobs without an id. Without one, the call still runs at
   * most once however its transport repeats the request (a key of its own, kept two minutes).
   */
  readonly idempotencyKey?: string;
  /**
   * A W3C `traceparent` to continue when no span is active (the HTTP API passes its request's
   * header): the enqueue's `send` span becomes its child, or, without `@opentelemetry/api`, the
   * jobs carry it as it is. Ignored when malformed (README, "Telemetry").
   */
  readonly traceparent?: string;
}

/**
 * One job of a bulk enqueue: its payload and the options `add` takes, side by side. The same shape
 * as a job in the HTTP API's bulk body, so `JSON.stringify({ jobs })` is that body.
 *
 * @example
 * await queue.addBulk([{ payload: { to: 'a' } }, { payload: { to: 'b' }, group: 'tenant-1', delayMs: 5000 }]);
 */
export interface BulkJob<Payload> extends EnqueueOptions {
  /** What the handler gets as `job.payload`: anything JSON can carry. */
  readonly payload: Payload;
  /**
   * Not taken: a job's options go beside its payload. Typed `never` so code written for the
   * earlier nested form (`{payload, options: {...}}`) fails to compile instead of
   * enqueueing without its options; at run time it is an InvalidArgumentError.
   */
  readonly options?: never;
}

/**
 * How to follow a queue's events (`Queue.events`, `Queue.eventEntries`).
 *
 * @example
 * const stop = new AbortController();
 * for await (const e of queue.events({ after: '0', signal: stop.signal })) console.log(e.event);
 */
export interface EventsOptions {
  /**
   * Start after this entry id (exclusive), `<ms>-<seq>`, or `'0'` for the start of what the stream
   * keeps; default: from now (the stream's last entry at the call).
   */
  readonly after?: string;
  /** Ends the iteration, between two entries; so does `break`. */
  readonly signal?: AbortSignal;
  /**
   * On a transport that cannot park (Upstash, the Worker): how often the stream is read when it had
   * nothing new, in ms (default 1000: 60 requests a minute while idle). Node's parks instead.
   */
  readonly pollMs?: number;
}

/**
 * How long to wait for a job (`Queue.waitFor`, `addAndWait`).
 *
 * @example
 * const result = await queue.waitFor(id, { timeoutMs: 5_000 });
 */
export interface WaitForOptions {
  /** The longest wait, in ms (default 30,000); then WaitTimeoutError (EMQTIMEOUT). */
  readonly timeoutMs?: number;
  /** Ends the wait: it rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * How often to read when nothing can be parked on, in ms (default 1000): the stream on a
   * transport that cannot park, the job's row when the queue's events are off.
   */
  readonly pollMs?: number;
}

/** `addAndWait`'s options: `add`'s, `waitFor`'s, and a hook between the two. */
export interface AddAndWaitOptions extends EnqueueOptions, RequestOptions, WaitForOptions {
  /** Called once the job is written (or found a duplicate), before the wait: the HTTP API starts the Worker's drain here. */
  readonly onAdded?: (added: EnqueueResult) => void;
}

/** What `addAndWait` resolves to: the job and what its handler returned. */
export interface JobOutcome {
  /** The job, `JOB:...`. */
  readonly id: string;
  /** Its result (its handler's resolved value, parsed from its JSON; undefined for none). */
  readonly result: unknown;
}

/** A queue's state at a glance. */
export interface QueueStats {
  /** The queue's name. */
  readonly queue: string;
  /** Whether it is paused (`pause()`): nothing is claimed until `resume()`. */
  readonly paused: boolean;
  /** Its jobs per state. */
  readonly counts: QueueCounts;
  /** Its rate limits, the queue's and its groups', and what is throttled now. */
  readonly rateLimits: RateLimits;
  /** Its jobs completed and sent to dead in each minute of the last hour, by the server's clock. */
  readonly lastHour: LastHour;
}

/** The most throttled entries a read of the rate limits lists. */
const THROTTLED_SHOWN = 1000;

const BULK_CHUNK = 1000;
/**
 * The most rows one script call of a bulk admin operation touches (clean, drain, obliterate),
 * and of reprocessDead, whose rows cost about twice a clean's (each goes back into its lane): a
 * few ms of Redis time a call either way (bench/cases/admin-chunks.ts, docs/design.md).
 */
const ADMIN_CHUNK = 500;
const REPROCESS_CHUNK = 250;

/** Throws InvalidArgumentError unless `value` is an object (options, a bulk job): null, a number or a string is not. */
function assertObject(what: string, value: unknown): asserts value is object {
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(`${what} must be an object, got ${shown(value)}`);
}

/**
 * The jobs of an addBulk, each `{payload, ...options}`, encoded: the first bad one throws, naming
 * its index, so nothing is written.
 */
export function encodeBulk<Payload>(jobs: ReadonlyArray<BulkJob<Payload>>, defaults: JobDefaults, maxPayloadBytes: number): EncodedJob[] {
  return jobs.map((job: unknown, i) => {
    try {
      assertObject('a bulk job', job);
      // the earlier nested form would otherwise enqueue with every option silently dropped
      if ('options' in job) {
        throw new InvalidArgumentError('a bulk job takes its options beside the payload, {payload, group, delayMs, ...}, not under `options`');
      }
      return encodeJob((job as BulkJob<Payload>).payload, job as BulkJob<Payload>, defaults, maxPayloadBytes);
    } catch (error) {
      if (error instanceof Error) error.message = `job ${i}: ${error.message}`;
      throw error;
    }
  });
}

/**
 * What a Queue named `name` records in the registry: its own name, or, for a partition's name
 * (`mail~3`, with `partitions` given), its partitioned queue's name and count. A bad name throws
 * InvalidNameError; `partitions` with any other name, or a partition's name without it, throws
 * InvalidArgumentError.
 */
function registrationOf(name: string, partitions: number | undefined): Registration {
  const partition = typeof name === 'string' ? parsePartitionName(name) : undefined;
  if (!partition) {
    assertName('queue', name);
    if (partitions !== undefined) throw new InvalidArgumentError(`partitions is for a partition's Queue (mail~3): open a partitioned queue with PartitionedQueue, got ${shown(partitions)} for ${name}`);
    return { queue: name, partitions: 0 };
  }
  assertPartitions(partitions);
  if (partition.index >= partitions) throw new InvalidArgumentError(`${name} is no partition of a queue of ${partitions} partitions`);
  return { queue: partition.queue, partitions };
}

/** An interval to poll at, checked: an integer from 1 to 60,000 ms (default EVENTS_POLL_MS). */
function pollOf(pollMs: number | undefined): number {
  const ms = pollMs ?? EVENTS_POLL_MS;
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > 60_000) throw new InvalidArgumentError(`pollMs must be an integer from 1 to 60000, got ${shown(ms)}`);
  return ms;
}

/** A wait's options, checked: timeoutMs an integer from 0 (default 30,000), pollMs as pollOf. */
function waitOf(options: WaitForOptions): { timeoutMs: number; pollMs: number; signal?: AbortSignal } {
  assertObject('options', options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0) throw new InvalidArgumentError(`timeoutMs must be an integer >= 0, got ${shown(timeoutMs)}`);
  return { timeoutMs, pollMs: pollOf(options.pollMs), ...(options.signal ? { signal: options.signal } : {}) };
}

/** A page's offset and limit, checked: limit 1 to 1000 (default 50), offset from 0. */
function pageOf(options: PageOptions): { offset: number; limit: number } {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 50;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
  return { offset, limit };
}

/** The most rows a bulk admin call may touch: an integer >= 1, or no limit (undefined). */
function bulkLimit(limit: number | undefined): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(limit)}`);
  return limit;
}

/** Queues whose registration a read of the registry found made already (openQueue): their first enqueue skips it. */
const knownRegistered = new WeakSet<Queue<unknown>>();

/**
 * Tells `queue` that the registry holds its registration already, as a read of the registry just
 * found (src/open-queue.ts), so its first enqueue sends no registration of its own: a round trip
 * less per name, which a Worker pays per isolate. Not part of the package's API.
 */
export function registeredAlready(queue: Queue<unknown>): void {
  knownRegistered.add(queue);
}

/**
 * A queue: produce jobs, inspect them and control them. The same class runs on Node and in a
 * Worker: it only needs a Transport. Consumers run on its lease protocol (`Leases`).
 *
 * @example
 * const queue = new Queue<{ to: string }>(transport, 'mail');
 * const { id } = await queue.add({ to: 'a@example.com' }, { group: 'tenant-1', delayMs: 5000 });
 */
export class Queue<Payload = unknown> {
  /** The queue's name: letters, digits and `._-`, at most 128. */
  readonly name: string;
  /** How long a completed job stays readable, in ms (see QueueOptions). */
  readonly keepCompletedMs: number;
  /** The largest handler result stored, in UTF-8 bytes of JSON (see QueueOptions). */
  readonly maxResultBytes: number;
  /**
   * What its enqueues wait for after Redis ran them, and the consumers built on it after their
   * settles: a replica (`durability: 'replicated'`), or nothing (undefined, the default).
   */
  readonly replication: Replication | undefined;
  private readonly scripts: Scripts;
  private readonly defaults: JobDefaults;
  private readonly maxPayloadBytes: number;
  private readonly idempotencyTtlMs: number;
  /** This Queue's own request keys: a random prefix (96 bits, once) and a count, cheaper than randomness per call. */
  private readonly requestPrefix = randomHex();
  private requestCount = 0;
  /** Whether this Queue has recorded its name in the registry (done with its first enqueue). */
  private registered = false;
  /** The registration under way, shared by the enqueues that wait for it. */
  private registering: Promise<void> | undefined;
  private readonly ownsTransport: boolean;
  private source: EventSource | undefined;
  /** What its first enqueue records in the registry: its name, or for a partition its partitioned queue's name and count. */
  private readonly registration: Registration;

  constructor(
    /** The transport this queue (and the consumers built on it) talks to Redis through. */
    readonly transport: Transport,
    name: string,
    options: QueueOptions = {},
  ) {
    assertObject('options', options);
    this.registration = registrationOf(name, options.partitions);
    if (options.defaults !== undefined) assertObject('defaults', options.defaults);
    this.name = name;
    this.scripts = new Scripts(transport, name);
    this.defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    if (!Number.isSafeInteger(this.maxPayloadBytes) || this.maxPayloadBytes < 1) {
      throw new InvalidArgumentError(`maxPayloadBytes must be a positive integer, got ${shown(this.maxPayloadBytes)}`);
    }
    this.maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    if (!Number.isSafeInteger(this.maxResultBytes) || this.maxResultBytes < 1) {
      throw new InvalidArgumentError(`maxResultBytes must be a positive integer, got ${shown(this.maxResultBytes)}`);
    }
    this.idempotencyTtlMs = options.idempotencyTtlMs ?? 86_400_000;
    if (!Number.isSafeInteger(this.idempotencyTtlMs) || this.idempotencyTtlMs < 1) {
      throw new InvalidArgumentError(`idempotencyTtlMs must be an integer >= 1, got ${shown(this.idempotencyTtlMs)}`);
    }
    this.ownsTransport = options.ownsTransport ?? false;
    this.replication = replicationOf(options);
    this.keepCompletedMs = options.keepCompletedMs ?? 3_600_000;
    if (!Number.isSafeInteger(this.keepCompletedMs) || this.keepCompletedMs < -1) {
      throw new InvalidArgumentError(`keepCompletedMs must be an integer >= -1, got ${shown(this.keepCompletedMs)}`);
    }
    // the defaults must make a valid job (a job of them alone, any payload size): checked once here,
    // so an add without options never meets a bad default
    try {
      encodeJob(null, undefined, this.defaults, Number.MAX_SAFE_INTEGER);
    } catch (error) {
      if (error instanceof Error) error.message = `defaults: ${error.message}`;
      throw error;
    }
    // once per process: spans need @opentelemetry/api, looked for without waiting (README, "Telemetry")
    void findOpenTelemetry();
  }

  /**
   * Adds one job. A bad payload or option throws a typed error and writes nothing. However the
   * request is repeated (a lost reply its transport retries), it is one job. With `dedupe`, a job
   * holding the key makes this add a `duplicate` (or, with `replace`, takes its payload and delay:
   * `replaced`), answered with that job's id.
   *
   * @example
   * await queue.add({ doc: 7 }, { delayMs: 2_000, dedupe: { key: 'reindex:7', replace: true } });
   */
  async add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    const job = encodeJob(payload, options, this.defaults, this.maxPayloadBytes);
    const request = this.requestKey(options?.idempotencyKey);
    const [result] = await traceSend(this.name, 1, options?.traceparent, async (traceparent) =>
      (await this.enqueue([enqueueOp([job], { ...request, traceparent })]))[0]!,
    );
    return result!;
  }

  /**
   * Adds many jobs in one round trip (one script call per 1000), each `{payload, ...options}`.
   * Every job is validated first: one bad job throws and nothing is written. Resolves with one
   * result per job, in order, as `add` would answer it; jobs with the same dedupe key behave as
   * adds one after the other (the first takes the key, the later ones are its duplicates or
   * replace it).
   *
   * @example
   * const results = await queue.addBulk([{ payload: 1 }, { payload: 2, id: 'two', priority: 1 }]);
   * // [{ id: 'JOB:1', state: 'pending' }, { id: 'JOB:two', state: 'pending' }]
   */
  async addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions = {}): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('addBulk takes an array of {payload, ...options}');
    assertObject('options', options);
    const request = this.requestKey(options.idempotencyKey);
    const encoded = encodeBulk(jobs, this.defaults, this.maxPayloadBytes);
    if (encoded.length === 0) return [];
    return traceSend(this.name, encoded.length, options.traceparent, async (traceparent) => {
      const ops: Array<ScriptOp<EnqueueResult[]>> = [];
      for (let i = 0; i < encoded.length; i += BULK_CHUNK) {
        // each script call of the request is a request of its own to the scripts
        const part = i === 0 ? request : { ...request, key: `${request.key}:${i / BULK_CHUNK}` };
        ops.push(enqueueOp(encoded.slice(i, i + BULK_CHUNK), { ...part, traceparent }));
      }
      return (await this.enqueue(ops)).flat();
    });
  }

  /** The request key of one enqueue call: the caller's, or one of its own. */
  private requestKey(idempotencyKey: string | undefined): EnqueueRequest {
    if (idempotencyKey === undefined) {
      return { key: `a:${this.requestPrefix}${(this.requestCount++).toString(36)}`, ttlMs: OWN_REQUEST_TTL_MS, callerKey: false };
    }
    if (typeof idempotencyKey !== 'string' || !CALLER_KEY.test(idempotencyKey)) {
      throw new InvalidArgumentError(`idempotencyKey must be 1 to 200 letters, digits, '.', '_', ':' or '-', got ${shown(idempotencyKey)}`);
    }
    return { key: `k:${idempotencyKey}`, ttlMs: this.idempotencyTtlMs, callerKey: true };
  }

  /** Runs enqueue ops, registering the queue's name first the first time. */
  private async enqueue(ops: Array<ScriptOp<EnqueueResult[]>>): Promise<EnqueueResult[][]> {
    await this.register();
    return this.scripts.runOps(ops, this.replication);
  }

  /**
   * Records the queue's name in the registry, once: a round trip of its own before the first
   * write, not beside it, because the registry is in another slot, so Redis runs a write sent
   * beside a refused registration (EMQPARTITION) anyway: refused, nothing may be written. Not
   * waited for by replicas on its own: on one Redis the write's WAIT that follows covers it (one
   * connection), and a registry entry lost in a failover is written again by the next process.
   */
  private async register(): Promise<void> {
    if (this.registered) return;
    if (knownRegistered.has(this)) {
      this.registered = true;
      return;
    }
    // concurrent first enqueues (a burst through the HTTP API) share the one registration
    this.registering ??= this.scripts.runOps([registerQueueOp(this.registration)] as const).then(
      () => {
        this.registered = true;
      },
      (error: unknown) => {
        this.registering = undefined;
        throw error;
      },
    );
    await this.registering;
  }

  /**
   * One job, or null when there is no such job (or its completed row expired). A completed job
   * carries what its handler returned (`result`), any job the last progress a run reported.
   */
  async getJob(id: string): Promise<JobRecord<Payload> | null> {
    const jobId = jobIdOf(id);
    return this.scripts.run(getJobOp<Payload>(jobId));
  }

  /** Counts per state, the paused flag, the rate limits and the last hour's minutes, in one round trip. */
  async stats(): Promise<QueueStats> {
    const [counts, rates] = await this.scripts.runOps([countsOp(), rateLimitsOp(THROTTLED_SHOWN)] as const);
    const { paused, pending, scheduled, active, dead, completed, waiting, lastHour } = counts;
    return { queue: this.name, paused, counts: { pending, scheduled, active, dead, completed, waiting }, rateLimits: rateLimitsOf(rates), lastHour };
  }

  /** The queue's rate limits and its groups', and what is throttled now (soonest first, at most 1000). */
  async rateLimits(): Promise<RateLimits> {
    return rateLimitsOf(await this.scripts.run(rateLimitsOp(THROTTLED_SHOWN)));
  }

  /**
   * One page of the queue's groups (every group that ever had a job) with their numbers: active
   * jobs, limit, rate limit, paused, hold, throttle and jobs waiting in its lane, sorted by name
   * within the page. Pass a page's `cursor` to the next call; it is null once the walk is done. A
   * walk by SSCAN (docs/design.md, "Admin in bulk"): a group may come again on a later page, and
   * one added during the walk may come or not; a page holds about `limit` groups (1 to 1000,
   * default 100; a set of up to 128 groups comes whole), and may be short while more follow.
   * `prefix` keeps the groups whose name starts with it. Throws InvalidArgumentError before any
   * Redis call for a bad limit, prefix or cursor.
   *
   * @example
   * let cursor: string | null | undefined;
   * do {
   *   const page = await queue.groups({ prefix: 'tenant-', ...(cursor ? { cursor } : {}) });
   *   for (const g of page.groups) console.log(g.group, g.active, g.waiting);
   *   cursor = page.cursor;
   * } while (cursor !== null);
   */
  async groups(options: GroupsOptions = {}): Promise<GroupsPage> {
    const { cursor, limit, prefix } = checkGroupsOptions(options, true);
    return this.scripts.run(listGroupsOp(cursor, limit, prefix));
  }

  /** Dead jobs, most recent first. */
  async listDead(options: { offset?: number; limit?: number } = {}): Promise<Array<JobRecord<Payload>>> {
    assertObject('options', options);
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
    }
    return this.scripts.run(listDeadOp<Payload>(offset, limit));
  }

  /**
   * Removes a job in any state. Throws JobNotFoundError when there is none. A flow child still
   * unfinished is dropped from its parent's children (the parent stops waiting for it); a flow
   * parent's unfinished children are removed too (docs/design.md, "Flows").
   */
  async remove(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(removeOp(jobId));
    await this.relay(outbox);
    if (!value) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
  }

  /**
   * Puts a dead job back to be claimed, with a fresh allowance of attempts. A flow child's parent
   * learns it runs again (a parent it failed waits again).
   */
  async reprocess(id: string): Promise<void> {
    const jobId = jobIdOf(id);
    const { value, outbox } = await this.scripts.run(reprocessOp(jobId));
    await this.relay(outbox);
    checkReprocess(value, jobId);
  }

  /** Moves a pending job into `group`'s lane, or out of any group with null. */
  async moveToGroup(id: string, group: string | null): Promise<void> {
    const jobId = jobIdOf(id);
    if (group !== null) assertName('group', group);
    checkMoveGroup(await this.scripts.run(moveGroupOp(jobId, group ?? '')), jobId);
  }

  /** Stops handing out work; active jobs finish. Resolves false when it was already paused. */
  async pause(): Promise<boolean> {
    return this.scripts.run(pauseOp());
  }

  /** Hands out work again. Resolves false when it was not paused. */
  async resume(): Promise<boolean> {
    return this.scripts.run(resumeOp());
  }

  /** Stops handing out `group`'s work; its active jobs finish. */
  async pauseGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(pauseGroupOp(group));
  }

  /** Hands out `group`'s work again. */
  async resumeGroup(group: string): Promise<boolean> {
    assertName('group', group);
    return this.scripts.run(resumeGroupOp(group));
  }

  /** At most `limit` of `group`'s jobs active at once; null lifts the limit. */
  async setGroupLimit(group: string, limit: number | null): Promise<void> {
    assertName('group', group);
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw new InvalidArgumentError(`a group limit must be an integer >= 0 or null, got ${shown(limit)}`);
    }
    await this.scripts.run(groupLimitOp(group, limit));
  }

  /**
   * At most `rate.limit` job starts (claims) of the whole queue in any window of `rate.periodMs`,
   * on the server's clock; null lifts it. Exact (a log of start times, docs/design.md "Rate limits
   * and holds"), live (a raised limit lets work start at once), and composed with the groups'
   * limits. Throws InvalidArgumentError (a limit under 1, a period under 1 ms...) before any write.
   *
   * @example
   * await queue.setRateLimit({ limit: 100, periodMs: 60_000 }); // 100 starts a minute
   */
  async setRateLimit(rate: RateLimit | null): Promise<void> {
    const checked = checkRateLimit(rate);
    await this.scripts.run(setRateOp(null, checked));
  }

  /**
   * At most `rate.limit` starts of `group`'s jobs in any window of `rate.periodMs`; null lifts
   * it. A group at its rate limit leaves the ring until one more start fits (other groups keep
   * flowing), a time the scripts know, so parked consumers wake for it on time and poll nothing.
   *
   * @example
   * await queue.setGroupRateLimit('stripe', { limit: 50, periodMs: 1_000 });
   */
  async setGroupRateLimit(group: string, rate: RateLimit | null): Promise<void> {
    assertName('group', group);
    const checked = checkRateLimit(rate);
    await this.scripts.run(setRateOp(group, checked));
  }

  /**
   * No job of `group` (null: the ungrouped jobs) starts for `ms` from now, on the server's clock:
   * what a handler's RateLimitedError does after a 429. A longer hold it has is kept. Resolves the
   * time (epoch ms, server clock) it is held until.
   *
   * @example
   * await queue.holdGroup('stripe', 30_000);
   */
  async holdGroup(group: string | null, ms: number): Promise<number> {
    if (group !== null) assertName('group', group);
    return this.scripts.run(holdGroupOp(group, checkHoldMs(ms)));
  }

  /** The counted sweep: recounts `group`'s active jobs and repairs its stored count. */
  async sweepGroup(group: string): Promise<{
    /** The active count Redis held before. */
    stored: number;
    /** The active jobs of the group counted now: what is stored after. */
    counted: number;
  }> {
    assertName('group', group);
    return this.scripts.run(sweepGroupOp(group));
  }

  /**
   * Makes scheduler `id`, or changes it in place: from `spec` on, it enqueues `job` once per slot
   * (docs/design.md, "Schedulers"), whichever runtime gets there first. Upserting again replaces
   * the spec and the job without a second scheduler: the same spec keeps its next slot, a new
   * one starts at its first slot from now, and no slot already fired fires again. Each fired
   * job's id is `JOB:<id>@<slot>` and it carries `scheduler: {id, slot}`. Throws
   * InvalidArgumentError naming the field (both or neither of cron and every, a bad pattern or
   * time zone, every under 100 ms, ...) and the job's own errors, before any write.
   *
   * @example
   * await queue.upsertScheduler('digest', { cron: '0 8 * * 1-5', tz: 'America/New_York' }, { payload: { kind: 'digest' } });
   * await queue.upsertScheduler('poll-feeds', { every: 30_000 }, { payload: {}, group: 'feeds' });
   */
  async upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult> {
    assertSchedulerId(id);
    const stored = checkSpec(spec);
    const encoded = encodeSchedulerJob(job, this.defaults, this.maxPayloadBytes);
    // fenced on the revision read: an upsert or a firing in between makes it work out again
    for (let tries = 0; tries < 10; tries++) {
      const read = getSchedulerOp(id);
      let seen: { now: number; row: Record<string, string> };
      if (this.registered) [seen] = await this.scripts.runOps([read] as const);
      else {
        [, seen] = await this.scripts.runOps([registerQueueOp(this.registration), read] as const);
        this.registered = true;
      }
      const plan = planUpsert(stored, seen.row, seen.now);
      const written = await this.scripts.run(upsertSchedulerOp(id, plan.expected, { ...plan, job: encoded }));
      if (written.ok) return { id, nextRunAt: written.nextSlot };
    }
    throw new IdempotencyConflictError(`scheduler ${id} kept changing while it was upserted (10 tries): try again`);
  }

  /** Scheduler `id` as it stands (spec, job, next and last slot, slots fired), or null when there is none. */
  async getScheduler(id: string): Promise<SchedulerRecord<Payload> | null> {
    assertSchedulerId(id);
    const { row } = await this.scripts.run(getSchedulerOp(id));
    return row.v === undefined ? null : decodeScheduler<Payload>(id, row);
  }

  /** Every scheduler of the queue, soonest next slot first (those that fire no more last). */
  async listSchedulers(): Promise<Array<SchedulerRecord<Payload>>> {
    const out: Array<SchedulerRecord<Payload>> = [];
    for (let offset = 0; ; offset += BULK_CHUNK) {
      const page = await this.scripts.run(listSchedulersOp(offset, BULK_CHUNK));
      for (const { id, row } of page) if (row.v !== undefined) out.push(decodeScheduler<Payload>(id, row));
      if (page.length < BULK_CHUNK) return out;
    }
  }

  /** Deletes scheduler `id`: it fires no more (jobs it fired stay). Resolves false when there was none. */
  async removeScheduler(id: string): Promise<boolean> {
    assertSchedulerId(id);
    return this.scripts.run(removeSchedulerOp(id));
  }

  /**
   * Closes the transport when this Queue owns it (`ownsTransport`, as `connectQueue` sets), so a
   * process with nothing else to do exits; a transport you passed in is left open for you to
   * close. Harmless twice. `await using` calls it.
   *
   * @example
   * await using mail = connectQueue<{ to: string }>(process.env.REDIS_URL!, 'mail'); // echomq/node
   * await mail.add({ to: 'a@example.com' });
   * // closed here, as the block ends
   */
  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
  }

  /** close(), for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // Admin in bulk. Each bulk operation runs in chunks of at most ADMIN_CHUNK rows (REPROCESS_CHUNK
  // for reprocessDead), one script call each, so a million-row clean holds Redis for a few ms at a time (docs/design.md, "Admin in
  // bulk"); every chunk carries a request key of its own, so a chunk sent again answers as it did.

  /**
   * A page of the jobs in `state`, in that state's order: pending lane by lane (ungrouped first,
   * then the groups by name), each lane in the order a claim takes it; scheduled by due time and
   * active by lease deadline, soonest first; completed and dead most recent first. A completed
   * row that expired since is left out, so that page may be short.
   *
   * @example
   * const next = await queue.getJobs('pending', { limit: 10 }); // the next ten, lane by lane
   */
  async getJobs(state: JobState, options: PageOptions = {}): Promise<Array<JobRecord<Payload>>> {
    if (!STATES.includes(state)) throw new InvalidArgumentError(`state must be one of ${STATES.join(', ')}, got ${JSON.stringify(state)}`);
    const { offset, limit } = pageOf(options);
    return this.scripts.run(listJobsOp<Payload>(state, offset, limit));
  }

  /**
   * Deletes finished jobs, completed or dead, that finished at least `olderThanMs` ago (default
   * 0: all of them), oldest first, at most `limit` (default: no limit), and resolves with their
   * ids. Waiting jobs are not cleaned by age: `drain` removes them all, `remove` one.
   *
   * @example
   * const gone = await queue.clean('dead', { olderThanMs: 7 * 86_400_000 }); // dead for a week
   */
  async clean(state: 'completed' | 'dead', options: { olderThanMs?: number; limit?: number } = {}): Promise<string[]> {
    if (state !== 'completed' && state !== 'dead') {
      throw new InvalidArgumentError(`clean takes completed or dead, got ${JSON.stringify(state)}`);
    }
    const olderThanMs = options.olderThanMs ?? 0;
    if (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0) throw new InvalidArgumentError('olderThanMs must be an integer >= 0');
    const limit = bulkLimit(options.limit);
    const ids: string[] = [];
    let cutoff = -1;
    while (ids.length < limit) {
      const chunk = await this.scripts.run(
        cleanOp(state, olderThanMs, cutoff, Math.min(ADMIN_CHUNK, limit - ids.length), this.adminRequest()),
      );
      cutoff = chunk.cutoff;
      await this.relay(chunk.outbox);
      for (const id of chunk.ids) ids.push(id);
      if (!chunk.more) break;
    }
    return ids;
  }

  /**
   * Deletes the jobs waiting to run, pending and scheduled, never active ones, at most `limit`
   * (default: no limit), and resolves with how many. Lanes, the ring and group settings stay
   * consistent; a job enqueued while it runs may or may not be drained.
   *
   * @example
   * await queue.drain();
   */
  async drain(options: { limit?: number } = {}): Promise<number> {
    const limit = bulkLimit(options.limit);
    let deleted = 0;
    let cursor = '';
    while (deleted < limit && cursor !== 'done') {
      const chunk = await this.scripts.run(drainOp(Math.min(ADMIN_CHUNK, limit - deleted), cursor, this.adminRequest()));
      deleted += chunk.deleted;
      cursor = chunk.cursor;
      await this.relay(chunk.outbox);
    }
    return deleted;
  }

  /**
   * Deletes the whole queue, every job and setting, and takes its name out of the registry of
   * queues. Refused with JobStateError (EMQSTATE), nothing deleted, while jobs are active, unless
   * `force` (their holders are then fenced off). The queue is paused from the first chunk, so
   * nothing is claimed meanwhile. With `limit`, it stops after about that many rows and resolves
   * false: call again to go on. Resolves true once the queue is gone. Stop its producers first: a
   * job enqueued meanwhile may be left behind.
   *
   * @example
   * await queue.obliterate({ force: true });
   */
  async obliterate(options: { force?: boolean; limit?: number } = {}): Promise<boolean> {
    const force = options.force ?? false;
    if (typeof force !== 'boolean') throw new InvalidArgumentError('force must be a boolean');
    const limit = bulkLimit(options.limit);
    for (let deleted = 0; deleted < limit; ) {
      const chunk = await this.scripts.run(obliterateOp(force, Math.min(ADMIN_CHUNK, limit - deleted)));
      await this.relay(chunk.outbox);
      if (chunk.outcome === 'refused') {
        throw new JobStateError(`queue ${this.name} has ${chunk.count} active job(s): obliterate with force to delete them too`);
      }
      if (chunk.outcome === 'done') {
        // a partition leaves its partitioned queue's registration to it (PartitionedQueue.obliterate)
        if (this.registration.partitions === 0) await this.scripts.run(unregisterQueueOp(this.name));
        this.registered = false;
        this.registering = undefined;
        knownRegistered.delete(this);
        return true;
      }
      deleted += Math.max(chunk.count, 1);
    }
    return false;
  }

  /**
   * Puts dead jobs back to be claimed, oldest first, each with a fresh allowance of attempts (as
   * `reprocess`), at most `limit` (default: all), and resolves with how many.
   *
   * @example
   * await queue.reprocessDead({ limit: 100 });
   */
  async reprocessDead(options: { limit?: number } = {}): Promise<number> {
    const limit = bulkLimit(options.limit);
    let reprocessed = 0;
    while (reprocessed < limit) {
      const chunk = await this.scripts.run(reprocessDeadOp(Math.min(REPROCESS_CHUNK, limit - reprocessed), this.adminRequest()));
      reprocessed += chunk.reprocessed;
      await this.relay(chunk.outbox);
      if (!chunk.more) break;
    }
    return reprocessed;
  }

  /**
   * Gives a job waiting to run (pending or scheduled) another priority (0 to 2097151, lower runs
   * first); among jobs of that priority it keeps its place by arrival. Throws JobNotFoundError
   * when there is none, JobStateError when it is active, completed or dead.
   *
   * @example
   * await queue.changePriority(id, 0); // to the front of its lane's default-priority jobs
   */
  async changePriority(id: string, priority: number): Promise<void> {
    const jobId = jobIdOf(id);
    if (!Number.isSafeInteger(priority) || priority < 0 || priority > MAX_PRIORITY) {
      throw new InvalidArgumentError(`priority must be an integer from 0 to ${MAX_PRIORITY}, got ${String(priority)}`);
    }
    checkChangePriority(await this.scripts.run(changePriorityOp(jobId, priority)), jobId);
  }

  /**
   * Replaces the payload of a job waiting to run (pending or scheduled), within the payload cap:
   * its next run gets the new one. Throws JobNotFoundError when there is none, JobStateError when
   * it is active, completed or dead; a bad payload throws before any Redis call.
   *
   * @example
   * await queue.updateData(id, { to: 'b@example.com' });
   */
  async updateData(id: string, payload: Payload): Promise<void> {
    const jobId = jobIdOf(id);
    const text = encodePayload(payload, this.maxPayloadBytes);
    checkUpdateData(await this.scripts.run(updateDataOp(jobId, text)), jobId);
  }

  /**
   * Sets how long dead jobs are kept and how many (null or absent: no limit of that kind), stored with the
   * queue so every runtime that buries a job applies it: each burial deletes at most two of the
   * oldest dead jobs past it. It deletes nothing by itself: `clean('dead', ...)` removes a
   * backlog at once.
   *
   * @example
   * await queue.setDeadRetention({ maxAgeMs: 7 * 86_400_000, maxCount: 10_000 });
   */
  async setDeadRetention(retention: Partial<DeadRetention>): Promise<DeadRetention> {
    if (typeof retention !== 'object' || retention === null) throw new InvalidArgumentError('setDeadRetention takes {maxAgeMs?, maxCount?}');
    const maxAgeMs = retention.maxAgeMs ?? null;
    const maxCount = retention.maxCount ?? null;
    for (const [name, value] of [['maxAgeMs', maxAgeMs], ['maxCount', maxCount]] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0)) {
        throw new InvalidArgumentError(`${name} must be an integer >= 0 or null, got ${String(value)}`);
      }
    }
    return this.scripts.run(setDeadRetentionOp(maxAgeMs, maxCount));
  }

  /** The queue's retention of dead jobs (see setDeadRetention). */
  async deadRetention(): Promise<DeadRetention> {
    return this.scripts.run(deadRetentionOp());
  }

  // The events stream (docs/design.md, "Events"): every transition appends to it, inside the
  // script that makes it.

  /**
   * Sets the queue's events settings, stored with the queue so every runtime applies them (a
   * setting left out stays as it is): `maxLen`, about how many entries the stream keeps (0 to
   * 10,000,000; 0 turns events off and deletes the stream; a lower cap trims it at once), and
   * `resultBytes`, the most bytes of a result a `completed` event carries (0 to 1 MiB). Resolves
   * with the settings now. Bad input throws InvalidArgumentError and writes nothing.
   *
   * @example
   * await queue.setEvents({ maxLen: 1000, resultBytes: 256 });
   */
  async setEvents(settings: Partial<EventsSettings>): Promise<EventsSettings> {
    assertObject('setEvents takes {maxLen?, resultBytes?}: settings', settings);
    const maxLen = settings.maxLen ?? null;
    const resultBytes = settings.resultBytes ?? null;
    for (const [name, value, max] of [
      ['maxLen', maxLen, MAX_EVENTS_MAX_LEN],
      ['resultBytes', resultBytes, MAX_EVENT_RESULT_BYTES],
    ] as const) {
      if (value !== null && (!Number.isSafeInteger(value) || value < 0 || value > max)) {
        throw new InvalidArgumentError(`${name} must be an integer from 0 to ${max}, got ${shown(value)}`);
      }
    }
    return this.scripts.run(setEventsOp(maxLen, resultBytes));
  }

  /** The queue's events settings (see setEvents); the defaults, 10,000 and 1024, until set. */
  async eventsSettings(): Promise<EventsSettings> {
    return this.scripts.run(eventsSettingsOp());
  }

  /**
   * A page of the queue's events, oldest first, after entry id `after` (default `'0'`: from the
   * start of what the stream keeps), at most `limit` events (1 to 1000, default 100) of whole
   * entries, and at least one entry: the events of one script call (a batch) share their entry's
   * id and are never split across pages. `next` is the last entry id read, or `after` when there
   * was none: pass it as the next `after`. An event this version does not know is left out.
   *
   * @example
   * let after = '0';
   * for (;;) {
   *   const page = await queue.readEvents({ after });
   *   for (const e of page.events) console.log(e.time, e.event, 'jobId' in e ? e.jobId : '');
   *   if (page.next === after) break;
   *   after = page.next;
   * }
   */
  async readEvents(options: ReadEventsOptions = {}): Promise<EventsPage> {
    assertObject('options', options);
    const after = options.after ?? '0';
    assertEventId(after);
    const limit = options.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new InvalidArgumentError(`limit must be an integer from 1 to 1000, got ${shown(limit)}`);
    const entries = await this.scripts.run(readEventsOp(after, limit));
    const events: QueueEvent[] = [];
    for (const entry of entries) events.push(...decodeEntry(entry.id, entry.fields).events);
    return { events, next: entries.at(-1)?.id ?? after };
  }

  /**
   * The queue's events as they happen, one at a time: an async iterator that ends on `signal` or
   * `break`, closing what it opened, and throws when Redis fails. From now by default, or after
   * entry id `after` (what the stream still keeps after it first). On Node it parks (XREAD BLOCK,
   * a connection of its own), and every iterator, waiter and SSE client of the queue on one
   * transport shares that one read; on a transport that cannot park it reads every `pollMs`.
   * The events of one script call (a batch) share their entry's id: `after: e.id` goes on after
   * the whole entry, so resume from an entry whose events you have all taken (or use
   * `eventEntries`, which hands over whole entries).
   *
   * @example
   * for await (const e of queue.events({ signal })) {
   *   if (e.event === 'completed') console.log(e.jobId, e.result);
   * }
   */
  events(options: EventsOptions = {}): AsyncIterable<QueueEvent> {
    const entries = this.eventEntries(options);
    return (async function* () {
      for await (const entry of entries) yield* entry.events;
    })();
  }

  /**
   * The queue's events as `events` gives them, one stream entry at a time: the events of one
   * script call together, with their entry id, which is where to go on from (`after`). What the
   * HTTP API's SSE route sends, one message an entry.
   *
   * @example
   * let after = '0';
   * for await (const entry of queue.eventEntries({ after, signal })) after = entry.id;
   */
  eventEntries(options: EventsOptions = {}): AsyncIterable<EventBatch> {
    assertObject('options', options);
    if (options.after !== undefined) assertEventId(options.after);
    const pollMs = pollOf(options.pollMs);
    const scripts = this.scripts;
    const source = this.eventSource;
    return (async function* () {
      const after = options.after ?? (await scripts.run(watchJobOp(''))).last;
      yield* eventBatches(source, { after, signal: options.signal, pollMs });
    })();
  }

  /**
   * Waits for a job to finish: resolves to its result; rejects with JobFailedError (EMQFAILED,
   * the job's error in `jobError`) when it ends dead, WaitTimeoutError (EMQTIMEOUT) after
   * `timeoutMs`, JobNotFoundError when there is no such job (or it is removed meanwhile). A job
   * finished already answers from its row: the row and the stream's position are read in one
   * script, so nothing that happens after it is missed. It follows the queue's events (`events`);
   * with events off (`maxLen` 0) it reads the job's row every `pollMs`. A result over the events'
   * `resultBytes` is read from the row, so with `keepCompletedMs` 0 such a result is lost:
   * JobNotFoundError.
   *
   * @example
   * const { id } = await queue.add({ to: 'a@example.com' });
   * const result = await queue.waitFor(id, { timeoutMs: 10_000 });
   */
  async waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    const jobId = jobIdOf(id);
    const wait = waitOf(options);
    const start = await this.scripts.run(watchJobOp(jobId));
    if (!start.job) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
    return this.outcome(jobId, start, wait);
  }

  /**
   * Adds a job and waits for it (`add`, then `waitFor`): resolves to its id and result, rejects
   * as `waitFor` does. The stream's position is taken before the add, so a job that finishes at
   * once is not missed; a duplicate (of an id or a dedupe key) waits for the job that has it, and
   * a replace for the job it replaced.
   *
   * @example
   * const { id, result } = await queue.addAndWait({ url }, { timeoutMs: 15_000 });
   */
  async addAndWait(payload: Payload, options: AddAndWaitOptions = {}): Promise<JobOutcome> {
    const wait = waitOf(options);
    const job = encodeJob(payload, options, this.defaults, this.maxPayloadBytes);
    const request = this.requestKey(options.idempotencyKey);
    // the stream's position read and the enqueue in one round trip, the position first: a job
    // that finishes at once is not missed
    let start: WatchStart | undefined;
    const [added] = await traceSend(this.name, 1, options.traceparent, async (traceparent) => {
      const ops = [watchJobOp(''), enqueueOp([job], { ...request, traceparent })] as const;
      await this.register();
      const [watched, results] = await this.scripts.runOps(ops, this.replication);
      start = watched;
      return results;
    });
    if (!added || !start) throw new Error('addAndWait: the enqueue answered nothing');
    options.onAdded?.(added);
    if (added.state === 'duplicate') return { id: added.id, result: await this.waitFor(added.id, options) };
    return { id: added.id, result: await this.outcome(added.id, start, wait) };
  }

  /** This queue's stream as the subscriptions read it (src/subscribe.ts). */
  private get eventSource(): EventSource {
    const scripts = this.scripts;
    return (this.source ??= {
      transport: this.transport,
      queue: this.name,
      canPark: scripts.canBlockOnEvents,
      page: async (after, limit) => scripts.run(readEventsOp(after, limit)),
      park: (after, count, blockMs, signal) => scripts.readEventsBlocking(after, count, blockMs, signal),
    });
  }

  /** The outcome of `jobId`, from `start` (its row then, if read, and the stream's position). */
  private async outcome(jobId: string, start: WatchStart, wait: { timeoutMs: number; pollMs: number; signal?: AbortSignal }): Promise<unknown> {
    if (start.job) {
      const done = this.finished(start.job);
      if (done) return done.result;
    }
    const timer = new AbortController();
    const timeout = startTimer(() => timer.abort(), wait.timeoutMs);
    const signal = wait.signal ? AbortSignal.any([wait.signal, timer.signal]) : timer.signal;
    try {
      if (!start.eventsOn) {
        while (!signal.aborted) {
          await sleep(wait.pollMs, { signal });
          if (signal.aborted) break;
          const job = await this.scripts.run(getJobOp(jobId));
          if (!job) throw new JobNotFoundError(`no job ${jobId}: removed, or its row expired`, { jobId });
          const done = this.finished(job);
          if (done) return done.result;
        }
      } else {
        for await (const batch of eventBatches(this.eventSource, { after: start.last, signal, pollMs: wait.pollMs })) {
          for (const e of batch.events) {
            if (!('jobId' in e) || e.jobId !== jobId) continue;
            if (e.event === 'completed') {
              if (!e.resultOmitted) return e.result;
              const job = await this.scripts.run(getJobOp(jobId));
              if (!job) throw new JobNotFoundError(`job ${jobId} completed, but its result was over the events' resultBytes and its row is gone (keepCompletedMs)`, { jobId });
              return job.result;
            }
            if (e.event === 'dead') throw new JobFailedError(`job ${jobId} failed: ${e.error}`, { jobId, jobError: e.error });
            if (e.event === 'removed') throw new JobNotFoundError(`job ${jobId} was removed while waited for`, { jobId });
          }
        }
      }
    } finally {
      timeout.cancel();
    }
    if (wait.signal?.aborted) throw wait.signal.reason;
    throw new WaitTimeoutError(`job ${jobId} did not finish within ${wait.timeoutMs} ms`, { jobId });
  }

  /** `{result}` when the row is completed; throws JobFailedError when it is dead; undefined otherwise. */
  private finished(job: JobRecord<unknown>): { result: unknown } | undefined {
    const jobId = job.id;
    if (job.state === 'completed') return { result: job.result };
    if (job.state === 'dead') throw new JobFailedError(`job ${jobId} failed: ${job.error ?? ''}`, { jobId, jobError: job.error ?? '' });
    return undefined;
  }

  /** The request key of one chunk of a bulk admin call: a repeat of the chunk answers its first reply. */
  private adminRequest(): AdminRequest {
    return { key: `b:${this.requestPrefix}${(this.requestCount++).toString(36)}`, ttlMs: OWN_REQUEST_TTL_MS };
  }

  /**
   * Relays flow news a script of this queue wrote (src/flow-relay.ts), never failing: what a
   * failed relay leaves in the outbox, a later beat of this queue relays.
   */
  private async relay(outbox: readonly string[]): Promise<void> {
    if (outbox.length === 0) return;
    try {
      await relayFlowNews(this.transport, this.name, outbox);
    } catch {
      // left in the outbox for a beat of this queue
    }
  }
}
