import { RedisError } from '../errors.js';
import type { Reply } from '../transport.js';

/** Readers that turn a raw script reply into typed values, or fail loudly with EMQREDIS. */
export function asArray(reply: Reply | undefined, what: string): Reply[] {
  if (!Array.isArray(reply)) throw new RedisError(`${what}: expected an array reply, got ${JSON.stringify(reply)}`);
  return reply;
}

export function asNumber(reply: Reply | undefined, what: string): number {
  const value = typeof reply === 'string' ? Number(reply) : reply;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new RedisError(`${what}: expected a number reply, got ${JSON.stringify(reply)}`);
  }
  return value;
}

export function asString(reply: Reply | undefined, what: string): string {
  if (typeof reply === 'number') return String(reply);
  if (typeof reply !== 'string') throw new RedisError(`${what}: expected a string reply, got ${JSON.stringify(reply)}`);
  return reply;
}

/** A flat field/value list as a record. */
export function asRecord(reply: Reply | undefined, what: string): Record<string, string> {
  const list = asArray(reply, what);
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) record[asString(list[i], what)] = asString(list[i + 1], what);
  return record;
}
