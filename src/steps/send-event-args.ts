import { encodePayload } from '../encode.js';
import { InvalidArgumentError, shown } from '../errors.js';
import { assertEventName } from './step-records.js';
import { DEFAULT_EVENT_KEEP_MS, MAX_EVENT_KEEP_MS, type SendEventOptions } from './steps.js';

/** A send's id: a job id's alphabet, at most 200. */
const EVENT_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** A `sendEvent` call checked, as lua/send-event.lua takes it: name, data (JSON text), id ('' none), keepMs. */
export function sendEventArgs(name: unknown, data: unknown, options: SendEventOptions | undefined, maxPayloadBytes: number): [string, string, string, number] {
  assertEventName(name);
  const o = options ?? {};
  if (typeof o !== 'object' || o === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  if (o.id !== undefined && (typeof o.id !== 'string' || !EVENT_ID.test(o.id))) {
    throw new InvalidArgumentError(`an event id is 1 to 200 letters, digits, '.', '_', ':' or '-', got ${shown(o.id)}`);
  }
  const keepMs = o.keepMs ?? DEFAULT_EVENT_KEEP_MS;
  if (!Number.isSafeInteger(keepMs) || keepMs < 0 || keepMs > MAX_EVENT_KEEP_MS) {
    throw new InvalidArgumentError(`keepMs must be an integer from 0 to ${MAX_EVENT_KEEP_MS} (7 days), got ${shown(o.keepMs)}`);
  }
  return [name, encodePayload(data === undefined ? null : data, maxPayloadBytes), o.id ?? '', keepMs];
}
