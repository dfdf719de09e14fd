import type { Impl } from './context.js';

/** One goal of issue 6: a figure of a case, judged against the anchor in the same run or a bound. */
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

/** The goals table of issue 6, row by row. */
export const GOALS: readonly Goal[] = [
  { case: 'process-c100', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 2.5, text: '>= 2.5x BullMQ' },
  { case: 'process-c10', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 2, text: '>= 2x BullMQ' },
  { case: 'process-c1', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 1.5, text: '>= 1.5x BullMQ' },
  { case: 'enqueue-single', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 1.5, text: '>= 1.5x BullMQ' },
  { case: 'enqueue-bulk', figure: 'jobs_per_s', better: 'higher', anchor: 'bullmq', minRatio: 3, text: '>= 3x BullMQ' },
  { case: 'process-c100', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c10', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c1', figure: 'commands_per_job', better: 'lower', anchor: 'bullmq', bound: 8, text: '<= 8' },
  { case: 'process-c100', figure: 'round_trips_per_job', better: 'lower', anchor: 'bullmq', bound: 0.25, text: '<= 0.25' },
  { case: 'wake-latency', figure: 'p50_ms', better: 'lower', anchor: 'bullmq', bound: 0.4, text: '<= 0.4 ms' },
  { case: 'wake-latency', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 2, text: '<= 2 ms' },
  { case: 'delayed-burst', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 20, text: 'lateness p99 <= 20 ms' },
  { case: 'delayed-spread', figure: 'p99_ms', better: 'lower', anchor: 'bullmq', bound: 10, text: 'lateness p99 <= 10 ms' },
  { case: 'stall-recovery', figure: 'recover_ms', better: 'lower', anchor: 'bullmq', bound: 2_100, text: '<= lease + 100 ms (2100)' },
  { case: 'edge-busy', figure: 'requests_per_job', better: 'lower', anchor: 'echomq', bound: 0.1, text: '<= 0.1' },
  { case: 'edge-idle', figure: 'requests_per_beat', better: 'lower', anchor: 'echomq', bound: 1, text: '<= 1' },
  { case: 'memory', figure: 'bytes_per_job', better: 'lower', anchor: 'bullmq', minRatio: 1, text: "<= BullMQ's" },
  { case: 'groups-c10', figure: 'jobs_per_s', better: 'higher', anchor: 'groupmq', minRatio: 2, text: '>= 2x groupmq' },
  { case: 'groups-c1', figure: 'jobs_per_s', better: 'higher', anchor: 'groupmq', text: '(no goal)' },
  { case: 'groups-c10', figure: 'commands_per_job', better: 'lower', anchor: 'groupmq', text: '(no goal)' },
  { case: 'fairness-c1', figure: 'small_first_max_pos', better: 'lower', anchor: 'groupmq', bound: 11, text: '<= 11' },
  { case: 'fairness-c1', figure: 'small_wait_p99_ms', better: 'lower', anchor: 'groupmq', bound: 20, text: '<= 20 ms' },
  { case: 'idle-slots', figure: 'commands_per_s', better: 'lower', anchor: 'groupmq', bound: 5, text: '~0 (<= 5/s: one beat per 5 s, one renewal per lease/3)' },
];

/** One JSON line of a run. */
export interface Line {
  readonly case: string;
  readonly impl: Impl;
  readonly [figure: string]: number | null | string;
}

/** How a goal came out: echomq's figure, the anchor's, the ratio (> 1 = echomq better) and whether it holds. */
export interface Verdict {
  readonly goal: Goal;
  readonly echomq: number | null;
  readonly anchor: number | null;
  readonly ratio: number | null;
  readonly holds: boolean | null;
}

export function judge(goal: Goal, lines: readonly Line[]): Verdict {
  const figure = (impl: Impl): number | null => {
    const v = lines.find((l) => l.case === goal.case && l.impl === impl)?.[goal.figure];
    return typeof v === 'number' ? v : null;
  };
  const echomq = figure('echomq');
  const anchor = goal.anchor === 'echomq' ? null : figure(goal.anchor);
  let ratio: number | null = null;
  if (echomq !== null && anchor !== null) {
    if (goal.better === 'higher') ratio = anchor === 0 ? null : echomq / anchor;
    else ratio = echomq === 0 ? (anchor === 0 ? 1 : Infinity) : anchor / echomq;
  }
  let holds: boolean | null = null;
  if (goal.minRatio !== undefined) holds = ratio === null ? null : ratio >= goal.minRatio;
  if (goal.bound !== undefined && echomq !== null) {
    holds = goal.better === 'higher' ? echomq >= goal.bound : echomq <= goal.bound;
  }
  return { goal, echomq, anchor, ratio, holds };
}

const fmt = (v: number | null): string => {
  if (v === null) return '-';
  if (!Number.isFinite(v)) return 'inf';
  if (Math.abs(v) >= 100) return String(Math.round(v));
  if (Math.abs(v) >= 0.1 || v === 0) return String(Math.round(v * 100) / 100);
  return String(Number(v.toPrecision(2)));
};

/** The markdown table: one row per goal whose case ran. Ratio > 1 means echomq is better. */
export function goalTable(lines: readonly Line[]): string {
  const rows = GOALS.filter((g) => lines.some((l) => l.case === g.case)).map((g) => judge(g, lines));
  const out = [
    '| case | figure | echomq | anchor | ratio (x better) | goal | holds |',
    '|---|---|---:|---:|---:|---|---|',
  ];
  for (const v of rows) {
    const anchor = v.goal.anchor === 'echomq' ? '-' : `${fmt(v.anchor)} (${v.goal.anchor})`;
    const holds = v.holds === null ? '-' : v.holds ? 'yes' : 'no';
    out.push(`| ${v.goal.case} | ${v.goal.figure} | ${fmt(v.echomq)} | ${anchor} | ${v.ratio === null ? '-' : fmt(v.ratio) + 'x'} | ${v.goal.text} | ${holds} |`);
  }
  return out.join('\n');
}

/** Every figure of every line, one row per case and implementation. */
export function figuresTable(lines: readonly Line[]): string {
  const names = [...new Set(lines.flatMap((l) => Object.keys(l).filter((k) => k !== 'case' && k !== 'impl')))];
  const out = [`| case | impl | ${names.join(' | ')} |`, `|---|---|${names.map(() => '---:').join('|')}|`];
  for (const l of lines) {
    out.push(`| ${l.case} | ${l.impl} | ${names.map((k) => (typeof l[k] === 'number' ? fmt(l[k] as number) : '')).join(' | ')} |`);
  }
  return out.join('\n');
}
