import type { Job as BullJob } from 'bullmq';
import { Consumer } from '../../src/node/consumer/index.js';
import type { Job } from '../../src/job.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized, type Sizes } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { clockOffset } from '../lib/server-clock.js';
import { epochMs, latencies, round, sleep, until } from '../lib/stats.js';

/** A scheduler-lateness run: `slots` slots of an `every: everyMs` scheduler, the first `leadMs` after it is made. */
export interface SchedulerLatenessSpec {
  /** How many slots are measured. */
  readonly slots: number;
  /** The scheduler's interval, ms. */
  readonly everyMs: number;
  /** From the upsert to the first slot, ms: every measured slot is one the consumer waits for. */
  readonly leadMs: number;
}

/** What the issue asks for (60 slots of `every: 1000`), and the quick run's 10. */
export const SCHEDULER_LATENESS_FULL: SchedulerLatenessSpec = { slots: 60, everyMs: 1_000, leadMs: 1_000 };
export const SCHEDULER_LATENESS_QUICK: SchedulerLatenessSpec = { slots: 10, everyMs: 1_000, leadMs: 1_000 };
/** --smoke: 2 slots. */
export const SCHEDULER_LATENESS_SMOKE: SchedulerLatenessSpec = { slots: 2, everyMs: 1_000, leadMs: 1_000 };

/** One handler run: the slot its job was fired for (epoch ms) and when the handler started (`epochMs()`, not yet corrected to Redis TIME). */
interface Run {
  readonly slot: number;
  readonly at: number;
}

/**
 * `scheduler-lateness` (issue 16): an `every` scheduler on a queue with one parked consumer
 * (concurrency 1, nothing else to do); a slot's lateness is its handler's start minus the slot.
 * The scheduler starts `leadMs` after the upsert (`startAt` / BullMQ's `startDate`), so every
 * measured slot, the first too, is one the consumer was parked for; one warm-up slot of another
 * scheduler runs first (connections up, scripts loaded), as wake-latency's warm-up job does.
 *
 * - echomq: `queue.upsertScheduler(id, {every, startAt}, {payload})` and a `Consumer` with the
 *   default beat (5 s). The slot is `job.scheduler.slot`: server time (Redis TIME), the grid
 *   `startAt + k * every`. Its consumer's timer runs a beat at the slot, the beat fires it, and
 *   the fire rings the doorbell the consumer is parked on.
 * - BullMQ: `queue.upsertJobScheduler(id, {every, startDate}, {name, data})` and a Worker. Its
 *   slot is the `nextMillis` of its job scheduler (node_modules/bullmq, addJobScheduler-11.lua and
 *   updateJobScheduler-12.lua, getJobSchedulerEveryNextMillis: `startDate`, then the previous
 *   slot plus `every`), which is the number its job id ends with (`repeat:<id>:<nextMillis>`).
 *   The job is added with `opts.delay = nextMillis - timestamp`, so `job.timestamp +
 *   job.opts.delay` is the same instant while the delay is not clamped to 0 (checked by hand:
 *   equal on every slot); `job.delay` reads 0 once the job is promoted, and `job.opts.prevMillis`
 *   is unset for an `every` scheduler, so neither is the slot. Its clock is this process's
 *   `Date.now()` (the worker passes it as the scripts' timestamp).
 *
 * Clocks: a handler's start is `epochMs()` (sub-ms, this process's wall clock) plus the offset to
 * Redis TIME, measured before and after the slots by the TIME call with the shortest round trip
 * of 20 (error at most half that round trip, reported as `clock_error_ms`). On one machine Redis
 * TIME and `Date.now()` read the same wall clock, so the offset is ~0 and corrects both sides
 * alike (BullMQ's slots are `Date.now()` times).
 *
 * Figures: p50, p99 (nearest rank: with 60 slots the p99 is the largest) and max of each slot's
 * first run, and `over_5_ms`, how many slots were later than the goal (the p99 alone cannot say
 * whether one slot or several were); `fired` (slots of the grid run at least once), `missed` (not
 * run within 5 s of the last slot), `twice` (runs beyond the first of a slot). A run for a slot
 * off the grid would count in `off_grid`. Both schedulers are removed after the last slot.
 */
export function schedulerLatenessCase(specs: Sizes<SchedulerLatenessSpec>): BenchCase {
  return {
    name: 'scheduler-lateness',
    impls: ['echomq', 'bullmq'],
    run: (ctx, impl) => measureSchedulerLateness(ctx, impl, sized(ctx, specs)),
  };
}

/** The registered case: 60 slots, 10 with --quick, 2 with --smoke. */
export const schedulerLateness: BenchCase = schedulerLatenessCase({ full: SCHEDULER_LATENESS_FULL, quick: SCHEDULER_LATENESS_QUICK, smoke: SCHEDULER_LATENESS_SMOKE });

