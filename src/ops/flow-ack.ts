import { scripts } from '../generated/scripts.js';
import { asNumber } from './reply.js';
import type { ScriptOp } from './op.js';

/** Forgets this queue's outbox entries once relayed: how many it removed (lua/flow-ack.lua). */
export function flowAckOp(entries: readonly string[]): ScriptOp<number> {
  return { script: scripts.flowAck, args: entries, read: (reply) => asNumber(reply, 'flowAck') };
}
