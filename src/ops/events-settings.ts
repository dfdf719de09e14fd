import type { EventsSettings } from '../events/events.js';
import { scripts } from '../generated/scripts.js';
import type { Reply } from '../transport.js';
import { codes, type ScriptOp } from './op.js';

/** The events settings as the events scripts answer them. */
export function readEventsSettings(reply: Reply, what: string): EventsSettings {
  const [maxLen, resultBytes] = codes(reply, what);
  return { maxLen: maxLen ?? 0, resultBytes: resultBytes ?? 0 };
}

/** The queue's events settings (lua/events-settings.lua). */
export function eventsSettingsOp(): ScriptOp<EventsSettings> {
  return { script: scripts.eventsSettings, args: [], read: (reply) => readEventsSettings(reply, 'eventsSettings') };
}
