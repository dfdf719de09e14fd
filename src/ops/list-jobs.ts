import { scripts } from '../generated/scripts.js';
import type { JobRecord, JobState } from '../job.js';
import { jobPage } from './job-row.js';
import type { ScriptOp } from './op.js';

/** A page of the jobs in `state`, in that state's order (lua/list-jobs.lua). */
export function listJobsOp<Payload = unknown>(state: JobState, offset: number, limit: number): ScriptOp<Array<JobRecord<Payload>>> {
  return { script: scripts.listJobs, args: [state, offset, limit], read: (reply) => jobPage<Payload>(reply, 'listJobs') };
}
