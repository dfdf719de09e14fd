/**
 * The Upstash REST API's wire format, as @upstash/redis speaks it: a command is a JSON array
 * `["SET", "k", "v"]`; a reply is `{result}` or `{error}`; with `Upstash-Encoding: base64` every
 * string in a result is base64 except a bare "OK". See
 * https://upstash.com/docs/redis/features/restapi.
 */
import type { Reply } from '../../transport.js';
import { toReply, type Spelling } from '../ioredis-reply.js';

/** One command as it goes to Redis: the name upper-cased, every argument a string. */
export interface RestCommand {
  readonly name: string;
  readonly args: readonly string[];
}

/** One entry of a reply body: a result is the core's Reply, as JSON carries it. */
export type RestReply = { result: Reply } | { error: string };

/** A request the REST API refuses before Redis sees it. */
export class RestRequestError extends Error {}

const SEE = 'See https://upstash.com/docs/redis/overall/rediscompatibility for details';

/** Upstash's words for a command its REST API does not serve. */
export const unavailable = (what: string): string => `ERR Command is not available: '${what}'. ${SEE}`;

/**
 * Commands a stateless HTTP request cannot carry: blocking ones (an edge runtime cannot hold
 * them, and the bridge's one shared connection must never stall), pub/sub and MONITOR (they
 * take the connection over), and connection or transaction state (SELECT, WATCH, MULTI...)
 * that would leak from one request into the next.
 */
const REFUSED = new Set([
  'BLPOP', 'BRPOP', 'BRPOPLPUSH', 'BLMOVE', 'BLMPOP', 'BZPOPMIN', 'BZPOPMAX', 'BZMPOP', 'WAIT', 'WAITAOF',
  'SUBSCRIBE', 'PSUBSCRIBE', 'SSUBSCRIBE', 'UNSUBSCRIBE', 'PUNSUBSCRIBE', 'SUNSUBSCRIBE', 'MONITOR',
  'SELECT', 'AUTH', 'HELLO', 'QUIT', 'RESET', 'CLIENT', 'SYNC', 'PSYNC', 'REPLICAOF', 'SLAVEOF',
  'MULTI', 'EXEC', 'DISCARD', 'WATCH', 'UNWATCH',
]);

/** Why `command` is refused, or undefined when Redis may run it. */
export function refusal(command: RestCommand): string | undefined {
  if (REFUSED.has(command.name)) return unavailable(command.name);
  if (command.name === 'XREAD' || command.name === 'XREADGROUP') {
    // only the blocking form is refused; BLOCK comes before the STREAMS keyword
    for (const arg of command.args) {
      const word = arg.toUpperCase();
      if (word === 'STREAMS') break;
      if (word === 'BLOCK') return unavailable(`${command.name} BLOCK`);
    }
  }
  return undefined;
}

/** Reads one command from a request body (already JSON-parsed). */
export function parseCommand(body: unknown): RestCommand {
  if (!Array.isArray(body) || body.length === 0) {
    throw new RestRequestError('ERR a command is a non-empty JSON array: ["COMMAND", "arg1", ...]');
  }
  const words = body.map((part: unknown) => {
    if (typeof part === 'string') return part;
    // @upstash/redis sends numbers and booleans as JSON values; Redis takes them as text
    if (typeof part === 'number' || typeof part === 'boolean') return String(part);
    throw new RestRequestError(`ERR command arguments must be strings, numbers or booleans, got ${JSON.stringify(part)}`);
  });
  const [name, ...args] = words;
  if (!name) throw new RestRequestError('ERR empty command name');
  return { name: name.toUpperCase(), args };
}

/** Reads the commands of a /pipeline or /multi-exec body. */
export function parseCommands(body: unknown): RestCommand[] {
  if (!Array.isArray(body) || body.length === 0) {
    throw new RestRequestError('ERR a pipeline is a non-empty JSON array of commands: [["SET", "k", "v"], ...]');
  }
  return body.map((command: unknown) => parseCommand(command));
}

const OK = Buffer.from('OK');

/**
 * How bulk strings are written in a reply body: as text, or with base64 every string but a
 * top-level "OK", "OK" included inside arrays: the client base64-decodes every string of a
 * top-level array unconditionally, so an unencoded "OK" there would come back garbled, while
 * deeper down it decodes "T0s=" and "OK" alike.
 */
const spelling = (base64: boolean): Spelling =>
  base64 ? (bulk, top) => (top && bulk.equals(OK) ? 'OK' : bulk.toString('base64')) : (bulk) => bulk.toString('utf8');

/**
 * Reads a Redis reply (from ioredis with Buffer replies) as a reply body carries it, base64 or not.
 *
 * @example
 * replyReader(true)([Buffer.from('OK'), 1]); // ['T0s=', 1]
 */
export function replyReader(base64: boolean): (reply: unknown) => Reply {
  const spell = spelling(base64);
  return (reply) => toReply(reply, spell);
}

/** One command's reply, or the Error Redis answered, as a reply entry. */
export function toRestReply(reply: Reply | Error): RestReply {
  return reply instanceof Error ? { error: reply.message } : { result: reply };
}
