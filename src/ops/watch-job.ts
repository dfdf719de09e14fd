import { scripts } from '../generated/scripts.js';
import type { JobRecord } from '../job.js';
import { asArray, asString } from './reply.js';
import { jobOrNull } from './job-row.js';
import type { ScriptOp } from './op.js';

/** Where a waiter starts: the stream's last entry id, whether events are on, the job. */
export interface WatchStart {
  /** The stream's last entry id, `'0'` when it has none. */
  readonly last: string;
  /** False when the queue's events are off (`maxLen` 0): nothing appends to the stream. */
  readonly eventsOn: boolean;
  /** The job as getJob reads it, null when there is none (or no id was asked). */
  readonly job: JobRecord<unknown> | null;
}

/** The stream's last entry id, whether events are on, and job `id` ('' for none), read at one instant (lua/watch-job.lua). */
export function watchJobOp(id: string): ScriptOp<WatchStart> {
  return {
    script: scripts.watchJob,
    args: [id],
    read: (reply) => {
      const [last, cap, row] = asArray(reply, 'watchJob');
      return { last: asString(last, 'watchJob last'), eventsOn: asString(cap, 'watchJob cap') !== '0', job: jobOrNull(id, row ?? [], 'watchJob row') };
    },
  };
}
