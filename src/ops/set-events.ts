import type { EventsSettings } from '../events/events.js';
import { scripts } from '../generated/scripts.js';
import { readEventsSettings } from './events-settings.js';
import type { ScriptOp } from './op.js';

/** Stores the events settings given (null: left as they are) and answers them all (lua/set-events.lua). */
export function setEventsOp(maxLen: number | null, resultBytes: number | null): ScriptOp<EventsSettings> {
  return { script: scripts.setEvents, args: [maxLen ?? -1, resultBytes ?? -1], read: (reply) => readEventsSettings(reply, 'setEvents') };
}
