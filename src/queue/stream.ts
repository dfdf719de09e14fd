import { InvalidArgumentError, JobCancelledError, JobExpiredError, JobFailedError, JobNotFoundError, shown, WaitTimeoutError } from '../errors.js';
import { type EventsPage, type QueueEvent, type ReadEventsOptions } from '../events/events.js';
import { assertEventId, decodeEntry } from '../events/decode.js';
import type { JobRecord } from '../job.js';
import { getJobOp } from '../ops/get-job.js';
import { readEventsOp } from '../ops/read-events.js';
import { type WatchStart, watchJobOp } from '../ops/watch-job.js';
import type { Scripts } from '../ops/scripts.js';
import { type EventBatch, eventBatches, type EventSource, joinReader, type JoinedReader } from '../events/subscribe.js';
import { sleep, startTimer } from '../timers.js';
import { assertObject, pollOf, type Wait } from './checks.js';
import type { EventsOptions } from './options.js';

/**
 * A queue's events stream as its Queue reads it (docs/design.md, "Events"): pages, a live
 * iteration, and the waits for a job to finish, which follow it.
 */
export class QueueStream {
  /** The stream as the subscriptions read it (src/events/subscribe.ts): one per Queue, shared by its iterators and waits. */
  readonly source: EventSource;

  constructor(private readonly scripts: Scripts) {
    this.source = {
      transport: scripts.transport,
      queue: scripts.keys.queue,
      canPark: scripts.canBlockOnEvents,
      page: async (after, limit) => scripts.run(readEventsOp(after, limit)),
      park: (after, count, blockMs, signal) => scripts.readEventsBlocking(after, count, blockMs, signal),
    };
  }

  /** Queue.readEvents. */
  async page(options: ReadEventsOptions): Promise<EventsPage> {
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

  /** Queue.eventEntries. */
  entries(options: EventsOptions): AsyncIterable<EventBatch> {
    assertObject('options', options);
    if (options.after !== undefined) assertEventId(options.after);
    const pollMs = pollOf(options.pollMs);
    const { scripts, source } = this;
    return (async function* () {
      const after = options.after ?? (await scripts.run(watchJobOp(''))).last;
      yield* eventBatches(source, { after, signal: options.signal, pollMs });
    })();
  }

  /**
   * Joins the stream's shared reader ahead of a wait (src/events/subscribe.ts, JoinedReader), for
   * `outcome` to follow; undefined where the transport cannot park. Join before the round trip
   * that reads the wait's start.
   */
  join(): JoinedReader | undefined {
    return joinReader(this.source);
  }

  /**
   * The outcome of `jobId`, from `start` (the job then, if read, and the stream's position):
   * Queue.waitFor. `joined` (from `join`, before `start` was read) is followed, and left, whatever happens.
   */
  async outcome(jobId: string, start: WatchStart, wait: Wait, joined?: JoinedReader): Promise<unknown> {
    try {
      return await this.follow(jobId, start, wait, joined);
    } finally {
      joined?.leave();
    }
  }

  private async follow(jobId: string, start: WatchStart, wait: Wait, joined: JoinedReader | undefined): Promise<unknown> {
    if (start.job) {
      const done = finished(start.job);
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
          const done = finished(job);
          if (done) return done.result;
        }
      } else {
        for await (const batch of eventBatches(this.source, { after: start.last, signal, pollMs: wait.pollMs, joined })) {
          for (const e of batch.events) {
            if (!('jobId' in e) || e.jobId !== jobId) continue;
            if (e.event === 'completed') {
              if (!e.resultOmitted) return e.result;
              const job = await this.scripts.run(getJobOp(jobId));
              if (!job) throw new JobNotFoundError(`job ${jobId} completed, but its result was over the events' resultBytes and its row is gone (keepCompletedMs)`, { jobId });
              return job.result;
            }
            if (e.event === 'dead') throw failedError(jobId, e.error);
            if (e.event === 'cancelled') throw new JobCancelledError(jobId, e.reason);
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
}

/** `{result}` when the job is completed; throws JobFailedError when it is dead, JobCancelledError when cancelled; undefined otherwise. */
function finished(job: JobRecord<unknown>): { result: unknown } | undefined {
  if (job.state === 'completed') return { result: job.result };
  if (job.state === 'cancelled') throw new JobCancelledError(job.id, job.cancelReason ?? '');
  if (job.state === 'dead') throw failedError(job.id, job.error ?? '');
  return undefined;
}

/** What a wait for a job that died throws: JobExpiredError when it expired before it started, else JobFailedError. */
function failedError(jobId: string, error: string): JobFailedError {
  if (error.startsWith('EMQEXPIRED')) return new JobExpiredError(`job ${jobId} expired before it started: ${error}`, { jobId, jobError: error });
  return new JobFailedError(`job ${jobId} failed: ${error}`, { jobId, jobError: error });
}
