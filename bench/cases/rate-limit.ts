import type { Job as BullJob } from 'bullmq';
import { Consumer } from '../../src/node/consumer/index.js';
import type { Job } from '../../src/job.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized, type Sizes } from '../lib/context.js';
import { bullQueue, bullWorker, echoQueue } from '../lib/impls.js';
import { commandTotal } from '../lib/redis-stats.js';
import { socketWrites } from '../lib/round-trips.js';
import { clockOffset } from '../lib/server-clock.js';
import { alignedCounts, slack, slidingMax } from '../lib/start-windows.js';
import { epochMs, latencies, quantile, round, sleep, until } from '../lib/stats.js';

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
/** --smoke: 2 groups at 5 per 400 ms, 2 windows judged, a 100 ms idle window (no beat in it). */
export const RATE_LIMIT_SMOKE: RateLimitSpec = { groups: 2, limit: 5, periodMs: 400, windows: 2, perGroup: 15, concurrency: 5, idleMs: 100 };

/** The consumer's lease: a claim's server time is its jobs' `leaseUntil` less this. */
const LEASE_MS = 30_000;
/** How often INFO commandstats is sampled while the jobs run, ms (the bench's INFO is not counted). */
const SAMPLE_MS = 20;
/** A quiet span opens this long after a completion: the last settle's claim and the park. */
const SETTLE_MS = 20;
/** A quiet span closes this long before the next start: the readmission's beat and the claim. */
const MARGIN_MS = 30;
/** A gap in the activity shorter than this (less SETTLE_MS and MARGIN_MS) is no quiet span. */
const MIN_QUIET_MS = 100;
/**
 * The idle consumer's own cadence, ms: echomq's beat (its default 5 s; its due timers' ticks do
 * not move it) and BullMQ's drainDelay (5 s). A quiet span sees that period's beat whole or not
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

/** Redis commands (INFO commandstats) and socket writes to the bench Redis so far, and when (local epoch ms, around the INFO). */
interface Sample {
  readonly commands: number;
  readonly writes: number;
  readonly before: number;
  readonly after: number;
}

/** A stretch with nothing running while jobs wait (local epoch ms): every entry waits on its limit. */
interface Span {
  readonly from: number;
  readonly to: number;
}

