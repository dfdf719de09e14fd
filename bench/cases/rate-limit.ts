import type { Job as BullJob } from 'bullmq';
import { Consumer } from '../../src/node/consumer/index.js';
import type { Job } from '../../src/job.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { commandTotal } from '../lib/redis-stats.js';
import { socketWrites } from '../lib/round-trips.js';
import { clockOffset } from '../lib/server-clock.js';
import { alignedCounts, slack, slidingMax } from '../lib/start-windows.js';
import { epochMs, quantile, round, sleep, until } from '../lib/stats.js';

/** A rate-limit run: `groups` groups of `perGroup` jobs, each group at `limit` starts per `periodMs`. */
export interface RateLimitSpec {
  readonly groups: number;
  /** Starts per period of one group (echomq); BullMQ gets `groups * limit` for its whole queue. */
  readonly limit: number;
  readonly periodMs: number;
  /** Aligned windows judged, from the first start: every group must be saturated through them. */
  readonly windows: number;
  /** Jobs per group: more than `windows * limit`, so no group runs dry in the judged windows. */
  readonly perGroup: number;
  /** The consumer's slots: far more than a no-op handler needs, never the bottleneck. */
  readonly concurrency: number;
  /** How long the idle consumer is measured on the empty queue, ms. */
  readonly idleMs: number;
}

/** Issue 17's case: 10 groups at 50 a second, 600 jobs each (12 s of backlog), 10 windows judged. */
export const RATE_LIMIT_FULL: RateLimitSpec = { groups: 10, limit: 50, periodMs: 1_000, windows: 10, perGroup: 600, concurrency: 50, idleMs: 5_000 };
/** --quick: the same limits and idle window (one beat), 3 windows judged. */
export const RATE_LIMIT_QUICK: RateLimitSpec = { groups: 10, limit: 50, periodMs: 1_000, windows: 3, perGroup: 250, concurrency: 50, idleMs: 5_000 };

/** The consumer's lease: a claim's server time is its jobs' `leaseUntil` less this. */
const LEASE_MS = 30_000;
/** After a batch's last completion, before its quiet window opens: the last settle's claim and the park. */
const SETTLE_MS = 20;
/** A quiet window closes this long before the first readmission is due. */
const MARGIN_MS = 20;
/** A quiet window shorter than this is not measured (a readmission came late enough to eat the period). */
const MIN_QUIET_MS = 50;
/**
 * The idle consumer's own cadence, ms: echomq's beat (its default 5 s; its due timers' ticks do
 * not move it) and BullMQ's drainDelay (5 s). A quiet window sees that period's beat whole or not
 * at all, so (c) may hold one such beat more than its share of (a).
 */
const IDLE_PERIOD_MS = 5_000;
/** The entry BullMQ's queue-wide limit applies to (echomq's name for a queue's own limit). */
const QUEUE_ENTRY = '!';

/** One job's start: the entry whose limit counted it, when the limit counted it, and its handler's start. */
interface Start {
  readonly entry: string;
  /** echomq: the claim's Redis TIME (ms); BullMQ: `job.processedOn`, its worker's `Date.now()` as it asked for the job. */
  readonly at: number;
  /** The handler's start, `epochMs()` of this process. */
  readonly local: number;
}

/** Redis commands (INFO commandstats) and socket writes to the bench Redis so far, and when. */
interface Sample {
  readonly commands: number;
  readonly writes: number;
  readonly t: number;
}

