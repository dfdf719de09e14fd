import { scripts } from '../generated/scripts.js';
import { asArray, asNumber } from './reply.js';
import { doneOrThrow, type ScriptOp, strings, type WithOutbox } from './op.js';

/** Puts dead job `id` back to be claimed: 1 reprocessed, 0 no such job, -1 not dead; and the flow news it wrote (lua/reprocess.lua). */
export function reprocessOp(id: string): ScriptOp<WithOutbox<number>> {
  return {
    script: scripts.reprocess,
    args: [id],
    read: (reply) => {
      const [code, outbox] = asArray(reply, 'reprocess');
      return { value: asNumber(code, 'reprocess'), outbox: strings(outbox, 'reprocess outbox') };
    },
  };
}

/** Throws the error table's error for reprocessOp's refusals: JobNotFoundError (0), JobStateError (-1). */
export function checkReprocess(code: number, jobId: string): void {
  doneOrThrow(code, jobId, 'dead');
}
