import { InvalidArgumentError, PartitionError, shown } from '../errors.js';

/**
 * What joins a partitioned queue's name and a partition's index: `mail~3`. No valid queue name
 * holds it, so no queue of a user's is ever a partition (docs/design.md, "Partitioned queues").
 */
export const PARTITION_SEPARATOR = '~';

/** The most partitions a queue may have. */
export const MAX_PARTITIONS = 1024;

/**
 * The registry's record of partitioned queues (a hash: name -> count of partitions). Its hash tag
 * is the registry set's whole name, so both live in the registry's one slot and a script updates
 * them together.
 */
export const PARTITIONS_REGISTRY = '{emq:queues}:partitions';

const PARTITION_NAME = /^([A-Za-z0-9._-]{1,128})~(0|[1-9][0-9]{0,3})$/;

/** Throws InvalidArgumentError unless `count` is a count of partitions: an integer from 1 to MAX_PARTITIONS. */
export function assertPartitions(count: unknown): asserts count is number {
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1 || count > MAX_PARTITIONS) {
    throw new InvalidArgumentError(`partitions must be an integer from 1 to ${MAX_PARTITIONS}, got ${shown(count)}`);
  }
}

/**
 * The name of partition `index` of queue `queue`: a queue of its own, with every key in its own
 * cluster slot.
 *
 * @example
 * partitionName('mail', 3) // 'mail~3'
 */
export function partitionName(queue: string, index: number): string {
  return `${queue}${PARTITION_SEPARATOR}${index}`;
}

/**
 * The queue and index a partition's name stands for, or undefined for any other name.
 *
 * @example
 * parsePartitionName('mail~3') // { queue: 'mail', index: 3 }
 */
export function parsePartitionName(name: string): { queue: string; index: number } | undefined {
  const match = PARTITION_NAME.exec(name);
  return match ? { queue: match[1]!, index: Number(match[2]) } : undefined;
}

const encoder = new TextEncoder();

/**
 * The partition of `count` that `key` (a group, or a job's id) always goes to: FNV-1a (32 bits)
 * of its UTF-8 bytes, mod `count`. Stable across processes, runtimes and versions: a group's jobs
 * stay in one partition, so its order and limits hold (the contract: changing it moves groups).
 *
 * @example
 * partitionOf('tenant-7', 8) // always the same index from 0 to 7
 */
export function partitionOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(key)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/**
 * Throws PartitionError unless job `jobId`, in partition `from` of queue `name` (of `count`
 * partitions), may move to `group`: only within its partition.
 */
export function assertMovable(name: string, jobId: string, from: number, group: string, count: number): void {
  const target = partitionOf(group, count);
  if (target === from) return;
  throw new PartitionError(
    `job ${jobId} is in partition ${from} of ${name} and group ${group} lives in partition ${target}: a job cannot move across partitions; remove it and add it again with group ${group}`,
    { jobId },
  );
}