/** One implementation set up: its queue and limits, nothing enqueued yet. */
export interface Side {
  /** How many entries have a limit, and the limit of each. */
  readonly entries: number;
  readonly limit: number;
  /** `Start.at`'s clock less this process's `epochMs()` (Redis TIME's offset for echomq, 0 for BullMQ's Date.now()). */
  readonly offset: number;
  /** Starts a consumer (echomq) or Worker (BullMQ) on a connection of its own; resolves its stop. */
  consume(): Promise<() => Promise<void>>;
  enqueue(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `rate-limit` (issue 17): does a rate limit hold exactly, keep every group at its limit, and cost
 * nothing while everything waits on it?
 *
 * First a consumer parks on the empty queue for `idleMs` (a) and stops; then the backlog is
 * enqueued and a new consumer starts on it, so every entry spends its limit in the first instant
 * (a producer in this process while the consumer runs would hold up its handlers: in a trial,
 * BullMQ's first 500 handlers started together as the enqueue returned, 0.34 s after its first
 * fetch).
 *
 * - echomq: 10 groups, each `setGroupRateLimit(g, {limit: 50, periodMs: 1000})`, 600 jobs each
 *   interleaved in one `addBulk`, one parked `Consumer` (concurrency 50, lease 30 s, default
 *   beat) with a no-op handler. A start's time is its claim's Redis TIME (`job.leaseUntil -
 *   leaseMs`): the instant the starts log counted it.
 * - BullMQ: a Worker with `limiter: {max: 500, duration: 1000}` (the same total, queue-wide: open
 *   source BullMQ has no per-group limit), the same 6,000 jobs in one queue, concurrency 50. A
 *   start's time is `job.processedOn`, the `Date.now()` its worker sent with the fetch that
 *   started it (its limiter counts the job in that script, on a key that expires `duration` after
 *   the window's first start: a fixed window, not a sliding one). It is stamped as the fetch is
 *   sent, so it is a little ahead of the limiter's count; the `start_*` figures, on the
 *   handlers' starts, are a little behind it.
 *
 * Figures per entry (echomq: each group, limit 50; BullMQ: the queue, limit 500), on the start
 * clock above: `window_min` / `window_max`, the fewest and most starts of any entry in any aligned
 * window [t0 + k * period, t0 + (k + 1) * period), k < windows, t0 the first start of all;
 * `sliding_max`, the most of any entry in any window of one period (the limit's own bound);
 * `slack_*_ms`, how much later each start came than the limit allowed (start i less start
 * i - limit less the period: 0 at the first instant it could, negative past the limit);
 * `readmit_*_ms`, the same of each batch's first start (start limit, 2 * limit, ...): its
 * readmission's lateness; `dispatch_*_ms`, from a start's time to its handler's start (echomq's
 * claim, Redis TIME floored to the ms, against this process's clock by the offset of the
 * shortest of 20 TIME round trips; BullMQ's processedOn, the same clock); `drift_max_ms`, how
 * far an entry's last judged batch came after its first plus (windows - 1) periods. `queue_*`:
 * the same over the whole queue. `start_*`: the same on the handlers' starts (this process's
 * clock, so it carries the dispatch's jitter on top).
 *
 * Commands per second (INFO commandstats deltas, the bench's own INFO left out), with socket
 * writes to the bench Redis per second beside them (`*_round_trips_per_s`): `idle` (a) is the
 * consumer parked on the empty queue for `idleMs` (one beat), before the enqueue; `throttled` (c)
 * is the time everything waits on its limit: each stretch with nothing running (no handler
 * start, no completion: the backlog outlasts the run and the slots never fill), from 20 ms after
 * its last completion to 30 ms before the next start, measured between INFO samples taken every
 * 20 ms wholly inside it and summed (`throttled_spans` of them, `throttled_ms` long;
 * `throttled_first_*` is the first alone: the rest of the first second after the enqueue); `run`
 * (b) is the steady run from the end of the first quiet span to the end of the last,
 * readmissions and claims included, with `run_commands_per_start`.
 *
 * `goals` (booleans): `windows_in_range`, every aligned window of every entry within [0.9 * limit,
 * limit] ([45, 50]); `sliding_within_limit`, `sliding_max <= limit`; `throttled_quiet`, (c) no
 * more than (a) plus the readmissions' beats: a quiet span ends before the start its readmission
 * brings, so those beats are none of its, and what is left is (a)'s rate over the spans, give or
 * take the one periodic beat (IDLE_PERIOD_MS) that lands in them whole or not at all
 * (`throttled_excess_commands`, beyond (a)'s rate, against `idle_period_commands`).
 */
export function rateLimitCase(specs: Sizes<RateLimitSpec>): BenchCase {
  return {
    name: 'rate-limit',
    impls: ['echomq', 'bullmq'],
    run: (ctx, impl) => measureRateLimit(ctx, impl, sized(ctx, specs)),
  };
}

/** The registered case: 10 windows judged, 3 with --quick, 2 with --smoke. */
export const rateLimit: BenchCase = rateLimitCase({ full: RATE_LIMIT_FULL, quick: RATE_LIMIT_QUICK, smoke: RATE_LIMIT_SMOKE });

/** Runs one implementation: see rateLimitCase. */
export async function measureRateLimit(ctx: BenchContext, impl: Impl, spec: RateLimitSpec): Promise<Figures> {
  const name = benchQueueName('rate');
  return measureLimited(ctx, spec, (onStart, onCompleted) =>
    impl === 'echomq' ? echomqSide(ctx, name, spec, onStart, onCompleted) : bullmqSide(ctx, name, spec, onStart, onCompleted),
  );
}

/** What the measurement takes of a spec: the period, how many of them are judged, how long the idle consumer is measured. */
export type LimitedRun = Pick<RateLimitSpec, 'periodMs' | 'windows' | 'idleMs'>;

/** Sets one implementation up, given what its handlers call at each start (its entry, the limit's clock) and completion. */
export type SideFactory = (onStart: (entry: string, at: number) => void, onCompleted: () => void) => Promise<Side>;

/** How measureLimited judges the quiet spans. */
export interface QuietJudging {
  /**
   * Judge `throttled_quiet` on the quiet spans after the first, and report them as
   * `throttled_rest_*`: for a side whose first claims still have work to do after the first
   * batch's handlers end (the `key-rate` case's claims park the whole backlog on its keys then).
   */
  readonly afterFirst?: boolean;
}

/**
 * The measurement of rateLimitCase over any side (the `key-rate` case's entries are concurrency
 * keys): (a) idle, the enqueue, the run through the judged periods and one more, the figures.
 */
export async function measureLimited(ctx: BenchContext, spec: LimitedRun, makeSide: SideFactory, judging: QuietJudging = {}): Promise<Figures> {
  const starts: Start[] = [];
  const completions: number[] = [];
  const onStart = (entry: string, at: number): void => {
    starts.push({ entry, at, local: epochMs() });
  };
  const onCompleted = (): void => {
    completions.push(epochMs());
  };
  const side = await makeSide(onStart, onCompleted);

  // (a): a consumer parked on the empty queue; it stops before the enqueue, which would otherwise
  // hold up this process's handlers (the producer runs here too) while the first claims go out
  let stop = await side.consume();
  await sleep(300); // up and parked
  const idleFrom = await sample(ctx);
  await sleep(spec.idleMs);
  const idleTo = await sample(ctx);
  await stop();

  await side.enqueue();
  const samples: Sample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push(await sample(ctx));
      await sleep(SAMPLE_MS);
    }
  })();
  stop = await side.consume();
  // the judged periods, then one more: the quiet span after the last judged batch and the next start
  const judged = spec.windows * side.entries * side.limit;
  await until(() => completions.length >= judged, spec.windows * spec.periodMs + 30_000, `${judged} completions`, 10);
  await sleep(spec.periodMs);
  sampling = false;
  await sampler;
  await stop();
  await side.close();

  const perEntry = startFigures(starts, side.limit, spec, '');
  const commands = commandFigures(idleFrom, idleTo, samples, quietSpans(starts, completions), starts, judging);
  const { window_min: low, window_max: high, sliding_max: sliding } = perEntry;
  return {
    limit: side.limit,
    period_ms: spec.periodMs,
    entries: side.entries,
    windows: spec.windows,
    starts: starts.length,
    ...perEntry,
    ...queueFigures(starts, side, spec),
    ...latenciesOf(
      'dispatch',
      starts.map((s) => s.local + side.offset - s.at),
    ),
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

/** echomq: the groups' limits set; each consumer a parked Consumer with the no-op handler. */
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
  return {
    entries: spec.groups,
    limit: spec.limit,
    offset,
    consume: async () => {
      const { transport, queue } = echoQueue(ctx, name);
      await transport.ping();
      const consumer = new Consumer(transport, queue, (job: Job) => onStart(job.group ?? '*', job.leaseUntil - LEASE_MS), {
        concurrency: spec.concurrency,
        leaseMs: LEASE_MS,
        hooks: { onCompleted, onError: (error) => console.error('echomq consumer error:', error) },
      }).start();
      return async () => {
        await consumer.stop();
        await transport.close();
      };
    },
    enqueue: async () => {
      await producer.queue.addBulk(
        Array.from({ length: spec.groups * spec.perGroup }, (_, i) => ({ payload: { i }, group: `g${i % spec.groups}` })),
      );
    },
    close: () => producer.transport.close(),
  };
}

/** BullMQ: one queue; each consumer a Worker with the queue-wide limiter. */
export async function bullmqSide(
  ctx: BenchContext,
  name: string,
  spec: RateLimitSpec,
  onStart: (entry: string, at: number) => void,
  onCompleted: () => void,
): Promise<Side> {
  const limit = spec.groups * spec.limit;
  const queue = bullQueue(ctx, name);
  await queue.waitUntilReady();
  const n = spec.groups * spec.perGroup;
  return {
    entries: 1,
    limit,
    offset: 0,
    consume: async () => {
      const worker = bullWorker(ctx, name, async (job: BullJob) => onStart(QUEUE_ENTRY, job.processedOn ?? epochMs()), {
        concurrency: spec.concurrency,
        limiter: { max: limit, duration: spec.periodMs },
      });
      worker.on('completed', onCompleted);
      worker.on('error', (error) => console.error('bullmq worker error:', error));
      await worker.waitUntilReady();
      void worker.run();
      return () => worker.close();
    },
    enqueue: async () => {
      for (let from = 0; from < n; from += 1000) {
        const count = Math.min(1000, n - from);
        await queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'job', data: { i: from + i, g: `g${(from + i) % spec.groups}` } })));
      }
    },
    close: () => queue.close(),
  };
}

