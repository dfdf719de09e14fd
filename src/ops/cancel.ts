import { scripts } from '../generated/scripts.js';
import { asArray } from './reply.js';
import { codes, type ScriptOp, strings, type WithOutbox } from './op.js';

/**
 * What a cancel did with one job (lua/cancel.lua): `cancelled` now (it was not running);
 * `cancelling` (it runs: its holder is told, and its settle ends it cancelled); `already` (it was
 * cancelled before: a cancel sent twice answers as the first, or as the run it stopped ended);
 * `finished` (completed or dead: nothing written); `missing` (no such job).
 */
export type CancelCode = 'cancelled' | 'cancelling' | 'already' | 'finished' | 'missing';

const CANCEL_CODES: Record<number, CancelCode> = { 0: 'missing', 1: 'cancelled', 2: 'cancelling', 3: 'already', 4: 'finished' };

/**
 * Cancels jobs `ids` with `reason`. With `parent` (`<queue>|<id>`), only those still that flow
 * parent's children, and told to no parent (a cancelled parent's children, src/flows/flow-relay.ts).
 */
export function cancelOp(ids: readonly string[], reason: string, parent = ''): ScriptOp<WithOutbox<CancelCode[]>> {
  return {
    script: scripts.cancel,
    args: [reason, parent, ...ids],
    read: (reply) => {
      const [done, outbox] = asArray(reply, 'cancel');
      return { value: codes(done ?? [], 'cancel').map((c) => CANCEL_CODES[c] ?? 'missing'), outbox: strings(outbox, 'cancel outbox') };
    },
  };
}
