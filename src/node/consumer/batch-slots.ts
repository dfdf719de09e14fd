import { performance } from 'node:perf_hooks';
import { DEFAULT_MAX_RESULT_BYTES } from '../../encode.js';
import { InvalidArgumentError, shown } from '../../errors.js';
import { contextOf, HandlerTimeoutError, type HandlerContext, type Outcome, outcomeOf } from '../../handler.js';
import type { Job } from '../../job.js';
import { startBatchProcess } from '../../telemetry/telemetry.js';
import { startTimer, type Timer } from '../../timers.js';
import { type BatchOutcome, batchOutcomes } from './batch-outcome.js';
import type { HeldJob } from './jobs-in-hand.js';
import type { SettleCall } from './settles.js';
import { MAX_SLOTS, type SlotHost, type SlotStrategy } from './slots.js';

/**
 * A handler for several jobs at once. Resolve with nothing to complete them all, or with one
 * BatchOutcome per job, in the order the jobs came: `'completed'`, `{ completed: result }` (the
 * job's result, as a single handler's resolved value), `{ retry: error, delayMs? }` or
 * `{ fail: error }`. A throw or rejection retries every job of the batch, as a single
 * handler's would (UnrecoverableError: dead, RetryAfterError: after its delay). An array of the
 * wrong length retries every job too, with an InvalidArgumentError (EMQARG) naming both lengths,
 * rather than guess which jobs it meant. `context.progress` writes one value to every job of the
 * batch.
 *
 * @example
 * const handler: BatchHandler<{ to: string }> = async (jobs, { signal }) => {
 *   const sent = await mailer.sendMany(jobs.map((job) => job.payload), { signal });
 *   return sent.map((r) => (r.ok ? { completed: { messageId: r.id } } : { retry: 'the mailer refused it' }));
 * };
 */
export type BatchHandler<Payload = unknown, Result = unknown> = (
  jobs: ReadonlyArray<Job<Payload>>,
  context: HandlerContext,
) => Promise<void | ReadonlyArray<BatchOutcome<Result>>> | void | ReadonlyArray<BatchOutcome<Result>>;

/**
 * BatchConsumer's slots: `concurrency` of them, one batch of up to `batchSize` jobs each, the
 * batch's jobs handed to one handler call and sharing its signal. A batch takes its slot until
 * every settle of it is recorded, and claims come in whole batches.
 *
 * @example
 * const slots = new BatchSlots(handler, { batchSize: 100, concurrency: 2 }, 0);
 */
export class BatchSlots<Payload> implements SlotStrategy<Payload> {
  readonly batchSize: number;
  readonly concurrency: number;
  /** Batches in hand until their settles are recorded. */
  private batches = 0;
  /** Batches whose handler runs now (a finished one settling does not count). */
  private runningBatches = 0;

  /**
   * `batchSize` undefined means 10, `concurrency` 1; `timeoutMs` 0 means none; `maxResultBytes`
   * the largest result stored per job (default 64 KiB).
   */
  constructor(
    private readonly handler: BatchHandler<Payload>,
    options: { readonly batchSize?: number; readonly concurrency?: number },
    private readonly timeoutMs: number,
    private readonly maxResultBytes = DEFAULT_MAX_RESULT_BYTES,
  ) {
    if (typeof handler !== 'function') throw new InvalidArgumentError(`the handler must be a function, got ${shown(handler)}`);
    this.batchSize = options.batchSize ?? 10;
    this.concurrency = options.concurrency ?? 1;
    for (const [name, value] of [['batchSize', this.batchSize], ['concurrency', this.concurrency]] as const) {
      if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SLOTS) {
        throw new InvalidArgumentError(`${name} must be an integer from 1 to ${MAX_SLOTS}, got ${shown(value)}`);
      }
    }
  }

  get claimUnit(): number {
    return this.batchSize;
  }

  capacity(): number {
    return (this.concurrency - this.batches) * this.batchSize;
  }

  startable(): number {
    return (this.concurrency - this.runningBatches) * this.batchSize;
  }

  prefetchSize(): number {
    return this.concurrency * this.batchSize;
  }

  /** Each settle call is one batch's: it frees a whole batch of slots. */
  freedBy(calls: ReadonlyArray<SettleCall<Payload>>): number {
    return calls.length * this.batchSize;
  }

  dispatch(jobs: ReadonlyArray<HeldJob<Payload>>, host: SlotHost<Payload>): void {
    for (let i = 0; i < jobs.length; i += this.batchSize) {
      const controller = new AbortController();
      const held = jobs.slice(i, i + this.batchSize).map((job) => host.start(job, controller));
      this.batches++;
      this.runningBatches++;
      host.keep(
        this.runBatch(held, controller, host).finally(() => {
          this.batches--;
          host.slotFreed();
        }),
      );
    }
  }

  private async runBatch(held: Array<HeldJob<Payload>>, controller: AbortController, host: SlotHost<Payload>): Promise<void> {
    const startedAt = performance.now();
    // the batch's `process` span, active while the handler is called (README, "Telemetry")
    const span = startBatchProcess(host.queue, held);
    const outcomes = await (span ? span.run(() => this.outcomes(held, controller, host)) : this.outcomes(held, controller, host));
    span?.end(...batchEnd(outcomes));
    const settled = host.settle(held.map((h, i) => ({ held: h, outcome: outcomes[i]! })));
    this.runningBatches--;
    host.handlerEnded(performance.now() - startedAt);
    await settled;
  }

  private async outcomes(held: Array<HeldJob<Payload>>, controller: AbortController, host: SlotHost<Payload>): Promise<Outcome[]> {
    let timer: Timer | undefined;
    try {
      const context = contextOf(controller, (value) => host.progress(held, value));
      // called now (a throw lands in the catch below), not a microtask later: see runHandler
      const run = Promise.resolve(this.handler(held.map((h) => h.job), context));
      const results = await (this.timeoutMs > 0
        ? Promise.race([
            run,
            new Promise<never>((_, reject) => {
              timer = startTimer(() => {
                controller.abort(new HandlerTimeoutError(this.timeoutMs));
                reject(new HandlerTimeoutError(this.timeoutMs));
              }, this.timeoutMs);
            }),
          ])
        : run);
      return batchOutcomes(results, held.length, this.maxResultBytes);
    } catch (error) {
      const outcome = outcomeOf(error);
      return held.map(() => outcome);
    } finally {
      timer?.cancel();
    }
  }
}

/** How a batch ended, for its span: complete, or the first failure and how many of the jobs failed. */
function batchEnd(outcomes: readonly Outcome[]): [Outcome, string?] {
  const failed = outcomes.filter((o): o is Exclude<Outcome, { kind: 'complete' | 'suspend' }> => o.kind !== 'complete' && o.kind !== 'suspend');
  if (failed.length === 0) return [{ kind: 'complete' }];
  return [failed[0]!, `${failed.length} of ${outcomes.length} jobs failed; the first: ${failed[0]!.error.split('\n')[0]}`];
}
