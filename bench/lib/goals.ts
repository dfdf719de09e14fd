import type { GoalChecks, Impl } from './context.js';

/**
 * One goal of issue 6 (or 15, for the floors): a figure of a case, judged against the anchor in
 * the same run or a bound. A floor anchor is the least this machine can do for the case's unit
 * of work, so its ratio is below 1 and its minRatio is 1 / (the factor allowed over the floor).
 */
export interface Goal {
  readonly case: string;
  readonly figure: string;
  /** Whether a larger figure is better (throughput) or a smaller one (latency, cost). */
  readonly better: 'higher' | 'lower';
  readonly anchor: Impl;
  /** At least this many times better than the anchor (ratio oriented so > 1 is better). */
  readonly minRatio?: number;
  /** An absolute bound on echomq's figure (at most, or at least with better = 'higher'). */
  readonly bound?: number;
  /** The goal as the issue writes it. */
  readonly text: string;
}

/**
 * The goals table of issue 6, row by row, with issue 15's floors beside the cases they bound and
 * its process-c100-events (the events stream on) after process-c100's, and issue 16's
 * scheduler-lateness after the delayed cases; issue 17's rate-limit last (bounds on echomq's own
 * figures, per group at 50 a second: BullMQ's limit is queue-wide, 500, so no ratio is shown; the
 * case's `goals` field also judges its commands while throttled); issue 18's flow-fanout after it.
 * Issue 32 raised the drain, bulk enqueue and groups ratios and added bounds on Redis's CPU a
 * drained job, the commands of one add and the memory of a waiting job, where it asks more than
 * issue 6 did (its wait goal, half BullMQ's p50, is below issue 6's third, which stays). Its goal
 * of an enqueue one at a time at or above bee-queue's is not judged here: bee-queue is not in the bench.
 * Durable steps (`steps`): bounds on echomq's figures, Cloudflare Workflows under `wrangler
 * dev` beside them for scale (its local emulation, not Cloudflare's service). The job controls
 * last: a running job's cancel heard within 50 ms, a bulk cancel beside BullMQ's clean for scale,
 * and an expired job no dearer to Redis than a job run.
 */
