import { InvalidArgumentError, JobStateError } from '../errors.js';
import { relayOrLeave } from '../flows/flow-relay.js';
import { cleanOp } from '../ops/clean.js';
import { drainOp } from '../ops/drain.js';
import { obliterateOp } from '../ops/obliterate.js';
import { reprocessDeadOp } from '../ops/reprocess-dead.js';
import { unregisterQueueOp } from '../ops/unregister-queue.js';
import type { FinishedState } from '../job.js';
import type { Scripts } from '../ops/scripts.js';
import type { Registrar } from './registration.js';
import type { RequestKeys } from './request-keys.js';

// Admin in bulk (docs/design.md, "Admin in bulk"): each operation runs in chunks, one script call
// each with a request key of its own, so a million-row clean holds Redis a few ms at a time and
// a chunk sent again answers as it did.

/**
 * The most rows one chunk touches (clean, drain, obliterate), and of reprocessDead, whose rows
 * cost about twice a clean's: a few ms of Redis time a call either way (bench/cases/admin-chunks.ts).
 */
const ADMIN_CHUNK = 500;
const REPROCESS_CHUNK = 250;

/** The most rows a bulk admin call may touch: an integer >= 1, or no limit (undefined). */
function bulkLimit(limit: number | undefined): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${String(limit)}`);
  return limit;
}

const relay = (scripts: Scripts, outbox: readonly string[]): Promise<void> => relayOrLeave(scripts.transport, scripts.keys.queue, outbox);

/** Queue.clean: finished jobs at least `olderThanMs` old, oldest first, at most `limit`; their ids. */
export async function clean(scripts: Scripts, keys: RequestKeys, state: FinishedState, options: { olderThanMs?: number; limit?: number }): Promise<string[]> {
  if (state !== 'completed' && state !== 'dead' && state !== 'cancelled') {
    throw new InvalidArgumentError(`clean takes completed, dead or cancelled, got ${JSON.stringify(state)}`);
  }
  const olderThanMs = options.olderThanMs ?? 0;
  if (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0) throw new InvalidArgumentError('olderThanMs must be an integer >= 0');
  const limit = bulkLimit(options.limit);
  const ids: string[] = [];
  let cutoff = -1;
  while (ids.length < limit) {
    const chunk = await scripts.run(cleanOp(state, olderThanMs, cutoff, Math.min(ADMIN_CHUNK, limit - ids.length), keys.admin()));
    cutoff = chunk.cutoff;
    await relay(scripts, chunk.outbox);
    for (const id of chunk.ids) ids.push(id);
    if (!chunk.more) break;
  }
  return ids;
}

/** Queue.drain: the jobs waiting to run, at most `limit`; how many. */
export async function drain(scripts: Scripts, keys: RequestKeys, options: { limit?: number }): Promise<number> {
  const limit = bulkLimit(options.limit);
  let deleted = 0;
  let cursor = '';
  while (deleted < limit && cursor !== 'done') {
    const chunk = await scripts.run(drainOp(Math.min(ADMIN_CHUNK, limit - deleted), cursor, keys.admin()));
    deleted += chunk.deleted;
    cursor = chunk.cursor;
    await relay(scripts, chunk.outbox);
  }
  return deleted;
}

/** Queue.obliterate: the whole queue, then its registration; false when `limit` stopped it first. */
export async function obliterate(scripts: Scripts, registrar: Registrar, options: { force?: boolean; limit?: number }): Promise<boolean> {
  const force = options.force ?? false;
  if (typeof force !== 'boolean') throw new InvalidArgumentError('force must be a boolean');
  const limit = bulkLimit(options.limit);
  for (let deleted = 0; deleted < limit; ) {
    const chunk = await scripts.run(obliterateOp(force, Math.min(ADMIN_CHUNK, limit - deleted)));
    await relay(scripts, chunk.outbox);
    if (chunk.outcome === 'refused') {
      throw new JobStateError(`queue ${scripts.keys.queue} has ${chunk.count} active job(s): obliterate with force to delete them too`);
    }
    if (chunk.outcome === 'done') {
      // a partition leaves its partitioned queue's registration to it (PartitionedQueue.obliterate)
      if (registrar.registration.partitions === 0) await scripts.run(unregisterQueueOp(scripts.keys.queue));
      registrar.forget();
      return true;
    }
    deleted += Math.max(chunk.count, 1);
  }
  return false;
}

/** Queue.reprocessDead: dead jobs back to be claimed, oldest first, at most `limit`; how many. */
export async function reprocessDead(scripts: Scripts, keys: RequestKeys, options: { limit?: number }): Promise<number> {
  const limit = bulkLimit(options.limit);
  let reprocessed = 0;
  while (reprocessed < limit) {
    const chunk = await scripts.run(reprocessDeadOp(Math.min(REPROCESS_CHUNK, limit - reprocessed), keys.admin()));
    reprocessed += chunk.reprocessed;
    await relay(scripts, chunk.outbox);
    if (!chunk.more) break;
  }
  return reprocessed;
}
