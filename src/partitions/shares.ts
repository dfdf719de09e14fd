import type { EnqueueOptions, EnqueueResult } from '../job.js';

/** A job's routing keys: its group, its id of the caller's (and its concurrency keys, which a partitioned queue refuses). */
export type Routed = Pick<EnqueueOptions, 'group' | 'id' | 'keys'>;

/**
 * The jobs of a bulk enqueue by the partition each goes to (`partitionOf` a job's routing keys and
 * its index), each with its index in the call, so the answers go back in the call's order.
 *
 * @example
 * const shares = sharesOf(jobs, (job) => queue.partitionFor(job)); // Map { 3 => [{ index: 0, job }] }
 */
export function sharesOf<Job>(jobs: readonly Job[], partitionOf: (routed: Routed, index: number) => number): Map<number, Array<{ index: number; job: Job }>> {
  const shares = new Map<number, Array<{ index: number; job: Job }>>();
  jobs.forEach((job, index) => {
    const routed = typeof job === 'object' && job !== null ? (job as Routed) : {};
    const i = partitionOf(routed, index);
    let share = shares.get(i);
    if (!share) shares.set(i, (share = []));
    share.push({ index, job });
  });
  return shares;
}

/**
 * Sends each share to its partition at once (`add(i, jobs)`, one round trip each) and answers the
 * results in the call's order: `count` jobs in all.
 */
export async function addShares<Job>(
  shares: Map<number, Array<{ index: number; job: Job }>>,
  count: number,
  add: (partition: number, jobs: Job[]) => Promise<EnqueueResult[]>,
): Promise<EnqueueResult[]> {
  const out = new Array<EnqueueResult>(count);
  await Promise.all(
    [...shares].map(async ([i, share]) => {
      const results = await add(i, share.map((s) => s.job));
      share.forEach((s, j) => (out[s.index] = results[j]!));
    }),
  );
  return out;
}
