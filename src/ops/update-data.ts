import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import { doneOrThrow, type ScriptOp } from './op.js';

/** Replaces the payload (JSON text) of waiting job `id`: 1 replaced, 0 no such job, -1 not waiting (lua/update-data.lua). */
export function updateDataOp(id: string, payload: string): ScriptOp<number> {
  return {
    script: scripts.updateData,
    args: [id, payload],
    read: (reply) => asNumber(reply, 'updateData'),
  };
}

/** Throws the error table's error for updateDataOp's refusals: JobNotFoundError (0), JobStateError (-1). */
export function checkUpdateData(code: number, jobId: string): void {
  doneOrThrow(code, jobId, 'waiting (pending or scheduled)');
}
