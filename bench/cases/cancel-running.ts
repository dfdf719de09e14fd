import type { Job as BullJob } from 'bullmq';
import { JobCancelledError } from '../../src/errors.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, type Measured, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { bullQueue, bullWorker, ECHO_QUEUE_OPTIONS, echoQueue } from '../lib/impls.js';
import { latch, latencies, round, sleep } from '../lib/stats.js';

/**
 * `cancel-running`: jobs running on one parked consumer, every slot full, each handler waiting on
 * its signal; each job is cancelled by a call of its own, awaited, one at a time (1-3 ms apart, so
 * the consumer is parked again). A sample is from just before the cancel's call to the handler's
 * abort listener running. Then the handlers are let go (each throws its signal's reason) and the
 * run waits for every job's end.
 *
 * echomq: `queue.cancel(id)` from a Queue on its own connection; the consumer (its own ioredis
 * connection, `prefetch: 0`: every job claimed runs) hears `emq:{q}:cancel` on its doorbell hub
 * and aborts the handler's signal with JobCancelledError; the settle ends the job `cancelled`
 * (`hooks.onCancelled`). One warm-up job is cancelled first: the hub's subscription made, the
 * scripts loaded.
 *
 * bullmq (6.7): it has no way to stop a running job from another process. `Queue.remove` refuses
 * a locked (active) job, `Job.moveToFailed` needs the lock's token, and `Worker.cancelJob(id,
 * reason)` aborts the processor's signal only inside the worker's own process (its LockManager's
 * AbortController; no Redis command, no channel). The anchor runs that, in-process, for scale: its
 * latency is a synchronous call's, the floor of any cancel, not a cancel that crosses processes.
 * The processor (three parameters, so BullMQ hands it a signal) throws the reason; the job ends
 * failed (attempts 1).
 *
 * Figures: `p50_ms` `p99_ms` `max_ms` (to 0.001 ms); `cancel_commands_per_job` and
 * `cancel_script_us_per_job`: INFO commandstats over the cancels alone (from before the first
 * cancel to the last abort seen, the handlers still held); `commands_per_job` (and the Redis CPU
 * figures): over the cancels and every run's end (the settles, and the consumer parking again),
 * / jobs. The windows hold the pauses between samples, so `redis_us_per_job` (INFO cpu) carries
 * Redis's idle upkeep over ~3 ms a job too: read `script_us_per_job` for the work.
 */

/** Slots of the consumer, and jobs a batch: each batch fills every slot. */
const slotsOf = (ctx: BenchContext): number => sized(ctx, { full: 100, quick: 100, smoke: 10 });
/** Batches of `slotsOf` jobs, each cancelled job by job. */
const batchesOf = (ctx: BenchContext): number => sized(ctx, { full: 5, quick: 1, smoke: 1 });
/** The longest a sample's abort, or a batch's start or end, may take before the case fails. */
const LIMIT_MS = 15_000;

const REASON = 'bench';

/** One side's running jobs and how to cancel them. */
interface Side {
  /** Adds `n` jobs, resolving once every one has started (its handler waiting on its signal); their ids. */
  fill(n: number): Promise<string[]>;
  /** Cancels job `id` as the side does it. */
  cancel(id: string): Promise<void>;
  /** Resolves once the jobs of the batch have all ended (echomq cancelled, BullMQ failed). */
  ended(n: number): Promise<void>;
  close(): Promise<void>;
}

/** Per job: when its abort was seen, and the release that lets its handler end. */
class Held {
  private readonly aborted = new Map<string, ReturnType<typeof latch<number>>>();
  private release = latch();

  /** The latch of `id`'s abort (made on first ask, by the handler or the sampler). */
  abortOf(id: string): ReturnType<typeof latch<number>> {
    let l = this.aborted.get(id);
    if (!l) this.aborted.set(id, (l = latch<number>()));
    return l;
  }

  /** A handler's body: waits for the signal, notes when it aborted, waits to be let go, throws its reason. */
  async hold(id: string, signal: AbortSignal): Promise<never> {
    const { resolve } = this.abortOf(id);
    const release = this.release.promise; // this batch's, taken before any letGo can replace it
    await new Promise<void>((done) => {
      const seen = (): void => {
        resolve(performance.now()); // in the listener itself: no promise hop in the sample
        done();
      };
      if (signal.aborted) seen();
      else signal.addEventListener('abort', seen, { once: true });
    });
    await release;
    throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
  }

  /** Lets every held handler end, and arms the next batch's release. */
  letGo(): void {
    this.release.resolve();
    this.release = latch();
    this.aborted.clear();
  }
}

/** Rejects after LIMIT_MS naming `what`. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`bench: ${what} did not happen within ${LIMIT_MS} ms`)), LIMIT_MS)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** A counter whose `reach(n)` resolves once it has counted n since `reset`. */
class Count {
  private n = 0;
  private waiting: { at: number; resolve: () => void } | undefined;

  add(): void {
    this.n++;
    if (this.waiting && this.n >= this.waiting.at) {
      this.waiting.resolve();
      this.waiting = undefined;
    }
  }

  reset(): void {
    this.n = 0;
  }

  reach(at: number): Promise<void> {
    if (this.n >= at) return Promise.resolve();
    return new Promise((resolve) => (this.waiting = { at, resolve }));
  }
}

