import { performance } from 'node:perf_hooks';
import { DEFAULT_MAX_RESULT_BYTES } from '../../encode.js';
import { InvalidArgumentError, shown } from '../../errors.js';
import { type Handler, runHandler, timeoutErrorOf } from '../../handler.js';
import type { HeldJob } from './jobs-in-hand.js';
import type { SettleCall } from './settles.js';
import { MAX_SLOTS, type SlotHost, type SlotStrategy } from './slots.js';

/**
 * Consumer's slots: `concurrency` of them, one job each, each job its own async task. A job takes
 * its slot from its claim until its settle is recorded (capacity), and runs its handler for part
 * of that time (startable).
 *
 * @example
 * const slots = new SingleSlots(handler, 10, 0);
 * slots.dispatch(jobs.takeWaiting(slots.startable()), runs);
 */
export class SingleSlots<Payload> implements SlotStrategy<Payload> {
  /** Slots in all; `resize` changes it. */
  concurrency: number;
  readonly claimUnit = 1;
  /** Handlers running now (a finished one settling does not count). */
  private runningHandlers = 0;

  /** `concurrency` undefined means 1; `timeoutMs` 0 means none; `maxResultBytes` the largest result stored (default 64 KiB). */
  constructor(
    private readonly handler: Handler<Payload>,
    concurrency: number | undefined,
    private readonly timeoutMs: number,
    private readonly maxResultBytes = DEFAULT_MAX_RESULT_BYTES,
  ) {
    if (typeof handler !== 'function') throw new InvalidArgumentError(`the handler must be a function, got ${shown(handler)}`);
    this.concurrency = checkedConcurrency(concurrency ?? 1);
  }

  /**
   * Changes the number of slots: more start waiting jobs and claim at once (the loop is told);
   * fewer let the running jobs finish, and no job starts until those left are under it.
   */
  resize(concurrency: number): void {
    this.concurrency = checkedConcurrency(concurrency);
  }

  capacity(held: number): number {
    return this.concurrency - held;
  }

  startable(): number {
    return this.concurrency - this.runningHandlers;
  }

  prefetchSize(): number {
    return this.concurrency;
  }

  /** Each settled job frees its own slot. */
  freedBy(calls: ReadonlyArray<SettleCall<Payload>>): number {
    return calls.reduce((n, r) => n + r.entries.length, 0);
  }

  dispatch(jobs: ReadonlyArray<HeldJob<Payload>>, host: SlotHost<Payload>): void {
    for (const waiting of jobs) {
      const held = host.start(waiting);
      this.runningHandlers++;
      // the job's own timeout over the consumer's (EnqueueOptions.timeoutMs)
      const timeoutMs = held.job.timeoutMs ?? this.timeoutMs;
      host.keep(
        runHandler(this.handler, held.job, {
          controller: held.controller,
          timeoutMs,
          queue: host.queue,
          maxResultBytes: this.maxResultBytes,
          progress: (value) => host.progress([held], value),
          ...(host.steps ? { steps: host.steps } : {}),
          ...(timeoutMs > 0 ? { onTimeout: () => held.controller.abort(timeoutErrorOf(timeoutMs, held.job.timeoutMs)) } : {}),
        }).then((outcome) => {
          const settled = host.settle([{ held, outcome }]);
          this.runningHandlers--;
          host.handlerEnded(performance.now() - held.startedAt);
          return settled;
        }),
      );
    }
  }
}

/** `concurrency` when it is an integer from 1 to MAX_SLOTS; else InvalidArgumentError. */
function checkedConcurrency(concurrency: unknown): number {
  if (typeof concurrency !== 'number' || !Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > MAX_SLOTS) {
    throw new InvalidArgumentError(`concurrency must be an integer from 1 to ${MAX_SLOTS}, got ${shown(concurrency)}`);
  }
  return concurrency;
}
