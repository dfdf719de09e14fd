import type { CancelJobsResult } from '../queue/cancels.js';
import type { GroupInfo } from '../queue/groups.js';
import type { QueueCounts } from '../job.js';
import type { RateLimit, RateLimits } from '../queue/rate-limits.js';
import type { SentEvent } from '../steps/steps.js';

/** The per-state counts of several partitions, added up. */
export function addCounts(counts: readonly QueueCounts[]): QueueCounts {
  const sum: Record<string, number> = {};
  for (const c of counts) for (const [state, n] of Object.entries(c)) sum[state] = (sum[state] ?? 0) + n;
  return sum as unknown as QueueCounts;
}

/** Several partitions' rate limits as one: the queue's (set alike on every partition), every group's, every throttle soonest first (at most 1000). */
export function mergeRateLimits(all: readonly RateLimits[]): RateLimits {
  const groups: Record<string, RateLimit> = {};
  for (const r of all) Object.assign(groups, r.groups);
  const throttled = all.flatMap((r) => r.throttled).sort((a, b) => a.until - b.until).slice(0, 1000);
  return { queue: all.find((r) => r.queue !== null)?.queue ?? null, groups, throttled };
}

/** Groups sorted by name (a page gathered from several partitions). */
export const sortedByName = (groups: GroupInfo[]): GroupInfo[] => groups.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));

/** True when any of the partitions' answers is (pause, resume: whether any changed). */
export const anyTrue = (answers: readonly boolean[]): boolean => answers.some(Boolean);

/** Sums the partitions' counts (drain, reprocessDead). */
export const sum = (counts: readonly number[]): number => counts.reduce((a, b) => a + b, 0);

/** The partitions' answers to one event sent to each: the id given (else theirs joined by commas), the jobs resumed added up. */
export const combineSent = (sent: readonly SentEvent[], id?: string): SentEvent => ({ id: id ?? sent.map((s) => s.id).join(','), resumed: sum(sent.map((s) => s.resumed)) });

/** The partitions' bulk cancels as one: what each did, added up. */
export const addCancels = (all: readonly CancelJobsResult[]): CancelJobsResult => ({ cancelled: sum(all.map((r) => r.cancelled)), cancelling: sum(all.map((r) => r.cancelling)) });
