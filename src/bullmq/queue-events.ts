/**
 * BullMQ's QueueEvents on echomq's events stream: each echomq event becomes the BullMQ event(s)
 * it stands for, with BullMQ's payloads, and the stream entry id as the listener's second
 * argument (docs/design/bullmq-layer.md, "Events").
 */
import { EventEmitter } from 'node:events';
import type { QueueEvent } from '../events/events.js';
import { keyspace } from '../keyspace.js';
import type { IoredisTransport } from '../node/ioredis-transport.js';
import { Queue as EmqQueue } from '../queue/queue.js';
import { openQueue, type QueueBaseOptions } from './connection.js';
import { bullId, type Envelope, envelopeOf, failedReasonOf } from './envelope.js';

/** BullMQ's QueueEvents options. */
export interface QueueEventsOptions extends QueueBaseOptions {
  /** Start reading at once (default true); false: call `run()`. */
  readonly autorun?: boolean;
  /** Read the events after this stream id (default `$`: from when it starts). */
  readonly lastEventId?: string;
  /** Accepted: the read parks on the stream and wakes as an event arrives. */
  readonly blockingTimeout?: number;
}

/**
 * BullMQ's QueueEvents: `completed` ({jobId, returnvalue}), `failed` ({jobId, failedReason}, once
 * the job failed for good), `progress` ({jobId, data}), `active`, `waiting`, `delayed`, `added`,
 * `removed`, `stalled`, `retries-exhausted`, `waiting-children`, `paused`, `resumed`, `cleaned`,
 * `drained` (after a job finished with none left waiting),
 * each listener called with (args, id).
 *
 * @example
 * import { QueueEvents } from 'echomq/bullmq';
 *
 * const events = new QueueEvents('mail', { connection });
 * events.on('completed', ({ jobId, returnvalue }) => console.log(jobId, returnvalue));
 * events.on('failed', ({ jobId, failedReason }) => console.error(jobId, failedReason));
 */
export class QueueEvents extends EventEmitter {
  /** The BullMQ queue name. */
  readonly name: string;
  /** `<prefix>:<name>`. */
  readonly qualifiedName: string;
  /** The options it was made with. */
  readonly opts: QueueEventsOptions;
  private readonly transport: IoredisTransport;
  private readonly emq: EmqQueue<Envelope>;
  private readonly stop = new AbortController();
  private start: Promise<string> | undefined;
  private running: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** Whether `drained` was emitted since a job last became waiting: BullMQ says it once per drain. */
  private drained = false;

  constructor(name: string, opts: QueueEventsOptions = {}) {
    super();
    this.name = name;
    this.opts = opts;
    ({ qualifiedName: this.qualifiedName, transport: this.transport, emq: this.emq } = openQueue(name, opts));
    if (opts.autorun ?? true) this.run().catch((error: unknown) => this.report(error));
  }