async function echoSide(ctx: BenchContext, held: Held, slots: number): Promise<Side> {
  const name = benchQueueName('cancel-run');
  const producer = echoQueue(ctx, name);
  // the consumer on an IoredisTransport of its own: its doorbell hub (the cancel channel's
  // subscription) needs one, a counting wrapper would leave it to hear cancels at renewals only
  const transport = IoredisTransport.connect(ctx.url);
  const started = new Count();
  const ended = new Count();
  let wrongReason = 0;
  const consumer = new Consumer<unknown>(
    transport,
    new Queue(transport, name, ECHO_QUEUE_OPTIONS),
    (job, { signal }) => {
      signal.addEventListener('abort', () => {
        if (!(signal.reason instanceof JobCancelledError)) wrongReason++;
      });
      started.add();
      return held.hold(job.id, signal);
    },
    {
      concurrency: slots,
      prefetch: 0,
      hooks: { onCancelled: () => ended.add(), onError: (error) => console.error('echomq consumer error:', error) },
    },
  ).start();
  return {
    async fill(n) {
      started.reset();
      ended.reset();
      const ids = (await producer.queue.addBulk(Array.from({ length: n }, (_, i) => ({ payload: i })))).map((r) => r.id);
      await within(started.reach(n), `${n} echomq jobs started`);
      return ids;
    },
    async cancel(id) {
      const { state } = await producer.queue.cancel(id, { reason: REASON });
      if (state !== 'cancelling') throw new Error(`bench: cancelling running job ${id} answered ${state}`);
    },
    ended: (n) => within(ended.reach(n), `${n} echomq jobs ended cancelled`),
    async close() {
      await consumer.stop(2_000);
      await Promise.all([transport.close(), producer.transport.close()]);
      if (wrongReason > 0) throw new Error(`bench: ${wrongReason} echomq signals aborted with something other than JobCancelledError`);
    },
  };
}

async function bullSide(ctx: BenchContext, held: Held, slots: number): Promise<Side> {
  const name = benchQueueName('cancel-run');
  const queue = bullQueue(ctx, name);
  const started = new Count();
  const ended = new Count();
  // three parameters: BullMQ hands the processor a signal only then (processor.length >= 3)
  const worker = bullWorker(ctx, name, (job: BullJob, _token: string | undefined, signal?: AbortSignal) => {
    if (!signal) throw new Error('bench: BullMQ gave the processor no signal');
    started.add();
    return held.hold(job.id!, signal);
  }, { concurrency: slots });
  worker.on('failed', () => ended.add());
  worker.on('error', (error) => console.error('bullmq worker error:', error));
  await worker.waitUntilReady();
  void worker.run();
  return {
    async fill(n) {
      started.reset();
      ended.reset();
      const jobs = await queue.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'job', data: i })));
      await within(started.reach(n), `${n} BullMQ jobs started`);
      return jobs.map((j) => j.id!);
    },
    async cancel(id) {
      // in the worker's own process: BullMQ has nothing that reaches a worker elsewhere
      if (!worker.cancelJob(id, REASON)) throw new Error(`bench: BullMQ's worker.cancelJob(${id}) found no running job`);
    },
    ended: (n) => within(ended.reach(n), `${n} BullMQ jobs ended failed`),
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}

const sum = (a: Measured, b: Measured): Measured => ({
  commands: a.commands + b.commands,
  scriptUs: a.scriptUs + b.scriptUs,
  redisUs: a.redisUs + b.redisUs,
  writes: a.writes + b.writes,
  ms: a.ms + b.ms,
});

export const cancelRunning: BenchCase = {
  name: 'cancel-running',
  impls: ['echomq', 'bullmq'],
  async run(ctx: BenchContext, impl: Impl): Promise<Figures> {
    const slots = slotsOf(ctx);
    const batches = batchesOf(ctx);
    const held = new Held();
    const side = impl === 'echomq' ? await echoSide(ctx, held, slots) : await bullSide(ctx, held, slots);
    const samples: number[] = [];
    let cancelWindow: Measured | undefined;
    let total: Measured | undefined;
    try {
      // warm-up: one job cancelled, so the subscription is up and the scripts are loaded
      const [warm] = await side.fill(1);
      await side.cancel(warm!);
      await within(held.abortOf(warm!).promise, 'the warm-up abort');
      held.letGo();
      await side.ended(1);

      for (let b = 0; b < batches; b++) {
        const ids = await side.fill(slots);
        await sleep(20); // every slot's handler waiting, the consumer parked
        const meter = await startMeter(ctx);
        for (const id of ids) {
          const aborted = held.abortOf(id).promise;
          const t = performance.now();
          await side.cancel(id);
          samples.push((await within(aborted, `the abort of ${id}`)) - t);
          await sleep(1 + (samples.length % 3));
        }
        const cancels = await meter.stop();
        const endMeter = await startMeter(ctx);
        held.letGo();
        await side.ended(slots);
        await sleep(20); // the last settle's reply in, the consumer parked again
        const ends = sum(cancels, await endMeter.stop());
        cancelWindow = cancelWindow ? sum(cancelWindow, cancels) : cancels;
        total = total ? sum(total, ends) : ends;
      }
    } finally {
      held.letGo();
      await side.close();
    }
    const n = samples.length;
    return {
      n,
      slots,
      ...latencies(samples, 3),
      cancel_commands_per_job: round(cancelWindow!.commands / n),
      cancel_script_us_per_job: round(cancelWindow!.scriptUs / n),
      ...redisCostPerJob(total!, n),
    };
  },
};
