import { scripts } from '../generated/scripts.js';
import type { JobRecord } from '../job.js';
import { jobPage } from './job-row.js';
import type { ScriptOp } from './op.js';

/** A page of dead jobs, most recent first (lua/list-dead.lua). */
export function listDeadOp<Payload = unknown>(offset: number, limit: number): ScriptOp<Array<JobRecord<Payload>>> {
  return { script: scripts.listDead, args: [offset, limit], read: (reply) => jobPage<Payload>(reply, 'listDead') };
}
