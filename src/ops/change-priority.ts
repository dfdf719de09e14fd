import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import { doneOrThrow, type ScriptOp } from './op.js';

/** Gives waiting job `id` (pending or scheduled) another priority: 1 changed, 0 no such job, -1 not waiting (lua/change-priority.lua). */
export function changePriorityOp(id: string, priority: number): ScriptOp<number> {
  return {
    script: scripts.changePriority,
    args: [id, priority],
    read: (reply) => asNumber(reply, 'changePriority'),
  };
}

/** Throws the error table's error for changePriorityOp's refusals: JobNotFoundError (0), JobStateError (-1). */
export function checkChangePriority(code: number, jobId: string): void {
  doneOrThrow(code, jobId, 'waiting (pending or scheduled)');
}