/** How long after the last slot a slot not yet run counts as missed. */
const GRACE_MS = 5_000;

/** Runs one implementation: see schedulerLatenessCase. */
export async function measureSchedulerLateness(ctx: BenchContext, impl: Impl, spec: SchedulerLatenessSpec): Promise<Figures> {
  const name = benchQueueName('sched');
  /** Runs of the measured scheduler, clocks not yet corrected (local epochMs). */
  const runs: Run[] = [];
  let warmed = false;
  const onRun = (scheduler: string, slot: number): void => {
    const at = epochMs();
    if (scheduler === 'warm') warmed = true;
    else runs.push({ slot, at });
  };
  let upsert: (id: string, every: number, startAt: number | undefined) => Promise<unknown>;
  let remove: (id: string) => Promise<unknown>;
  let stop: () => Promise<void>;
  if (impl === 'echomq') {
    const producer = echoQueue(ctx, name);
    const worker = echoQueue<{ s: string }>(ctx, name);
    const consumer = new Consumer<{ s: string }>(
      worker.transport,
      worker.queue,
      async (job: Job<{ s: string }>) => onRun(job.payload.s, job.scheduler!.slot),
      { concurrency: 1 },
    ).start();
    upsert = (id, every, startAt) => producer.queue.upsertScheduler(id, { every, ...(startAt === undefined ? {} : { startAt }) }, { payload: { s: id } });
    remove = (id) => producer.queue.removeScheduler(id);
    stop = async () => {
      await consumer.stop();
      await Promise.all([worker.transport.close(), producer.transport.close()]);
    };
  } else {
    const queue = bullQueue(ctx, name);
    const worker = bullWorker(ctx, name, async (job: BullJob) => onRun((job.data as { s: string }).s, bullSlot(job)));
    await worker.waitUntilReady();
    void worker.run();
    upsert = (id, every, startAt) =>
      queue.upsertJobScheduler(id, { every, ...(startAt === undefined ? {} : { startDate: startAt }) }, { name: 'tick', data: { s: id } });
    remove = (id) => queue.removeJobScheduler(id);
    stop = async () => {
      await worker.close();
      await queue.close();
    };
  }

  // warm: one slot of another scheduler (its first, at once), then it goes
  await sleep(300); // the consumer is up and parked
  await upsert('warm', 60_000, undefined);
  await until(() => warmed, 10_000, 'the warm-up slot');
  await remove('warm');
  await sleep(300);

  const before = await clockOffset(ctx.admin);
  const start = Date.now() + spec.leadMs;
  await upsert('tick', spec.everyMs, start);
  const last = start + (spec.slots - 1) * spec.everyMs;
  const ranAll = (): boolean => new Set(runs.map((r) => r.slot).filter((s) => s <= last)).size >= spec.slots;
  await until(() => ranAll() || Date.now() > last + GRACE_MS, last + GRACE_MS - Date.now() + 10_000, 'the slots', 20);
  await remove('tick');
  const after = await clockOffset(ctx.admin);
  await stop();

  const offset = (before.offset + after.offset) / 2;
  const grid = new Map<number, number[]>();
  for (let k = 0; k < spec.slots; k++) grid.set(start + k * spec.everyMs, []);
  let offGrid = 0;
  for (const run of runs) {
    const lateness = run.at + offset - run.slot;
    if (grid.has(run.slot)) grid.get(run.slot)!.push(lateness);
    else if (run.slot <= last) offGrid++;
  }
  const firsts = [...grid.values()].filter((l) => l.length > 0).map((l) => l[0]!);
  const twice = [...grid.values()].reduce((n, l) => n + Math.max(0, l.length - 1), 0);
  return {
    slots: spec.slots,
    every_ms: spec.everyMs,
    ...latencies(firsts),
    over_5_ms: firsts.filter((l) => l > 5).length,
    fired: firsts.length,
    missed: spec.slots - firsts.length,
    twice,
    off_grid: offGrid,
    clock_offset_ms: round(offset, 3),
    clock_error_ms: round(Math.max(before.error, after.error, Math.abs(before.offset - after.offset) / 2), 3),
  };
}

/** A BullMQ scheduler job's slot: the `nextMillis` its id ends with (`repeat:<id>:<nextMillis>`). */
function bullSlot(job: BullJob): number {
  const slot = Number(/:(\d+)$/.exec(job.id ?? '')?.[1]);
  if (!Number.isSafeInteger(slot)) throw new Error(`scheduler-lateness: BullMQ job id ${job.id} does not end with its slot`);
  return slot;
}
