/**
 * bull-board's Add job on an echomq queue: which queue writes it, and the board's job options as
 * echomq's enqueue options (docs/guides/bull-board.md, "Add job").
 */
import type { QueueJobOptions } from '@bull-board/api/typings/app';
import type { EnqueueOptions } from '../job.js';
import type { QueueSurface } from '../queue/surface.js';
import { UnsupportedBoardActionError } from './errors.js';

/**
 * What the adapter needs of an `echomq/bullmq` Queue: its echomq queue, and its `add` (BullMQ's
 * name, data and options, checked and translated by that layer).
 */
export interface LayerQueue {
  /** The echomq queue underneath. */
  readonly emq: QueueSurface<unknown>;
  /** BullMQ's add. */
  add(name: string, data: unknown, opts?: QueueJobOptions): Promise<{
    /** The job's id, as that layer shows it. */
    readonly id?: string | undefined;
  }>;
}

/** Whether `queue` is an `echomq/bullmq` Queue (it carries its echomq queue as `emq`). */
export function isLayerQueue(queue: QueueSurface<unknown> | LayerQueue): queue is LayerQueue {
  return 'emq' in queue && typeof queue.add === 'function';
}

/** The board's option names echomq takes on an add, and echomq's name for each. */
const TAKEN: Readonly<Record<string, keyof EnqueueOptions>> = { delay: 'delayMs', attempts: 'maxAttempts', priority: 'priority', jobId: 'id' };

/**
 * The board's job options (BullMQ's names, as its Add job dialog writes them) as echomq's:
 * `delay`, `attempts`, `priority` and `jobId`; any other throws UnsupportedBoardActionError before
 * any write (echomq's own checks then refuse a bad value).
 *
 * @example
 * addOptionsOf({ delay: 1000, attempts: 3 }); // { delayMs: 1000, maxAttempts: 3 }
 */
export function addOptionsOf(options: QueueJobOptions): EnqueueOptions {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options ?? {})) {
    if (value === undefined) continue;
    const taken = TAKEN[name];
    if (!taken) throw new UnsupportedBoardActionError(`the job option ${name}`, `an echomq Queue takes ${Object.keys(TAKEN).join(', ')} here; show an echomq/bullmq Queue for BullMQ's options`);
    out[taken] = value;
  }
  return out as EnqueueOptions;
}
