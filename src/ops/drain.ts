import { scripts } from '../generated/scripts.js';
import { asArray, asNumber, asString } from './reply.js';
import { type AdminRequest, type ScriptOp, strings } from './op.js';

/** One chunk of a drain, from `cursor` ("" to start); the reply's cursor is "done" at the end (lua/drain.lua). */
export function drainOp(n: number, cursor: string, request: AdminRequest): ScriptOp<{ deleted: number; cursor: string; outbox: string[] }> {
  return {
    script: scripts.drain,
    args: [n, cursor, request.key, request.ttlMs],
    read: (reply) => {
      const [deleted, next, outbox] = asArray(reply, 'drain');
      return { deleted: asNumber(deleted, 'drain deleted'), cursor: asString(next, 'drain cursor'), outbox: strings(outbox, 'drain outbox') };
    },
  };
}