export const GOALS: readonly Goal[] = [
  { case: 'process-c100', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 4.5, text: '>= 4.5x BullMQ' },
  { case: 'process-c100', figure: 'redis_us_per_job', better: 'lower', anchor: 'bullmq', bound: 10, text: '<= 10 us of Redis CPU' },
  { case: 'process-c100-events', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 3, text: '>= 3x BullMQ (events on)' },
  { case: 'process-c10', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 3.5, text: '>= 3.5x BullMQ' },
  { case: 'process-c1', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 8, text: '>= 8x BullMQ' },
  { case: 'enqueue-single', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 1.5, text: '>= 1.5x BullMQ' },
  { case: 'enqueue-single', figure: 'p50_ms', better: 'lower', anchor: 'floor', minRatio: 1 / 1.2, text: 'p50 <= 1.2x floor (ratio >= 0.83)' },
  { case: 'enqueue-single', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 6, text: '<= 6 commands an add' },
  { case: 'enqueue-bulk', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 3.5, text: '>= 3.5x BullMQ' },
  { case: 'process-c100', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c100-events', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8 (events on)' },
  { case: 'process-c10', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c1', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c100', figure: 'round_trips_per_job', better: 'lower', anchor: 'bullmq', bound: 0.25, text: '<= 0.25' },
  { case: 'wake-latency', figure: 'p50_ms', better: 'lower', anchor: 'bullmq', bound: 0.4, text: '<= 0.4 ms' },
  { case: 'wake-latency', figure: 'p50_ms', better: 'lower', anchor: 'floor', minRatio: 1 / 1.5, text: 'p50 <= 1.5x floor (ratio >= 0.67)' },
  { case: 'wake-latency', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 2, text: '<= 2 ms' },
  { case: 'wait-latency', figure: 'p50_ms', better: 'lower', anchor: 'bullmq', minRatio: 3, text: 'p50 <= 1/3 of BullMQ (ratio >= 3)' },
  { case: 'wait-latency', figure: 'p50_ms', better: 'lower', anchor: 'floor', minRatio: 1 / 1.5, text: 'p50 <= 1.5x floor (ratio >= 0.67)' },
  { case: 'delayed-burst', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 20, text: 'lateness p99 <= 20 ms' },
  { case: 'delayed-spread', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 10, text: 'lateness p99 <= 10 ms' },
  { case: 'scheduler-lateness', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 5, text: 'lateness p99 <= 5 ms' },
  { case: 'scheduler-lateness', figure: 'missed', better: 'lower', anchor: 'bullmq', bound: 0, text: '0 (no slot missed)' },
  { case: 'scheduler-lateness', figure: 'twice', better: 'lower', anchor: 'bullmq', bound: 0, text: '0 (no slot run twice)' },
  { case: 'stall-recovery', figure: 'recover_ms', better: 'lower', anchor: 'bullmq', bound: 2_100, text: '<= lease + 100 ms (2100)' },
  { case: 'edge-busy', figure: 'requests_per_job', better: 'lower', anchor: 'echomq', bound: 0.1, text: '<= 0.1' },
  { case: 'edge-idle', figure: 'requests_per_event', better: 'lower', anchor: 'echomq', bound: 1, text: '1 (three queues)' },
  { case: 'edge-enqueue', figure: 'requests_per_job', better: 'lower', anchor: 'echomq', bound: 2, text: '<= 2 (one at a time)' },
  { case: 'edge-enqueue', figure: 'burst_requests_per_job', better: 'lower', anchor: 'echomq', bound: 1.2, text: '<= 1.2 (burst)' },
  { case: 'edge-enqueue', figure: 'left_behind', better: 'lower', anchor: 'echomq', bound: 0, text: '0 (every job run by the drains)' },
  { case: 'edge-delayed', figure: 'requests_per_job', better: 'lower', anchor: 'echomq', bound: 1.5, text: '<= 1.5' },
  { case: 'edge-delayed', figure: 'left_behind', better: 'lower', anchor: 'echomq', bound: 0, text: '0 (every job run by the drains)' },
  // issue 33: each platform's adapter held to the Worker's economics
  ...['cloudflare', 'lambda', 'vercel', 'netlify', 'deno'].flatMap((platform): Goal[] => [
    { case: `platform-${platform}`, figure: 'idle_requests_per_event', better: 'lower', anchor: 'echomq', bound: 1, text: '1 (three queues)' },
    { case: `platform-${platform}`, figure: 'requests_per_job', better: 'lower', anchor: 'echomq', bound: 2, text: '<= 2 (one at a time)' },
    { case: `platform-${platform}`, figure: 'burst_requests_per_job', better: 'lower', anchor: 'echomq', bound: 1.2, text: '<= 1.2 (burst)' },
    { case: `platform-${platform}`, figure: 'left_behind', better: 'lower', anchor: 'echomq', bound: 0, text: '0 (every job run by the drains)' },
  ]),
  { case: 'memory', figure: 'bytes_per_job', better: 'lower', anchor: 'bullmq', minRatio: 1, text: "<= BullMQ's" },
  { case: 'memory', figure: 'bytes_per_job', better: 'lower', anchor: 'bullmq', bound: 200, text: '<= 200 B' },
  { case: 'groups-c10', figure: 'jobs_per_s', better: 'higher', anchor: 'groupmq', minRatio: 2.2, text: '>= 2.2x groupmq' },
  { case: 'groups-c1', figure: 'jobs_per_s', better: 'higher', anchor: 'groupmq', text: '(no goal)' },
  { case: 'groups-c10', figure: 'commands_per_job', better: 'lower', anchor: 'groupmq', text: '(no goal)' },
  { case: 'fairness-c1', figure: 'small_first_max_pos', better: 'lower', anchor: 'groupmq', bound: 11, text: '<= 11' },
  { case: 'fairness-c1', figure: 'small_wait_p99_ms', better: 'lower', anchor: 'groupmq', bound: 20, text: '<= 20 ms' },
  { case: 'idle-slots', figure: 'commands_per_s', better: 'lower', anchor: 'groupmq', bound: 5, text: '~0 (<= 5/s: one beat per 5 s, one renewal per lease/3)' },
  { case: 'rate-limit', figure: 'window_min', better: 'higher', anchor: 'echomq', bound: 45, text: '>= 45 (every group, every aligned second)' },
  { case: 'rate-limit', figure: 'window_max', better: 'lower', anchor: 'echomq', bound: 50, text: '<= 50 (every group, every aligned second)' },
  { case: 'rate-limit', figure: 'sliding_max', better: 'lower', anchor: 'echomq', bound: 50, text: '<= 50 (every group, any 1000 ms)' },
  // a rate per concurrency key: the same bounds per key (20 groups over 10 keys); BullMQ's queue-wide limiter on its line for scale
  { case: 'key-rate', figure: 'window_min', better: 'higher', anchor: 'echomq', bound: 45, text: '>= 45 (every key, every aligned second)' },
  { case: 'key-rate', figure: 'window_max', better: 'lower', anchor: 'echomq', bound: 50, text: '<= 50 (every key, every aligned second)' },
  { case: 'key-rate', figure: 'sliding_max', better: 'lower', anchor: 'echomq', bound: 50, text: '<= 50 (every key, any 1000 ms)' },
  { case: 'flow-fanout', figure: 'flows_per_s', better: 'higher', anchor: 'bullmq', minRatio: 3, text: '>= 3x BullMQ (adds to last parent)' },
  { case: 'flow-fanout', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', text: '(no goal)' },
  { case: 'steps', figure: 'step_to_job_round_trips', better: 'lower', anchor: 'echomq', bound: 1, text: "<= 1: a step's round trips <= a plain job's at c100 (same round)" },
  { case: 'steps', figure: 'resume_late_p99_ms', better: 'lower', anchor: 'workflows', bound: 5, text: 'resumed sleep p99 <= 5 ms (busy Node consumer, c100)' },
  { case: 'steps', figure: 'edge_requests_per_step', better: 'lower', anchor: 'echomq', bound: 1.5, text: '<= 1.5 (the Worker, busy)' },
  { case: 'steps', figure: 'steps_per_s', better: 'higher', anchor: 'workflows', text: '(no goal)' },
  { case: 'steps', figure: 'gap_p50_ms', better: 'lower', anchor: 'workflows', text: '(no goal)' },
  // job controls: bounds on echomq's own figures. BullMQ's cancel of a running job is in-process
  // only (Worker.cancelJob, no Redis), so its figure is on its line for scale, not a ratio here
  { case: 'cancel-running', figure: 'p99_ms', better: 'lower', anchor: 'echomq', bound: 50, text: 'cancel to abort p99 <= 50 ms (parked Node consumer)' },
  { case: 'cancel-pending-bulk', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', text: "(no goal; BullMQ's clean deletes, a cancel keeps the row)" },
  { case: 'expiry-sweep', figure: 'expired_cost_ratio', better: 'lower', anchor: 'echomq', bound: 1, text: "an expired job's Redis CPU <= a run job's" },
];

/** One JSON line of a run. `round` (1, 2, ...) is there when the run repeated its cases. */
export interface Line {
  readonly case: string;
  readonly impl: Impl;
  readonly round?: number;
  readonly [figure: string]: number | null | string | undefined | GoalChecks;
}

/**
 * How a goal came out: echomq's figure, the anchor's, the ratio (> 1 = echomq better) and whether
 * it holds. With several rounds, each figure is the median over the rounds and the ratio the
 * median of the rounds' own ratios (each round runs both sides back to back, so a round's ratio
 * sees one state of a noisy machine); `range` is the lowest and highest round ratio.
 */
export interface Verdict {
  readonly goal: Goal;
  readonly echomq: number | null;
  readonly anchor: number | null;
  readonly ratio: number | null;
  readonly range: readonly [number, number] | null;
  readonly holds: boolean | null;
}

const median = (values: readonly number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const ratioOf = (goal: Goal, echomq: number | null, anchor: number | null): number | null => {
  if (echomq === null || anchor === null) return null;
  if (goal.better === 'higher') return anchor === 0 ? null : echomq / anchor;
  return echomq === 0 ? (anchor === 0 ? 1 : Infinity) : anchor / echomq;
};

export function judge(goal: Goal, lines: readonly Line[]): Verdict {
  const ofCase = lines.filter((l) => l.case === goal.case);
  const figure = (impl: Impl, round?: number): number | null => {
    const values = ofCase
      .filter((l) => l.impl === impl && (round === undefined || l.round === round))
      .map((l) => l[goal.figure])
      .filter((v): v is number => typeof v === 'number');
    return median(values);
  };
  const echomq = figure('echomq');
  const anchor = goal.anchor === 'echomq' ? null : figure(goal.anchor);
  const rounds = [...new Set(ofCase.map((l) => l.round).filter((r): r is number => r !== undefined))];
  const perRound = rounds
    .map((r) => ratioOf(goal, figure('echomq', r), goal.anchor === 'echomq' ? null : figure(goal.anchor, r)))
    .filter((r): r is number => r !== null);
  const ratio = perRound.length > 0 ? median(perRound) : ratioOf(goal, echomq, anchor);
  const range: readonly [number, number] | null = perRound.length > 1 ? [Math.min(...perRound), Math.max(...perRound)] : null;
  let holds: boolean | null = null;
  if (goal.minRatio !== undefined) holds = ratio === null ? null : ratio >= goal.minRatio;
  if (goal.bound !== undefined && echomq !== null) {
    holds = goal.better === 'higher' ? echomq >= goal.bound : echomq <= goal.bound;
  }
  return { goal, echomq, anchor, ratio, range, holds };
}

const fmt = (v: number | null): string => {
  if (v === null) return '-';
  if (!Number.isFinite(v)) return 'inf';
  if (Math.abs(v) >= 100) return String(Math.round(v));
  if (Math.abs(v) >= 0.1 || v === 0) return String(Math.round(v * 100) / 100);
  return String(Number(v.toPrecision(2)));
};

/**
 * The markdown table: one row per goal whose case ran. Ratio > 1 means echomq is better; with
 * several rounds it is the median round's, followed by the range over the rounds.
 */
export function goalTable(lines: readonly Line[]): string {
  const rows = GOALS.filter((g) => lines.some((l) => l.case === g.case)).map((g) => judge(g, lines));
  const out = [
    '| case | figure | echomq | anchor | ratio (x better) | goal | holds |',
    '|---|---|---:|---:|---:|---|---|',
  ];
  for (const v of rows) {
    const anchor = v.goal.anchor === 'echomq' ? '-' : `${fmt(v.anchor)} (${v.goal.anchor})`;
    const holds = v.holds === null ? '-' : v.holds ? 'yes' : 'no';
    const ratio = v.ratio === null ? '-' : `${fmt(v.ratio)}x${v.range ? ` (${fmt(v.range[0])}-${fmt(v.range[1])})` : ''}`;
    out.push(`| ${v.goal.case} | ${v.goal.figure} | ${fmt(v.echomq)} | ${anchor} | ${ratio} | ${v.goal.text} | ${holds} |`);
  }
  return out.join('\n');
}

/** Every figure of every line, one row per case and implementation. */
export function figuresTable(lines: readonly Line[]): string {
  const names = [...new Set(lines.flatMap((l) => Object.keys(l).filter((k) => k !== 'case' && k !== 'impl' && k !== 'round' && typeof l[k] !== 'object')))];
  const out = [`| case | impl | round | ${names.join(' | ')} |`, `|---|---|---:|${names.map(() => '---:').join('|')}|`];
  for (const l of lines) {
    out.push(`| ${l.case} | ${l.impl} | ${l.round ?? ''} | ${names.map((k) => (typeof l[k] === 'number' ? fmt(l[k] as number) : '')).join(' | ')} |`);
  }
  return out.join('\n');
}
