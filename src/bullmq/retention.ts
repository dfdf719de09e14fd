/**
 * BullMQ's `removeOnComplete` / `removeOnFail` (true, a count, or `{ age, count }`), applied by the
 * Worker after a job finishes, before it emits `completed` or `failed` (docs/guides/bullmq.md).
 */
import { JobNotFoundError } from '../errors.js';
import type { QueueSurface } from '../queue/surface.js';
import type { Envelope } from './envelope.js';
import type { KeepJobs } from './options.js';

/** A removeOnComplete / removeOnFail rule as BullMQ takes it. */
export type KeepRule = boolean | number | KeepJobs | undefined;

/** The rows a trim lists at once. */
const PAGE = 1000;

/**
 * Applies `rule` after job `id` ended in `state`: true deletes it, a count keeps the newest that
 * many of the state, `{ age }` deletes those finished more than `age` seconds ago (then `count`).
 *
 * @example
 * await applyRetention(emq, 'completed', 'JOB:7', { count: 100 });
 */
export async function applyRetention(emq: QueueSurface<Envelope>, state: 'completed' | 'dead', id: string, rule: KeepRule): Promise<void> {
  if (rule === undefined || rule === false) return;
  if (rule === true) return removeQuietly(emq, id);
  const keep: KeepJobs = typeof rule === 'number' ? { count: rule } : rule;
  if (keep.age !== undefined) await emq.clean(state, { olderThanMs: keep.age * 1000 });
  if (keep.count !== undefined) {
    if (keep.count <= 0) return removeQuietly(emq, id);
    for (;;) {
      // the state's listing is newest first: what is past `count` is the oldest
      const past = await emq.getJobs(state, { offset: keep.count, limit: PAGE });
      for (const r of past) await removeQuietly(emq, r.id);
      if (past.length < PAGE) return;
    }
  }
}

async function removeQuietly(emq: QueueSurface<Envelope>, id: string): Promise<void> {
  try {
    await emq.remove(id);
  } catch (error) {
    if (!(error instanceof JobNotFoundError)) throw error;
  }
}
