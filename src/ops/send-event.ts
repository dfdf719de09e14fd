import { scripts } from '../generated/scripts.js';
import type { SentEvent } from '../steps/steps.js';
import { asArray, asNumber, asString } from './reply.js';
import type { ScriptOp } from './op.js';

/** Sends event `name` with `data` (JSON text) to the queue's waiting jobs, kept `keepMs` (lua/send-event.lua). */
export function sendEventOp(name: string, data: string, id: string, keepMs: number): ScriptOp<SentEvent> {
  return {
    script: scripts.sendEvent,
    args: [name, data, id, keepMs],
    read: (reply) => {
      const [eventId, resumed] = asArray(reply, 'send-event');
      return { id: asString(eventId, 'event id'), resumed: asNumber(resumed, 'resumed') };
    },
  };
}
