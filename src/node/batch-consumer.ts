import { InvalidArgumentError } from '../errors.js';
import { contextOf, HandlerTimeoutError, type HandlerContext, type Outcome, outcomeOf } from '../handler.js';
import type { Job } from '../job.js';
import { performance } from 'node:perf_hooks';
import { Queue } from '../queue.js';
import type { BlockingTransport } from '../transport.js';
import type { ParkedLoopOptions } from './consumer-types.js';
import type { HeldJob, SettleRequest } from './held-job.js';
import { ParkedLoop } from './parked-loop.js';

/**
 * A handler for several jobs at once. Resolve with nothing to complete them all, or with one
 * entry per job, in order: `undefined`/`null` completes it, an Error (or anything thrown) is its
 * failure (UnrecoverableError: dead). A throw or rejection retries every job of the batch.
 */
export type BatchHandler<Payload = unknown> = (
  jobs: ReadonlyArray<Job<Payload>>,
  context: HandlerContext,
) => Promise<void | ReadonlyArray<unknown>> | void | ReadonlyArray<unknown>;

/** Options of a BatchConsumer. */
export interface BatchConsumerOptions<Payload> extends ParkedLoopOptions<Payload> {
  /** The most jobs per handler call (default 10). */
  readonly batchSize?: number;
  /** Batches run at once (default 1). */
  readonly concurrency?: number;
}

/**
 * A parked consumer that hands up to `batchSize` jobs to one handler call and settles each job
 * on its own. The batch's signal aborts on stop, on timeout, or when any of its leases is lost.
 *
 * @example
 * new BatchConsumer<Row>(transport, 'rows', async (jobs) => {
 *   await db.insertMany(jobs.map((j) => j.payload));
 * }, { batchSize: 100 }).start();
 */
export class BatchConsumer<Payload = unknown> extends ParkedLoop<Payload> {
  readonly batchSize: number;
  readonly concurrency: number;
  /** Batches in hand until their settles are recorded. */
  private batches = 0;
  /** Batches whose handler runs now (a finished one settling does not count). */
  private runningBatches = 0;

  constructor(
    transport: BlockingTransport,
    queue: Queue<Payload> | string,
    private readonly handler: BatchHandler<Payload>,
    options: BatchConsumerOptions<Payload> = {},
  ) {
    super(transport, typeof queue === 'string' ? new Queue<Payload>(transport, queue) : queue, options);
    this.batchSize = options.batchSize ?? 10;
    this.concurrency = options.concurrency ?? 1;
    for (const [name, value] of [['batchSize', this.batchSize], ['concurrency', this.concurrency]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new InvalidArgumentError(`${name} must be an integer >= 1, got ${String(value)}`);
      }
    }
  }

  protected capacity(): number {
    return (this.concurrency - this.batches) * this.batchSize;
  }

  /** Each settle call is one batch's: it frees a whole batch of slots. */
  protected override freedBy(requests: ReadonlyArray<SettleRequest<Payload>>): number {
    return requests.length * this.batchSize;
  }

  protected startable(): number {
    return (this.concurrency - this.runningBatches) * this.batchSize;
  }

  protected override claimUnit(): number {
    return this.batchSize;
  }

  protected prefetchSize(): number {
    return this.concurrency * this.batchSize;
  }

  protected dispatch(jobs: Array<HeldJob<Payload>>): void {
    for (let i = 0; i < jobs.length; i += this.batchSize) {
      const controller = new AbortController();
      const held = jobs.slice(i, i + this.batchSize).map((job) => this.track(job, controller));
      this.batches++;
      this.runningBatches++;
      this.keep(
        this.runBatch(held, controller).finally(() => {
          this.batches--;
          this.slotFreed();
        }),
      );
    }
  }

  private async runBatch(held: Array<HeldJob<Payload>>, controller: AbortController): Promise<void> {
    const startedAt = performance.now();
    const outcomes = await this.outcomes(held, controller);
    const settled = this.settle(held.map((h, i) => ({ held: h, outcome: outcomes[i]! })));
    this.runningBatches--;
    this.handlerEnded(performance.now() - startedAt);
    await settled;
  }

  private async outcomes(held: Array<HeldJob<Payload>>, controller: AbortController): Promise<Outcome[]> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // called now (a throw lands in the catch below), not a microtask later: see runHandler
      const run = Promise.resolve(this.handler(held.map((h) => h.job), contextOf(controller)));
      const results = await (this.timeoutMs > 0
        ? Promise.race([
            run,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                controller.abort(new HandlerTimeoutError(this.timeoutMs));
                reject(new HandlerTimeoutError(this.timeoutMs));
              }, this.timeoutMs);
            }),
          ])
        : run);
      return held.map((_, i) => {
        const result = Array.isArray(results) ? (results as unknown[])[i] : undefined;
        return result === undefined || result === null ? { kind: 'complete' } : outcomeOf(result);
      });
    } catch (error) {
      const outcome = outcomeOf(error);
      return held.map(() => outcome);
    } finally {
      clearTimeout(timer);
    }
  }
}