/** One implementation set up and running (parked, nothing enqueued yet). */
interface Side {
  /** How many entries have a limit, and the limit of each. */
  readonly entries: number;
  readonly limit: number;
  /** `Start.at`'s clock less this process's: a due time on that clock less this is local. */
  readonly offset: number;
  enqueue(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `rate-limit` (issue 17): does a rate limit hold exactly, keep every group at its limit, and cost
 * nothing while everything waits on it?
 *
 * - echomq: 10 groups, each `setGroupRateLimit(g, {limit: 50, periodMs: 1000})`, 600 jobs each
 *   enqueued interleaved in one `addBulk` onto one parked `Consumer` (concurrency 50, lease 30 s,
 *   default beat) with a no-op handler. A start's time is its claim's Redis TIME
 *   (`job.leaseUntil - leaseMs`): the instant the starts log counted it.
 * - BullMQ: a Worker with `limiter: {max: 500, duration: 1000}` (the same total, queue-wide: open
 *   source BullMQ has no per-group limit), the same 6,000 jobs in one queue, concurrency 50. A
 *   start's time is `job.processedOn`, the `Date.now()` its worker sent with the fetch that
 *   started it (its limiter counts the job in that script, on a key that expires `duration` after
 *   the window's first start: a fixed window, not a sliding one). It is stamped as the fetch is
 *   sent, so it runs ahead of Redis while Redis is busy (by up to ~0.45 s during the enqueue in a
 *   trial run); its `start_*` figures, on the handlers' starts, do not.
 *
 * Figures per entry (echomq: each group, limit 50; BullMQ: the queue, limit 500), on the start
 * clock above: `window_min` / `window_max`, the fewest and most starts of any entry in any aligned
 * window [t0 + k * period, t0 + (k + 1) * period), k < windows, t0 the first start of all;
 * `sliding_max`, the most of any entry in any window of one period (the limit's own bound);
 * `slack_*_ms`, how much later each start came than the limit allowed (start i less start
 * i - limit less the period: 0 at the first instant it could, negative past the limit; of a
 * batch's first start, its readmission's lateness); `drift_max_ms`, how far an entry's last judged
 * batch came after its first plus (windows - 1) periods. `queue_*`: the same over the whole
 * queue. `start_*`: the same on the handlers' starts (this process's clock, so it carries the
 * dispatch's jitter on top).
 *
 * Commands per second (INFO commandstats deltas, the bench's own INFO left out), with socket
 * writes to the bench Redis per second beside them (`*_round_trips_per_s`): `idle` (a) is the
 * consumer parked on the empty queue for `idleMs`, before the enqueue; `throttled` (c) is the
 * time every entry waits on its limit: in each period, from its batch's last completion (+20 ms)
 * to 20 ms before the first readmission is due, summed over the periods (`throttled_first_*` is
 * the first period's alone: the rest of the first second after the enqueue); `run` (b) is the
 * steady run, from the end of the first quiet window to the end of the last (periods 2 to
 * `windows`, readmissions and claims included), with `run_commands_per_start`.
 *
 * `goals` (booleans): `windows_in_range`, every aligned window of every entry within [0.9 * limit,
 * limit] ([45, 50]); `sliding_within_limit`, `sliding_max <= limit`; `throttled_quiet`, (c) no
 * more than (a) plus the readmissions' beats: the quiet windows end before any readmission is due,
 * so those beats are none of theirs, and what is left is (a)'s rate over their length, give or
 * take the one periodic beat (IDLE_PERIOD_MS) that lands in them whole or not at all
 * (`throttled_excess_commands`, beyond (a)'s rate, against `idle_period_commands`).
 */
export function rateLimitCase(full: RateLimitSpec, quick: RateLimitSpec): BenchCase {
  return {
    name: 'rate-limit',
    impls: ['echomq', 'bullmq'],
    run: (ctx, impl) => measureRateLimit(ctx, impl, ctx.quick ? quick : full),
  };
}

/** The registered case: 10 windows judged, 3 with --quick. */
export const rateLimit: BenchCase = rateLimitCase(RATE_LIMIT_FULL, RATE_LIMIT_QUICK);

/** Runs one implementation: see rateLimitCase. */
export async function measureRateLimit(ctx: BenchContext, impl: Impl, spec: RateLimitSpec): Promise<Figures> {
  const name = benchQueueName('rate');
  const starts: Start[] = [];
  let completed = 0;
  const onStart = (entry: string, at: number): void => {
    starts.push({ entry, at, local: epochMs() });
  };
  const onCompleted = (): void => {
    completed++;
  };
  const side = impl === 'echomq' ? await echomqSide(ctx, name, spec, onStart, onCompleted) : await bullmqSide(ctx, name, spec, onStart, onCompleted);

  await sleep(300); // up and parked
  const idleFrom = await sample(ctx);
  await sleep(spec.idleMs);
  const idleTo = await sample(ctx);

  await side.enqueue();
  const perPeriod = side.entries * side.limit;
  const quiet: Array<readonly [Sample, Sample]> = [];
  let skipped = 0;
  for (let k = 0; k < spec.windows; k++) {
    // every entry has spent its limit for this period and every job of it is settled
    const target = (k + 1) * perPeriod;
    await until(() => completed >= target, 3 * spec.periodMs + 10_000, `${target} completions`, 5);
    await sleep(SETTLE_MS);
    const from = await sample(ctx);
    const due = firstDue(starts, side.limit, spec.periodMs);
    const end = due === null ? from.t : due - side.offset - MARGIN_MS;
    if (end - epochMs() < MIN_QUIET_MS) {
      skipped++;
      continue;
    }
    await sleep(end - epochMs());
    quiet.push([from, await sample(ctx)]);
  }
  await side.stop();

  const perEntry = startFigures(starts, side.limit, spec, '');
  const commands = commandFigures(idleFrom, idleTo, quiet, starts, skipped);
  const { window_min: low, window_max: high, sliding_max: sliding } = perEntry;
  return {
    limit: side.limit,
    period_ms: spec.periodMs,
    entries: side.entries,
    windows: spec.windows,
    starts: starts.length,
    ...perEntry,
    ...queueFigures(starts, side, spec),
    ...startFigures(
      starts.map((s) => ({ ...s, at: s.local })),
      side.limit,
      spec,
      'start_',
    ),
    ...commands.figures,
    goals: {
      windows_in_range: typeof low === 'number' && typeof high === 'number' && low >= 0.9 * side.limit && high <= side.limit,
      sliding_within_limit: typeof sliding === 'number' && sliding <= side.limit,
      throttled_quiet: commands.quiet,
    },
  };
}

/** echomq: the groups' limits set, one parked Consumer on the empty queue. */
async function echomqSide(
  ctx: BenchContext,
  name: string,
  spec: RateLimitSpec,
  onStart: (entry: string, at: number) => void,
  onCompleted: () => void,
): Promise<Side> {
  const producer = echoQueue(ctx, name);
  for (let g = 0; g < spec.groups; g++) await producer.queue.setGroupRateLimit(`g${g}`, { limit: spec.limit, periodMs: spec.periodMs });
  const { offset } = await clockOffset(ctx.admin);
  const worker = echoQueue(ctx, name);
  const consumer = new Consumer(worker.transport, worker.queue, (job: Job) => onStart(job.group ?? '*', job.leaseUntil - LEASE_MS), {
    concurrency: spec.concurrency,
    leaseMs: LEASE_MS,
    hooks: { onCompleted, onError: (error) => console.error('echomq consumer error:', error) },
  }).start();
  return {
    entries: spec.groups,
    limit: spec.limit,
    offset,
    enqueue: async () => {
      await producer.queue.addBulk(
        Array.from({ length: spec.groups * spec.perGroup }, (_, i) => ({ payload: { i }, group: `g${i % spec.groups}` })),
      );
    },
    stop: async () => {
      await consumer.stop();
      await Promise.all([worker.transport.close(), producer.transport.close()]);
    },
  };
}

/** BullMQ: a Worker with the queue-wide limiter, running on the empty queue. */
async function bullmqSide(
  ctx: BenchContext,
  name: string,
  spec: RateLimitSpec,
  onStart: (entry: string, at: number) => void,
  onCompleted: () => void,
): Promise<Side> {
  const limit = spec.groups * spec.limit;
  const queue = bullQueue(ctx, name);
  const worker = bullWorker(ctx, name, async (job: BullJob) => onStart(QUEUE_ENTRY, job.processedOn ?? epochMs()), {
    concurrency: spec.concurrency,
    limiter: { max: limit, duration: spec.periodMs },
  });
  worker.on('completed', onCompleted);
  worker.on('error', (error) => console.error('bullmq worker error:', error));
  await worker.waitUntilReady();
  void worker.run();
  const n = spec.groups * spec.perGroup;
  return {
    entries: 1,
    limit,
    offset: 0, // processedOn is this process's Date.now()
    enqueue: async () => {
      for (let from = 0; from < n; from += 1000) {
        const count = Math.min(1000, n - from);
        await queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'job', data: { i: from + i, g: `g${(from + i) % spec.groups}` } })));
      }
    },
    stop: async () => {
      await worker.close();
      await queue.close();
    },
  };
}

async function sample(ctx: BenchContext): Promise<Sample> {
  const commands = await commandTotal(ctx.admin);
  return { commands, writes: socketWrites(), t: epochMs() };
}

/** Each entry's start times, sorted. */
function byEntry(starts: readonly Start[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const s of starts) {
    const list = out.get(s.entry) ?? [];
    list.push(s.at);
    out.set(s.entry, list);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/**
 * When the first entry at its limit may start again (on the start clock): the earliest, over the
 * entries with `limit` starts or more, of the start `limit` back plus the period. Null for none.
 */
function firstDue(starts: readonly Start[], limit: number, periodMs: number): number | null {
  let due: number | null = null;
  for (const times of byEntry(starts).values()) {
    if (times.length < limit) continue;
    const at = times[times.length - limit]! + periodMs;
    if (due === null || at < due) due = at;
  }
  return due;
}

/** The per-entry figures (see rateLimitCase), their names after `prefix`. */
function startFigures(starts: readonly Start[], limit: number, spec: RateLimitSpec, prefix: string): Figures {
  const entries = byEntry(starts);
  const t0 = Math.min(...starts.map((s) => s.at));
  const counts: number[] = [];
  const slacks: number[] = [];
  let sliding = 0;
  let drift: number | null = null;
  for (const times of entries.values()) {
    counts.push(...alignedCounts(times, t0, spec.periodMs, spec.windows));
    sliding = Math.max(sliding, slidingMax(times, spec.periodMs));
    slacks.push(...slack(times, limit, spec.periodMs));
    const last = times[(spec.windows - 1) * limit];
    if (last !== undefined) drift = Math.max(drift ?? -Infinity, last - times[0]! - (spec.windows - 1) * spec.periodMs);
  }
  const figures: Figures = {
    [`${prefix}window_min`]: counts.length > 0 ? Math.min(...counts) : null,
    [`${prefix}window_max`]: counts.length > 0 ? Math.max(...counts) : null,
    [`${prefix}sliding_max`]: sliding,
  };
  if (prefix === '') {
    Object.assign(figures, {
      slack_min_ms: round(slacks.length > 0 ? Math.min(...slacks) : null),
      slack_p50_ms: round(quantile(slacks, 0.5)),
      slack_p99_ms: round(quantile(slacks, 0.99)),
      slack_max_ms: round(slacks.length > 0 ? Math.max(...slacks) : null),
      drift_max_ms: round(drift),
    });
  }
  return figures;
}

/** The whole queue's aligned windows and sliding maximum (for BullMQ the same as its entry's). */
function queueFigures(starts: readonly Start[], side: Side, spec: RateLimitSpec): Figures {
  const times = starts.map((s) => s.at);
  const counts = alignedCounts(times, Math.min(...times), spec.periodMs, spec.windows);
  return {
    queue_window_min: counts.length > 0 ? Math.min(...counts) : null,
    queue_window_max: counts.length > 0 ? Math.max(...counts) : null,
    queue_sliding_max: slidingMax(times, spec.periodMs),
    queue_limit: side.entries * side.limit,
  };
}

const perSecond = (count: number, ms: number): number | null => (ms > 0 ? round(count / (ms / 1000), 1) : null);

/**
 * Commands and round trips per second: idle (a), the steady run (b), throttled (c); and whether (c)
 * kept to (a): the quiet windows' commands at most the idle rate over their length, plus one idle
 * period's (IDLE_PERIOD_MS): the periodic beat lands in them whole or not at all.
 */
function commandFigures(
  idleFrom: Sample,
  idleTo: Sample,
  quiet: ReadonlyArray<readonly [Sample, Sample]>,
  starts: readonly Start[],
  skipped: number,
): { figures: Figures; quiet: boolean } {
  const idleMs = idleTo.t - idleFrom.t;
  const quietMs = quiet.reduce((ms, [a, b]) => ms + b.t - a.t, 0);
  const quietCommands = quiet.reduce((n, [a, b]) => n + b.commands - a.commands, 0);
  const quietWrites = quiet.reduce((n, [a, b]) => n + b.writes - a.writes, 0);
  const first = quiet[0];
  const runFrom = first?.[1];
  const runTo = quiet[quiet.length - 1]?.[1];
  const runMs = runFrom && runTo ? runTo.t - runFrom.t : 0;
  const runStarts = runFrom && runTo ? starts.filter((s) => s.local > runFrom.t && s.local <= runTo.t).length : 0;
  const runCommands = runFrom && runTo ? runTo.commands - runFrom.commands : 0;
  const idleRate = (idleTo.commands - idleFrom.commands) / idleMs;
  const figures: Figures = {
    idle_commands_per_s: perSecond(idleTo.commands - idleFrom.commands, idleMs),
    idle_round_trips_per_s: perSecond(idleTo.writes - idleFrom.writes, idleMs),
    run_commands_per_s: perSecond(runCommands, runMs),
    run_commands_per_start: runStarts > 0 ? round(runCommands / runStarts) : null,
    throttled_commands_per_s: perSecond(quietCommands, quietMs),
    throttled_round_trips_per_s: perSecond(quietWrites, quietMs),
    throttled_first_commands_per_s: first ? perSecond(first[1].commands - first[0].commands, first[1].t - first[0].t) : null,
    throttled_ms: Math.round(quietMs),
    throttled_windows_skipped: skipped,
    throttled_excess_commands: Math.round(quietCommands - idleRate * quietMs),
    idle_period_commands: Math.round(idleRate * IDLE_PERIOD_MS),
  };
  return { figures, quiet: quiet.length > 0 && quietCommands <= idleRate * (quietMs + IDLE_PERIOD_MS) };
}