async function sample(ctx: BenchContext): Promise<Sample> {
  const before = epochMs();
  const writes = socketWrites();
  const commands = await commandTotal(ctx.admin);
  return { commands, writes, before, after: epochMs() };
}

const middle = (s: Sample): number => (s.before + s.after) / 2;

/**
 * The stretches with nothing running while jobs wait: gaps in the activity (handler starts and
 * completions, local) from the first start on, each from SETTLE_MS after its last completion to
 * MARGIN_MS before the next start, at least MIN_QUIET_MS long. The backlog outlasts the run and
 * the consumer's slots are never full, so nothing running means every entry waits on its limit.
 */
function quietSpans(starts: readonly Start[], completions: readonly number[]): Span[] {
  const events = [...starts.map((s) => s.local), ...completions].sort((a, b) => a - b);
  const spans: Span[] = [];
  for (let i = 1; i < events.length; i++) {
    const from = events[i - 1]! + SETTLE_MS;
    const to = events[i]! - MARGIN_MS;
    if (to - from >= MIN_QUIET_MS) spans.push({ from, to });
  }
  return spans;
}

/** The first and last sample taken wholly inside `span`, if two are. */
function within(samples: readonly Sample[], span: Span): readonly [Sample, Sample] | undefined {
  const inside = samples.filter((s) => s.before >= span.from && s.after <= span.to);
  const first = inside[0];
  const last = inside[inside.length - 1];
  return first && last && last !== first ? [first, last] : undefined;
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

/** The per-entry figures (see rateLimitCase), their names after `prefix`. */
function startFigures(starts: readonly Start[], limit: number, spec: LimitedRun, prefix: string): Figures {
  const entries = byEntry(starts);
  const t0 = Math.min(...starts.map((s) => s.at));
  const counts: number[] = [];
  const slacks: number[] = [];
  const readmits: number[] = [];
  let sliding = 0;
  let drift: number | null = null;
  for (const times of entries.values()) {
    counts.push(...alignedCounts(times, t0, spec.periodMs, spec.windows));
    sliding = Math.max(sliding, slidingMax(times, spec.periodMs));
    const own = slack(times, limit, spec.periodMs);
    slacks.push(...own);
    // the first start of each batch (start limit, 2 * limit, ...): its readmission's lateness
    readmits.push(...own.filter((_, i) => i % limit === 0));
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
      readmit_p50_ms: round(quantile(readmits, 0.5)),
      readmit_max_ms: round(readmits.length > 0 ? Math.max(...readmits) : null),
      drift_max_ms: round(drift),
    });
  }
  return figures;
}

