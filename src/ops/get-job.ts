import { scripts } from '../generated/scripts.js';
import type { JobRecord } from '../job.js';
import { jobOrNull } from './job-row.js';
import type { ScriptOp } from './op.js';

/** Job `id`, or null when there is no such job (lua/get-job.lua). */
export function getJobOp<Payload = unknown>(id: string): ScriptOp<JobRecord<Payload> | null> {
  return { script: scripts.getJob, args: [id], read: (reply) => jobOrNull<Payload>(id, reply, 'getJob') };
}
