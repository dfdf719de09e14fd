import { scripts } from '../generated/scripts.js';
import type { EncodedSchedulerJob } from '../schedulers/schedulers.js';
import { codes, nullable, type ScriptOp } from './op.js';

/** What an upsert writes: the spec as stored, the next slot (-1: none) and the job. */
export interface SchedulerWrite {
  readonly spec: string;
  readonly anchor: number;
  readonly limit: number;
  readonly nextSlot: number;
  readonly job: EncodedSchedulerJob;
}

/**
 * Writes scheduler `id`, fenced on the revision read (-1: it must not exist): the revision written
 * and the next slot stored (null: fires no more), or `{ok: false}` when the row changed meanwhile
 * (lua/upsert-scheduler.lua).
 */
export function upsertSchedulerOp(
  id: string,
  expected: number,
  write: SchedulerWrite,
): ScriptOp<{ ok: true; revision: number; nextSlot: number | null } | { ok: false; revision: number }> {
  const { spec, anchor, limit, nextSlot, job } = write;
  return {
    script: scripts.upsertScheduler,
    args: [id, expected, spec, anchor, limit, nextSlot, job.payload, job.group, job.priority, job.maxAttempts, job.backoff, job.expireAfterMs],
    read: (reply) => {
      const [ok, revision, next] = codes(reply, 'upsertScheduler');
      return ok === 1 ? { ok: true, revision: revision ?? 0, nextSlot: nullable(next ?? -1) } : { ok: false, revision: revision ?? -1 };
    },
  };
}
