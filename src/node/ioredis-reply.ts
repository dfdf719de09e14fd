import type { Reply } from '../transport.js';

// What ioredis answers, read as the core's Reply: the one reading the transport and the REST
// bridge share.

/**
 * A reply of `call` (text, RESP2) as it is: a script's answer arrives as strings, numbers, null
 * and arrays of them, Reply's own shape, so it is taken without a copy (it is on every round trip).
 */
export const asReply = (value: unknown): Reply => value as Reply;

/** How a bulk string that came as bytes is written: `top` when it is the whole reply, not inside an array. */
export type Spelling = (bulk: Buffer, top: boolean) => string;

/**
 * A reply of `callBuffer` (bulk strings as Buffers) as a Reply, each bulk string as `spell`
 * writes it. A RESP3 map or set, should the connection speak RESP3, is flattened as RESP2 sends
 * it; an error inside an array is its message.
 *
 * @example
 * toReply([Buffer.from('a'), 1, null], (bulk) => bulk.toString('utf8')); // ['a', 1, null]
 */
export function toReply(value: unknown, spell: Spelling, top = true): Reply {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (Buffer.isBuffer(value)) return spell(value, top);
  if (typeof value === 'string') return spell(Buffer.from(value, 'utf8'), top);
  if (value instanceof Map) return [...value].flat().map((v: unknown) => toReply(v, spell, false));
  if (value instanceof Set) return [...value].map((v: unknown) => toReply(v, spell, false));
  if (Array.isArray(value)) return value.map((v: unknown) => toReply(v, spell, false));
  if (value instanceof Error) return toReply(value.message, spell, top);
  return toReply(String(value), spell, top);
}

/**
 * A pipeline's (or transaction's) `[error, value]` per command as one reply each: the Error Redis
 * answered, or the value read by `read` (asReply by default). A null exec (a transaction WATCH
 * discarded) is no replies.
 */
export function settle(results: Array<[Error | null, unknown]> | null, read: (value: unknown) => Reply = asReply): Array<Reply | Error> {
  return (results ?? []).map(([error, value]) => error ?? read(value));
}

/** What a command failed with, as an Error. */
export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
