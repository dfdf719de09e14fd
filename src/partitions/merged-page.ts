import type { JobRecord, JobState } from '../job.js';

/** The most rows one partition's page read asks for (getJobs' own cap). */
const PAGE_CHUNK = 1000;

/**
 * Whether job `a` comes before `b` in `state`'s order across partitions (Queue.getJobs): pending
 * ungrouped work first (by priority, then creation), then the groups by name (a group is in one
 * partition, so its lane keeps its own order); scheduled by due time, active by lease deadline,
 * waiting longest first, completed and dead most recent first.
 */
export function orderOf(state: JobState): (a: JobRecord<unknown>, b: JobRecord<unknown>) => number {
  switch (state) {
    case 'pending':
      return (a, b) => {
        if (a.group !== b.group) {
          if (a.group === undefined) return -1;
          if (b.group === undefined) return 1;
          return a.group < b.group ? -1 : 1;
        }
        return a.group === undefined ? a.priority - b.priority || a.createdAt - b.createdAt : 0;
      };
    case 'scheduled':
      return (a, b) => (a.runAt ?? 0) - (b.runAt ?? 0);
    case 'active':
      return (a, b) => (a.leaseUntil ?? 0) - (b.leaseUntil ?? 0);
    case 'waiting':
      return (a, b) => a.createdAt - b.createdAt;
    default:
      return (a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0);
  }
}

/**
 * One page of several ordered lists merged: each list's first `offset + limit` rows read (in
 * reads of at most 1000), merged head by head (each list keeps its own order, `order` decides
 * between heads), then the page cut. A list's read that comes back short is its end.
 *
 * @example
 * const page = await mergedPage(parts.length, (i, offset, limit) => parts[i]!.getJobs('dead', { offset, limit }), orderOf('dead'), { offset: 0, limit: 50 });
 */
export async function mergedPage<T>(
  lists: number,
  read: (list: number, offset: number, limit: number) => Promise<T[]>,
  order: (a: T, b: T) => number,
  page: { offset: number; limit: number },
): Promise<T[]> {
  const want = page.offset + page.limit;
  const heads = await Promise.all(
    Array.from({ length: lists }, async (_, i) => {
      const rows: T[] = [];
      while (rows.length < want) {
        const asked = Math.min(PAGE_CHUNK, want - rows.length);
        const got = await read(i, rows.length, asked);
        rows.push(...got);
        if (got.length < asked) break;
      }
      return rows;
    }),
  );
  const at = heads.map(() => 0);
  const out: T[] = [];
  while (out.length < want) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      if (at[i]! >= heads[i]!.length) continue;
      if (best < 0 || order(heads[i]![at[i]!]!, heads[best]![at[best]!]!) < 0) best = i;
    }
    if (best < 0) break;
    out.push(heads[best]![at[best]!++]!);
  }
  return out.slice(page.offset);
}