/** The whole queue's aligned windows and sliding maximum (for BullMQ the same as its entry's). */
function queueFigures(starts: readonly Start[], side: Side, spec: LimitedRun): Figures {
  const times = starts.map((s) => s.at);
  const counts = alignedCounts(times, Math.min(...times), spec.periodMs, spec.windows);
  return {
    queue_window_min: counts.length > 0 ? Math.min(...counts) : null,
    queue_window_max: counts.length > 0 ? Math.max(...counts) : null,
    queue_sliding_max: slidingMax(times, spec.periodMs),
    queue_limit: side.entries * side.limit,
  };
}

/** p50, p99 and max of `values` (ms) as `<name>_p50_ms` ... */
function latenciesOf(name: string, values: readonly number[]): Figures {
  const { p50_ms, p99_ms, max_ms } = latencies(values);
  return { [`${name}_p50_ms`]: p50_ms, [`${name}_p99_ms`]: p99_ms, [`${name}_max_ms`]: max_ms };
}

const perSecond = (count: number, ms: number): number | null => (ms > 0 ? round(count / (ms / 1000), 1) : null);

/**
 * Commands and round trips per second: idle (a), the steady run (b), throttled (c); and whether (c)
 * kept to (a): the quiet spans' commands at most the idle rate over their length, plus one idle
 * period's (IDLE_PERIOD_MS): the periodic beat lands in them whole or not at all. With
 * `judging.afterFirst`, (c) is also summed over the spans after the first (`throttled_rest_*`),
 * and those are judged.
 */
