import { scripts } from '../generated/scripts.js';
import { asArray, asString } from './reply.js';
import type { StreamEntry } from '../transport.js';
import type { ScriptOp } from './op.js';

/** Whole entries of the events stream after entry id `after` ('0': from the start) while their events fit in `limit`, at least one (lua/read-events.lua). */
export function readEventsOp(after: string, limit: number): ScriptOp<StreamEntry[]> {
  return {
    script: scripts.readEvents,
    args: [after, limit],
    read: (reply) =>
      asArray(reply, 'readEvents').map((entry) => {
        const [id, fields] = asArray(entry, 'readEvents entry');
        return { id: asString(id, 'event id'), fields: asArray(fields, 'event fields').map((f) => asString(f, 'event field')) };
      }),
  };
}
