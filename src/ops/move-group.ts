import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import { doneOrThrow, type ScriptOp } from './op.js';

/** Moves pending job `id` into `group`'s lane ('' for none): 1 moved, 0 no such job, -1 not pending (lua/move-group.lua). */
export function moveGroupOp(id: string, group: string): ScriptOp<number> {
  return { script: scripts.moveGroup, args: [id, group], read: (reply) => asNumber(reply, 'moveGroup') };
}

/** Throws the error table's error for moveGroupOp's refusals: JobNotFoundError (0), JobStateError (-1). */
export function checkMoveGroup(code: number, jobId: string): void {
  doneOrThrow(code, jobId, 'pending');
}