function commandFigures(
  idleFrom: Sample,
  idleTo: Sample,
  samples: readonly Sample[],
  spans: readonly Span[],
  starts: readonly Start[],
  judging: QuietJudging = {},
): { figures: Figures; quiet: boolean } {
  const idleMs = middle(idleTo) - middle(idleFrom);
  const idleRate = (idleTo.commands - idleFrom.commands) / idleMs;
  const quiet = spans.map((span) => within(samples, span)).filter((w): w is readonly [Sample, Sample] => w !== undefined);
  const sum = (of: ReadonlyArray<readonly [Sample, Sample]>) => ({
    ms: of.reduce((ms, [a, b]) => ms + middle(b) - middle(a), 0),
    commands: of.reduce((n, [a, b]) => n + b.commands - a.commands, 0),
    writes: of.reduce((n, [a, b]) => n + b.writes - a.writes, 0),
  });
  const { ms: quietMs, commands: quietCommands, writes: quietWrites } = sum(quiet);
  const first = quiet[0];
  // the steady run: from the end of the first quiet span to the end of the last
  const runFrom = first?.[1];
  const runTo = quiet[quiet.length - 1]?.[1];
  const runMs = runFrom && runTo ? middle(runTo) - middle(runFrom) : 0;
  const runStarts = runFrom && runTo ? starts.filter((s) => s.local > middle(runFrom) && s.local <= middle(runTo)).length : 0;
  const runCommands = runFrom && runTo ? runTo.commands - runFrom.commands : 0;
  const figures: Figures = {
    idle_commands_per_s: perSecond(idleTo.commands - idleFrom.commands, idleMs),
    idle_round_trips_per_s: perSecond(idleTo.writes - idleFrom.writes, idleMs),
    run_commands_per_s: perSecond(runCommands, runMs),
    run_commands_per_start: runStarts > 0 ? round(runCommands / runStarts) : null,
    throttled_commands_per_s: perSecond(quietCommands, quietMs),
    throttled_round_trips_per_s: perSecond(quietWrites, quietMs),
    throttled_first_commands_per_s: first ? perSecond(first[1].commands - first[0].commands, middle(first[1]) - middle(first[0])) : null,
    throttled_spans: quiet.length,
    throttled_ms: Math.round(quietMs),
    throttled_excess_commands: Math.round(quietCommands - idleRate * quietMs),
    idle_period_commands: Math.round(idleRate * IDLE_PERIOD_MS),
  };
  if (!judging.afterFirst) return { figures, quiet: quiet.length > 0 && quietCommands <= idleRate * (quietMs + IDLE_PERIOD_MS) };
  const rest = sum(quiet.slice(1));
  Object.assign(figures, {
    throttled_rest_commands_per_s: perSecond(rest.commands, rest.ms),
    throttled_rest_round_trips_per_s: perSecond(rest.writes, rest.ms),
    throttled_rest_ms: Math.round(rest.ms),
    throttled_rest_excess_commands: Math.round(rest.commands - idleRate * rest.ms),
  });
  return { figures, quiet: quiet.length > 1 && rest.commands <= idleRate * (rest.ms + IDLE_PERIOD_MS) };
}
