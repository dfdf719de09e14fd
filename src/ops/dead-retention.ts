import { scripts } from '../generated/scripts.js';
import type { DeadRetention } from '../job.js';
import type { Reply } from '../transport.js';
import { codes, nullable, type ScriptOp } from './op.js';

/** The retention of dead jobs as the retention scripts answer it: -1 for no limit of that kind. */
export function readRetention(reply: Reply, what: string): DeadRetention {
  const [age, count] = codes(reply, what);
  return { maxAgeMs: nullable(age ?? -1), maxCount: nullable(count ?? -1) };
}

/** The queue's retention of dead jobs (lua/dead-retention.lua). */
export function deadRetentionOp(): ScriptOp<DeadRetention> {
  return { script: scripts.deadRetention, args: [], read: (reply) => readRetention(reply, 'deadRetention') };
}
