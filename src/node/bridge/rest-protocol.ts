/**
 * The Upstash REST API's wire format, as @upstash/redis speaks it: a command is a JSON array
 * `["SET", "k", "v"]`; a reply is `{result}` or `{error}`; with `Upstash-Encoding: base64` every
 * string in a result is base64 except a bare "OK". See
 * https://upstash.com/docs/redis/features/restapi.
 */

/** One command as it goes to Redis: the name upper-cased, every argument a string. */
export interface RestCommand {
  readonly name: string;
  readonly args: readonly string[];
}

/** One entry of a reply body. */
export type RestReply = { result: RestValue } | { error: string };

/** A result as JSON carries it. */
export type RestValue = string | number | null | RestValue[];

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
 * A Redis reply (from ioredis with Buffer replies) as JSON. In base64 mode a top-level "OK"
 * stays as it is and every other string is encoded, inside arrays too, "OK" included: the
 * client base64-decodes every string of a top-level array unconditionally, so an unencoded
 * "OK" there would come back garbled, while deeper down it decodes "T0s=" and "OK" alike.
 */
export function toRestValue(reply: unknown, base64: boolean, top = true): RestValue {
  if (reply === null || reply === undefined) return null;
  if (typeof reply === 'number') return reply;
  if (typeof reply === 'bigint') return Number(reply);
  if (Buffer.isBuffer(reply)) {
    if (!base64) return reply.toString('utf8');
    return top && reply.equals(OK) ? 'OK' : reply.toString('base64');
  }
  if (typeof reply === 'string') return toRestValue(Buffer.from(reply, 'utf8'), base64, top);
  // a RESP3 map or set, should the connection speak RESP3: flattened as RESP2 sends them
  if (reply instanceof Map) return [...reply].flat().map((v: unknown) => toRestValue(v, base64, false));
  if (reply instanceof Set) return [...reply].map((v: unknown) => toRestValue(v, base64, false));
  if (Array.isArray(reply)) return reply.map((v: unknown) => toRestValue(v, base64, false));
  if (reply instanceof Error) return toRestValue(reply.message, base64, top);
  return toRestValue(String(reply), base64, top);
}

/** One settled command as a reply entry. */
export function toRestReply(settled: { error: Error } | { value: unknown }, base64: boolean): RestReply {
  return 'error' in settled ? { error: settled.error.message } : { result: toRestValue(settled.value, base64) };
}
