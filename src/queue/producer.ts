import { encodeJob, type JobDefaults } from '../encode.js';
import { IdempotencyConflictError, InvalidArgumentError } from '../errors.js';
import type { EnqueueOptions, EnqueueResult } from '../job.js';
import { type EnqueueRequest, enqueueOp } from '../ops/enqueue.js';
import { getSchedulerOp } from '../ops/get-scheduler.js';
import type { ScriptOp } from '../ops/op.js';
import { upsertSchedulerOp } from '../ops/upsert-scheduler.js';
import { type WatchStart, watchJobOp } from '../ops/watch-job.js';
import { assertSchedulerId, checkSpec, encodeSchedulerJob, planUpsert, type SchedulerJob, type SchedulerSpec, type UpsertSchedulerResult } from '../schedulers/schedulers.js';
import type { Scripts } from '../ops/scripts.js';
import { traceSend } from '../telemetry/telemetry.js';
import type { Replication } from '../transport.js';
import { assertObject, encodeBulk, waitOf } from './checks.js';
import type { AddAndWaitOptions, BulkJob, JobOutcome, RequestOptions } from './options.js';
import type { Registrar } from './registration.js';
import type { RequestKeys } from './request-keys.js';
import type { QueueStream } from './stream.js';

/** Jobs per enqueue script call. */
const BULK_CHUNK = 1000;

/** What a Queue's writes of jobs need, checked once (src/queue/checks.ts, settingsOf). */
export interface ProducerSettings {
  readonly defaults: JobDefaults;
  readonly maxPayloadBytes: number;
  readonly replication: Replication | undefined;
}

/**
 * A queue's writes of jobs: add, addBulk, addAndWait and upsertScheduler. Each registers the
 * queue first the first time (Registrar), and carries a request key, so a request its
 * transport repeats is the same enqueue.
 */
export class Producer<Payload> {
  constructor(
    private readonly scripts: Scripts,
    private readonly registrar: Registrar,
    private readonly keys: RequestKeys,
    private readonly stream: QueueStream,
    private readonly settings: ProducerSettings,
  ) {}

  private get name(): string {
    return this.scripts.keys.queue;
  }

  /** Queue.add. */
  async add(payload: Payload, options?: EnqueueOptions & RequestOptions): Promise<EnqueueResult> {
    const job = encodeJob(payload, options, this.settings.defaults, this.settings.maxPayloadBytes);
    const request = this.keys.enqueue(options?.idempotencyKey);
    const [result] = await traceSend(this.name, 1, options?.traceparent, async (traceparent) =>
      (await this.enqueue([enqueueOp([job], { ...request, traceparent })]))[0]!,
    );
    return result!;
  }

  /** Queue.addBulk. */
  async addBulk(jobs: ReadonlyArray<BulkJob<Payload>>, options: RequestOptions): Promise<EnqueueResult[]> {
    if (!Array.isArray(jobs)) throw new InvalidArgumentError('addBulk takes an array of {payload, ...options}');
    assertObject('options', options);
    const request = this.keys.enqueue(options.idempotencyKey);
    const encoded = encodeBulk(jobs, this.settings.defaults, this.settings.maxPayloadBytes);
    if (encoded.length === 0) return [];
    return traceSend(this.name, encoded.length, options.traceparent, async (traceparent) => {
      const ops: Array<ScriptOp<EnqueueResult[]>> = [];
      for (let i = 0; i < encoded.length; i += BULK_CHUNK) {
        // each script call of the request is a request of its own to the scripts
        const part: EnqueueRequest = i === 0 ? request : { ...request, key: `${request.key}:${i / BULK_CHUNK}` };
        ops.push(enqueueOp(encoded.slice(i, i + BULK_CHUNK), { ...part, traceparent }));
      }
      return (await this.enqueue(ops)).flat();
    });
  }

  /** Queue.addAndWait: `waitFor` is the queue's, for a duplicate's job. */
  async addAndWait(payload: Payload, options: AddAndWaitOptions, waitFor: (id: string) => Promise<unknown>): Promise<JobOutcome> {
    const wait = waitOf(options);
    // `timeoutMs` is the wait's here; the job's own is `jobTimeoutMs`
    const { timeoutMs: _wait, jobTimeoutMs, ...jobOptions } = options;
    const job = encodeJob(payload, jobTimeoutMs === undefined ? jobOptions : { ...jobOptions, timeoutMs: jobTimeoutMs }, this.settings.defaults, this.settings.maxPayloadBytes);
    const request = this.keys.enqueue(options.idempotencyKey);
    // the stream's position read and the enqueue in one round trip, the position first: a job
    // that finishes at once is not missed
    let start: WatchStart | undefined;
    // joined before the position is read: a reader already parked hands over what follows it
    const joined = this.stream.join();
    let added: EnqueueResult | undefined;
    try {
      [added] = await traceSend(this.name, 1, options.traceparent, async (traceparent) => {
        const ops = [watchJobOp(''), enqueueOp([job], { ...request, traceparent })] as const;
        await this.registrar.ensure();
        const [watched, results] = await this.scripts.runOps(ops, this.settings.replication);
        start = watched;
        return results;
      });
      if (!added || !start) throw new Error('addAndWait: the enqueue answered nothing');
      options.onAdded?.(added);
    } catch (error) {
      joined?.leave();
      throw error;
    }
    if (added.state === 'duplicate') {
      joined?.leave();
      return { id: added.id, result: await waitFor(added.id) };
    }
    return { id: added.id, result: await this.stream.outcome(added.id, start, wait, joined) };
  }

  /** Queue.upsertScheduler: fenced on the revision read, so an upsert or a firing in between makes it work out again. */
  async upsertScheduler(id: string, spec: SchedulerSpec, job: SchedulerJob<Payload>): Promise<UpsertSchedulerResult> {
    assertSchedulerId(id);
    const stored = checkSpec(spec);
    const encoded = encodeSchedulerJob(job, this.settings.defaults, this.settings.maxPayloadBytes);
    for (let tries = 0; tries < 10; tries++) {
      const seen = await this.registrar.withRead(getSchedulerOp(id));
      const plan = planUpsert(stored, seen.row, seen.now);
      const written = await this.scripts.run(upsertSchedulerOp(id, plan.expected, { ...plan, job: encoded }));
      if (written.ok) return { id, nextRunAt: written.nextSlot };
    }
    throw new IdempotencyConflictError(`scheduler ${id} kept changing while it was upserted (10 tries): try again`);
  }

  /** Runs enqueue ops, registering the queue's name first the first time. */
  private async enqueue(ops: Array<ScriptOp<EnqueueResult[]>>): Promise<EnqueueResult[][]> {
    await this.registrar.ensure();
    return this.scripts.runOps(ops, this.settings.replication);
  }
}
