import type { EnqueueOptions } from '../job.js';

/** A job's routing keys: its group, its id of the caller's. */
export type Routed = Pick<EnqueueOptions, 'group' | 'id'>;

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
