/**
 * BullMQ's job states and count types, and the echomq states each stands for
 * (docs/design/bullmq-layer.md, "States").
 */
import type { JobState as EmqJobState } from '../job.js';

/** BullMQ's job states. */
export type JobState = 'completed' | 'failed' | 'active' | 'delayed' | 'prioritized' | 'waiting' | 'waiting-children';

/** BullMQ's job types, as getJobs and getJobCounts take them: the states, `paused` and `repeat`, and `wait` for `waiting`. */
export type JobType = JobState | 'paused' | 'repeat' | 'wait';

/** BullMQ's finished states. */
export type FinishedStatus = 'completed' | 'failed';

/** The types getJobCounts answers when asked for none, BullMQ's list. */
export const ALL_TYPES: readonly JobType[] = ['active', 'completed', 'delayed', 'failed', 'prioritized', 'waiting', 'waiting-children'];

/**
 * BullMQ's state for an echomq job: pending is `waiting`, or `prioritized` with a priority;
 * scheduled (a delay, a retry's backoff) is `delayed`; dead and cancelled are `failed`; a flow
 * parent `waiting` for its children is `waiting-children`; a job awaiting an event is `delayed`.
 *
 * @example
 * bullState('scheduled', 0); // 'delayed'
 */
export function bullState(state: EmqJobState, priority: number): JobState {
  switch (state) {
    case 'pending':
      return priority > 0 ? 'prioritized' : 'waiting';
    case 'scheduled':
    case 'awaiting':
      return 'delayed';
    case 'active':
      return 'active';
    case 'completed':
      return 'completed';
    case 'dead':
    case 'cancelled':
      return 'failed';
    case 'waiting':
      return 'waiting-children';
  }
}

/**
 * The echomq states a BullMQ type lists (`paused` and `repeat` none: a paused queue's jobs are
 * `waiting`, as in BullMQ 5+, and schedulers are not jobs here).
 *
 * @example
 * emqStatesOf('failed'); // ['dead', 'cancelled']
 */
export function emqStatesOf(type: JobType): EmqJobState[] {
  switch (type) {
    case 'waiting':
    case 'wait':
    case 'prioritized':
      return ['pending'];
    case 'delayed':
      return ['scheduled'];
    case 'active':
      return ['active'];
    case 'completed':
      return ['completed'];
    case 'failed':
      return ['dead', 'cancelled'];
    case 'waiting-children':
      return ['waiting'];
    case 'paused':
    case 'repeat':
      return [];
  }
}

/** Whether a pending job of `priority` is listed under BullMQ type `type`. */
export function pendingFits(type: JobType, priority: number): boolean {
  if (type === 'prioritized') return priority > 0;
  if (type === 'waiting' || type === 'wait') return priority === 0;
  return true;
}
