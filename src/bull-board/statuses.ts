/**
 * echomq's job states as bull-board's statuses: the one mapping the adapter's counts, listings and
 * `job.getState()` share (docs/guides/bull-board.md, "States"). Each bull-board status counts the
 * cells of `GET /v1/queues` it stands for, so the board's numbers are the API's, summed where two
 * echomq states share one status.
 */
import type { JobState, QueueCounts } from '../job.js';

/** The bull-board statuses the adapter shows, in the board's order (bull-board's `JobStatus`, less `prioritized` and `paused`). */
export const BOARD_STATUSES = ['active', 'waiting', 'waiting-children', 'completed', 'failed', 'delayed'] as const;

/** A bull-board status the adapter shows. */
export type BoardStatus = (typeof BOARD_STATUSES)[number];

/** The board's count of each status it shows. */
export type BoardCounts = Record<BoardStatus, number>;

/**
 * The echomq states each bull-board status lists, in the order they are listed: `failed` is dead
 * then cancelled (so the board's Retry all meets every dead job before a cancelled one, which it
 * cannot retry), `delayed` is scheduled then awaiting (a job waiting for an event, with its
 * timeout). A priority does not move a job out of `waiting`: echomq keeps one pending state.
 */
export const STATES_OF: Readonly<Record<BoardStatus, readonly JobState[]>> = {
  active: ['active'],
  waiting: ['pending'],
  'waiting-children': ['waiting'],
  completed: ['completed'],
  failed: ['dead', 'cancelled'],
  delayed: ['scheduled', 'awaiting'],
};

/**
 * The bull-board status of an echomq state.
 *
 * @example
 * boardStatusOf('dead'); // 'failed'
 */
export function boardStatusOf(state: JobState): BoardStatus {
  switch (state) {
    case 'pending':
      return 'waiting';
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
 * The board's counts from a queue's counts (`queue.stats().counts`, the cells of `GET /v1/queues`):
 * each status the sum of its states' cells. `completed` is echomq's counter of jobs completed since
 * the queue began, as the API's; `sleeping` is inside `scheduled` already.
 *
 * @example
 * boardCountsOf((await queue.stats()).counts).failed; // dead + cancelled
 */
export function boardCountsOf(counts: QueueCounts): BoardCounts {
  const out = {} as BoardCounts;
  for (const status of BOARD_STATUSES) out[status] = STATES_OF[status].reduce((sum, state) => sum + counts[state], 0);
  return out;
}

/** Whether `value` is a status the adapter shows. */
export function isBoardStatus(value: string): value is BoardStatus {
  return (BOARD_STATUSES as readonly string[]).includes(value);
}