  /** BullMQ's name of this queue's key of `type` (`<prefix>:<name>:<type>`; a job's, with its id): a name only, echomq's keys are its own. */
  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }

  /** Resolves once it knows where it reads from: an event after this is heard. */
  async waitUntilReady(): Promise<void> {
    await (this.start ??= this.startingPoint());
  }

  /** Reads and emits events until closed (a QueueEvents made with `autorun: false`). */
  async run(): Promise<void> {
    if (this.running) throw new Error('Queue Events is already running.');
    this.running = this.consume();
    return this.running;
  }

  /** Stops reading and closes its connection. */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort();
      this.transport.interrupt();
      await this.running?.catch(() => {});
      await this.transport.close();
      this.emit('closed');
    })();
    await this.closing;
  }

  /** close(). */
  async disconnect(): Promise<void> {
    await this.close();
  }

  private async consume(): Promise<void> {
    const after = await (this.start ??= this.startingPoint());
    this.emit('ready');
    try {
      for await (const event of this.emq.events({ after, signal: this.stop.signal })) await this.translate(event);
    } catch (error) {
      if (!this.stop.signal.aborted) this.report(error);
    }
  }

  /** `lastEventId`, or the stream's last entry now (`0` for an empty stream). */
  private async startingPoint(): Promise<string> {
    const given = this.opts.lastEventId;
    if (given !== undefined && given !== '$') return given;
    const last = await this.transport.redis.xrevrange(keyspace(this.emq.name).key('events'), '+', '-', 'COUNT', 1);
    return last[0]?.[0] ?? '0';
  }

  /** Emits the BullMQ events an echomq event stands for. */
  private async translate(e: QueueEvent): Promise<void> {
    const id = e.id;
    if (e.event === 'added' || e.event === 'promoted' || e.event === 'released' || e.event === 'reprocessed' || e.event === 'retried') this.drained = false;
    switch (e.event) {
      case 'added':
      case 'scheduled': {
        const jobId = bullId(e.jobId);
        if (this.listenerCount('added') > 0) this.emit('added', { jobId, name: await this.nameOf(e.jobId) }, id);
        if (e.event === 'added') this.emit('waiting', { jobId }, id);
        else this.emit('delayed', { jobId, delay: e.dueAt }, id);
        return;
      }
      case 'promoted':
        this.emit('waiting', { jobId: bullId(e.jobId), prev: 'delayed' }, id);
        return;
      case 'released':
        this.emit('waiting', { jobId: bullId(e.jobId), prev: e.children !== undefined ? 'waiting-children' : 'active' }, id);
        return;
      case 'reprocessed':
        this.emit('waiting', { jobId: bullId(e.jobId), prev: 'failed' }, id);
        return;
      case 'waiting':
        this.emit('waiting-children', { jobId: bullId(e.jobId) }, id);
        return;
      case 'active':
        this.emit('active', { jobId: bullId(e.jobId), prev: 'waiting' }, id);
        return;
      case 'progress':
        this.emit('progress', { jobId: bullId(e.jobId), data: e.progress }, id);
        return;
      case 'completed': {
        const returnvalue = e.resultOmitted ? (await this.emq.getJob(e.jobId))?.result : e.result;
        this.emit('completed', { jobId: bullId(e.jobId), returnvalue: returnvalue ?? null, prev: 'active' }, id);
        await this.drainedAfter(id);
        return;
      }
      case 'retried':
        if (e.dueAt > e.time) this.emit('delayed', { jobId: bullId(e.jobId), delay: e.dueAt }, id);
        else this.emit('waiting', { jobId: bullId(e.jobId), prev: 'active' }, id);
        return;
      case 'dead': {
        const jobId = bullId(e.jobId);
        if (this.listenerCount('retries-exhausted') > 0) {
          const record = await this.emq.getJob(e.jobId);
          if (record && record.attempt >= record.maxAttempts) this.emit('retries-exhausted', { jobId, attemptsMade: String(record.attempt) }, id);
        }
        this.emit('failed', { jobId, failedReason: failedReasonOf(e.error, this.opts.prefix) ?? e.error, prev: 'active' }, id);
        await this.drainedAfter(id);
        return;
      }
      case 'cancelled':
        this.emit('failed', { jobId: bullId(e.jobId), failedReason: e.reason, prev: 'active' }, id);
        return;
      case 'stalled':
        this.emit('stalled', { jobId: bullId(e.jobId) }, id);
        return;
      case 'removed':
        this.emit('removed', { jobId: bullId(e.jobId), prev: 'unknown' }, id);
        return;
      case 'paused':
      case 'resumed':
        this.emit(e.event, {}, id);
        return;
      case 'cleaned':
        this.emit('cleaned', { count: String(e.count) }, id);
        return;
      default:
        return;
    }
  }

  /**
   * BullMQ's `drained` (no job left waiting), which echomq's stream does not carry: after a job
   * finished, while someone listens, one read of the counts says whether any is left pending.
   */
  private async drainedAfter(id: string): Promise<void> {
    if (this.drained || this.listenerCount('drained') === 0) return;
    if ((await this.emq.stats()).counts.pending === 0) {
      this.drained = true;
      this.emit('drained', id);
    }
  }

  private async nameOf(jobId: string): Promise<string> {
    const record = await this.emq.getJob(jobId);
    return record ? envelopeOf(record.payload).name : '';
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error instanceof Error ? error : new Error(String(error)));
  }
}
