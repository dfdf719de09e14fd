import { InvalidArgumentError, JobStateError } from '../errors.js';
import type { FinishedState, QueueCounts } from '../job.js';
import type { QueuePartition } from '../queue/surface.js';
import { sum } from './combine.js';
import { everyPartition } from './every-partition.js';

/**
 * Admin in bulk over a partitioned queue's partitions: each call on every partition, at once
 * without a limit, partition after partition with one (docs/design.md, "Partitioned queues").
 */

/** Deletes finished jobs of every partition, at most `limit` in all: their ids, oldest first within a partition. */
export async function cleanAll(parts: readonly QueuePartition[], state: FinishedState, options: { olderThanMs?: number; limit?: number }): Promise<string[]> {
  if (state !== 'completed' && state !== 'dead') throw new InvalidArgumentError(`clean takes completed or dead, got ${JSON.stringify(state)}`);
  const { olderThanMs, limit } = options;
  const results = await everyPartition(
    parts,
    limit,
    (part, left) => part.clean(state, { ...(olderThanMs === undefined ? {} : { olderThanMs }), ...(left === undefined ? {} : { limit: left }) }),
    (ids) => ids.length,
  );
  return results.flat();
}

/** Drains every partition (`drain`), or puts back its dead (`reprocessDead`), at most `limit` in all: how many. */
export async function countedAll(parts: readonly QueuePartition[], what: 'drain' | 'reprocessDead', options: { limit?: number }): Promise<number> {
  return sum(await everyPartition(parts, options.limit, (part, left) => part[what](left === undefined ? {} : { limit: left }), (n) => n));
}

/**
 * Deletes every partition; true once all are gone (the caller then unregisters the name). Without
 * `force`, refused with JobStateError, nothing deleted, while any partition has active jobs. With
 * `limit`, partition after partition, each up to about that many rows: false at the first not yet gone.
 */
export async function obliterateAll(name: string, parts: readonly QueuePartition[], counts: () => Promise<QueueCounts>, options: { force?: boolean; limit?: number }): Promise<boolean> {
  const force = options.force ?? false;
  if (typeof force !== 'boolean') throw new InvalidArgumentError('force must be a boolean');
  if (options.limit !== undefined && (!Number.isSafeInteger(options.limit) || options.limit < 1)) {
    throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(options.limit)}`);
  }
  if (!force) {
    const active = (await counts()).active;
    if (active > 0) throw new JobStateError(`queue ${name} has ${active} active job(s): obliterate with force to delete them too`);
  }
  if (options.limit === undefined) {
    await Promise.all(parts.map((part) => part.obliterate({ force })));
    return true;
  }
  for (const part of parts) if (!(await part.obliterate({ force, limit: options.limit }))) return false;
  return true;
}
