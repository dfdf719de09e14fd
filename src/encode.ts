import { InvalidArgumentError, PayloadError, PayloadTooLargeError, shown } from './errors.js';
import type { BackoffOptions, DedupeOptions, EnqueueOptions } from './job.js';
import { assertName } from './keyspace.js';

/** The highest priority value: priority * 2^32 + sequence must stay exact in a double. */
export const MAX_PRIORITY = 2_097_151;
/** The default payload cap: 1 MiB of UTF-8 JSON. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
/** The default cap on a handler's result: 64 KiB of UTF-8 JSON. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;
/** The most a progress value may take: 4 KiB of UTF-8 JSON. */
export const MAX_PROGRESS_BYTES = 4096;

const USER_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const JOB_PREFIX = 'JOB:';
const encoder = new TextEncoder();

/** Defaults a queue applies to jobs that do not say. */
export interface JobDefaults {
  /** Attempts per run before a job is dead (default 3). */
  readonly maxAttempts: number;
  /** Backoff between attempts (default exponential from 1 s, capped at 1 hour, jitter 0.2). */
  readonly backoff: BackoffOptions;
}

/** The defaults when the queue is given none: 3 attempts, exponential backoff from 1 s. */
export const DEFAULT_JOB_DEFAULTS: JobDefaults = {
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: 0.2 },
};

/** One job as enqueue.lua takes it in its full form: 16 values (a plain one goes as 2: src/ops/enqueue.ts). */
export type EncodedJob = readonly [
  id: string,
  payload: string,
  group: string,
  delayMs: number,
  runAt: number,
  priority: number,
  maxAttempts: number,
  backoff: string,
  dedupeKey: string,
  dedupeTtlMs: number,
  replace: '1' | '0',
  /** A flow child's parent, `<queue>|<id>|<policy letter>` ('' none: src/flows/flow.ts). */
  parent: string,
  /** A flow parent's children, `<queue>|<id>` joined by `,` ('' none: not a parent). */
  children: string,
  /** The job's own timeout in ms (-1: the consumer's). */
  timeoutMs: number,
  /** Its expiry: `a<ms>` after the add, `t<epoch ms>` at that time, by the server's clock ('' none). */
  expiry: string,
  /** Its concurrency keys, joined by `,` ('' none). */
  keys: string,
];

/** The longest dedupe key, in characters (UTF-16 units, as `string.length` counts). */
export const MAX_DEDUPE_KEY = 256;
const DEDUPE_FIELDS: ReadonlySet<string> = new Set(['key', 'ttlMs', 'replace']);
const CONTROL = /\p{Cc}/u;

/**
 * A job's dedupe option as enqueue.lua takes it: key ('' none), ttlMs (-1: until the job
 * finishes), replace. Throws InvalidArgumentError naming the field for anything else: a key not a
 * string of 1 to 256 characters without control characters, a ttlMs not an integer >= 1, a
 * replace not a boolean, a field it does not know.
 */
export function encodeDedupe(dedupe: DedupeOptions | undefined): readonly [string, number, '1' | '0'] {
  if (dedupe === undefined) return ['', -1, '0'];
  if (typeof dedupe !== 'object' || dedupe === null || Array.isArray(dedupe)) {
    throw new InvalidArgumentError(`dedupe must be an object {key, ttlMs?, replace?}, got ${shown(dedupe)}`);
  }
  for (const field of Object.keys(dedupe)) {
    if (!DEDUPE_FIELDS.has(field)) throw new InvalidArgumentError(`unknown dedupe field ${shown(field)}: dedupe takes key, ttlMs and replace`);
  }
  const { key, ttlMs, replace } = dedupe;
  if (typeof key !== 'string' || key.length < 1 || key.length > MAX_DEDUPE_KEY || CONTROL.test(key)) {
    throw new InvalidArgumentError(`dedupe.key must be 1 to ${MAX_DEDUPE_KEY} characters without control characters, got ${shown(key)}`);
  }
  if (ttlMs !== undefined) intOption('dedupe.ttlMs', ttlMs, 1);
  if (replace !== undefined && typeof replace !== 'boolean') throw new InvalidArgumentError(`dedupe.replace must be a boolean, got ${shown(replace)}`);
  return [key, ttlMs ?? -1, replace === true ? '1' : '0'];
}

const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

function intOption(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!isInt(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${shown(value)}`);
  }
  return value;
}

/**
 * The `JOB:` id for a user's id: `42` and `JOB:42` name the same job.
 * Throws InvalidArgumentError for anything but letters, digits and `._:-` (at most 200), and for
 * a bare `JOB:`. Every id it returns passes the scripts' kind door (`check_kind`: `JOB:` and 1 to
 * 252 more characters), so an id the door would refuse fails here, before any Redis call: an
 * enqueue's queue registration rides in the same round trip, and would be written before the
 * script refused.
 */
export function toJobId(id: unknown): string {
  if (typeof id !== 'string' || !USER_ID.test(id)) {
    throw new InvalidArgumentError(
      `a job id is 1 to 200 letters, digits, '.', '_', ':' or '-', got ${shown(id)}`,
    );
  }
  if (id === JOB_PREFIX) throw new InvalidArgumentError(`a job id needs a name after ${JOB_PREFIX}, got "${id}"`);
  return id.startsWith(JOB_PREFIX) ? id : JOB_PREFIX + id;
}

/**
 * The id of a job a scheduler fired, `JOB:<scheduler>@<slot>`, which no enqueue may give: the
 * scheduler's id and the slot are its two groups (src/schedulers/schedulers.ts `firedBy` reads them).
 */
export const FIRED_JOB_ID = /^JOB:([A-Za-z0-9._-]{1,128})@(\d{1,16})$/;

/**
 * A job id a partition of a partitioned queue generated, `JOB:<seq>~<partition>`, which no enqueue
 * may give: the partition is its second group (docs/design.md, "Partitioned queues").
 */
export const PARTITION_JOB_ID = /^JOB:(\d{1,16})~(\d{1,4})$/;

/**
 * The `JOB:` id of a job to look up or act on (get, remove, reprocess, wait for...): a user's id
 * as toJobId takes it, the id of a job a scheduler fired (`JOB:<scheduler>@<slot>`), or one a
 * partition generated (`JOB:<seq>~<partition>`).
 */
export function jobIdOf(id: unknown): string {
  return typeof id === 'string' && (FIRED_JOB_ID.test(id) || PARTITION_JOB_ID.test(id)) ? id : toJobId(id);
}

/** The payload as JSON text, within `maxBytes` of UTF-8. */
export function encodePayload(payload: unknown, maxBytes: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (error) {
    throw new PayloadError(`the payload is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined) {
    throw new PayloadError(`the payload is not JSON-serialisable (${typeof payload})`);
  }
  const bytes = bytesOver(text, maxBytes);
  if (bytes !== undefined) throw new PayloadTooLargeError(`the payload is ${bytes} bytes, over the cap of ${maxBytes}`);
  return text;
}

/** The UTF-8 length of `text` when it is over `maxBytes`, else undefined. */
export function bytesOver(text: string, maxBytes: number): number | undefined {
  // Every UTF-16 unit is at most 3 UTF-8 bytes: only count when the text could be over the cap.
  if (text.length * 3 <= maxBytes) return undefined;
  const bytes = encoder.encode(text).byteLength;
  return bytes > maxBytes ? bytes : undefined;
}

/**
 * A handler's resolved value as the JSON text its row keeps (`r`), or undefined when it resolved
 * undefined (no result). Throws PayloadError (EMQPAYLOAD) for a value JSON cannot carry (a BigInt,
 * a cycle, a function, a symbol) and PayloadTooLargeError (EMQTOOLARGE) over `maxBytes` of UTF-8,
 * each naming the size or the reason.
 *
 * @example
 * encodeResult({ sent: 3 }, 65_536); // '{"sent":3}'
 */
export function encodeResult(value: unknown, maxBytes: number): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new PayloadError(`the handler's result is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined) throw new PayloadError(`the handler's result is not JSON-serialisable (${typeof value})`);
  const bytes = bytesOver(text, maxBytes);
  if (bytes !== undefined) throw new PayloadTooLargeError(`the handler's result is ${bytes} bytes of JSON, over maxResultBytes (${maxBytes})`);
  return text;
}

/**
 * A progress value as the JSON text its row keeps (`pg`): a number from 0 to 100, or any other
 * JSON value (a string, an object, an array, a boolean, null) of at most 4 KiB as JSON. Throws
 * InvalidArgumentError for anything else: undefined, a number out of range or not finite, a value
 * JSON cannot carry, one over 4 KiB.
 *
 * @example
 * encodeProgress(42); // '42'
 * encodeProgress({ page: 3, of: 10 }); // '{"page":3,"of":10}'
 */
export function encodeProgress(value: unknown): string {
  if (typeof value === 'number' && !(value >= 0 && value <= 100)) {
    throw new InvalidArgumentError(`progress as a number must be from 0 to 100, got ${shown(value)}`);
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new InvalidArgumentError(`progress must be a JSON value: ${(error as Error).message}`);
  }
  if (text === undefined) throw new InvalidArgumentError(`progress must be a number from 0 to 100 or a JSON value, got ${shown(value)}`);
  const bytes = bytesOver(text, MAX_PROGRESS_BYTES);
  if (bytes !== undefined) throw new InvalidArgumentError(`progress is ${bytes} bytes of JSON, over the cap of ${MAX_PROGRESS_BYTES}`);
  return text;
}

/** The backoff spec as retry.lua reads it: `<f|e>,<delayMs>,<capMs>,<jitter>`. */
export function encodeBackoff(backoff: number | BackoffOptions): string {
  const options: BackoffOptions =
    typeof backoff === 'number' ? { type: 'fixed', delayMs: backoff, jitter: 0 } : backoff;
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('backoff must be a delay in ms or {type, delayMs, maxDelayMs?, jitter?}');
  }
  if (options.type !== 'fixed' && options.type !== 'exponential') {
    throw new InvalidArgumentError(`backoff type must be 'fixed' or 'exponential', got ${shown(options.type)}`);
  }
  const delay = intOption('backoff delayMs', options.delayMs, 0);
  const cap = intOption('backoff maxDelayMs', options.maxDelayMs ?? Math.max(delay, 3_600_000), delay);
  const jitter = options.jitter ?? (options.type === 'fixed' ? 0 : 0.2);
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) {
    throw new InvalidArgumentError(`backoff jitter must be from 0 to 1, got ${shown(jitter)}`);
  }
  // fixed-point: String(1e-7) is '1e-7', which the spec's grammar does not take
  const fraction = jitter.toFixed(6).replace(/\.?0+$/, '') || '0';
  return `${options.type === 'fixed' ? 'f' : 'e'},${delay},${cap},${fraction}`;
}

/** Each defaults object's backoff as enqueue takes it: worked out at its first job, not at every job. */
const defaultBackoffs = new WeakMap<JobDefaults, string>();
function defaultBackoffOf(defaults: JobDefaults): string {
  let spec = defaultBackoffs.get(defaults);
  if (spec === undefined) defaultBackoffs.set(defaults, (spec = encodeBackoff(defaults.backoff)));
  return spec;
}

/** The backoff options a row's spec stands for. */
export function decodeBackoff(spec: string | undefined): BackoffOptions {
  const [kind, delay, cap, jitter] = (spec ?? '').split(',');
  return {
    type: kind === 'f' ? 'fixed' : 'exponential',
    delayMs: Number(delay ?? 0),
    maxDelayMs: Number(cap ?? 0),
    jitter: Number(jitter ?? 0),
  };
}

/**
 * Validates one job's payload and options and encodes them for enqueue.lua. Throws a typed error
 * (EMQARG, EMQNAME, EMQPAYLOAD, EMQTOOLARGE) before anything reaches Redis.
 */
export function encodeJob(
  payload: unknown,
  options: EnqueueOptions | undefined,
  defaults: JobDefaults,
  maxPayloadBytes: number,
): EncodedJob {
  const o = options ?? {};
  if (typeof o !== 'object' || o === null) throw new InvalidArgumentError('options must be an object');
  const id = o.id === undefined ? '' : toJobId(o.id);
  const dedupe = encodeDedupe(o.dedupe);
  // an id already deduplicates for the row's life: with a key too, a duplicate could name a job
  // other than the id asked for (docs/design.md, "Deduplication")
  if (id !== '' && dedupe[0] !== '') throw new InvalidArgumentError('give dedupe or id, not both: an id is a deduplication key of its own');
  let group = '';
  if (o.group !== undefined) {
    assertName('group', o.group);
    group = o.group;
  }
  if (o.delayMs !== undefined && o.runAt !== undefined) {
    throw new InvalidArgumentError('give delayMs or runAt, not both');
  }
  const delayMs = o.delayMs === undefined ? -1 : intOption('delayMs', o.delayMs, 0);
  let runAt = -1;
  if (o.runAt !== undefined) {
    const at = o.runAt instanceof Date ? o.runAt.getTime() : o.runAt;
    runAt = intOption('runAt', at, 0);
  }
  const priority = o.priority === undefined ? 0 : intOption('priority', o.priority, 0, MAX_PRIORITY);
  const maxAttempts = intOption('maxAttempts', o.maxAttempts ?? defaults.maxAttempts, 1, 1_000_000);
  const backoff = o.backoff === undefined ? defaultBackoffOf(defaults) : encodeBackoff(o.backoff);
  const timeoutMs = o.timeoutMs === undefined ? -1 : intOption('timeoutMs', o.timeoutMs, 1);
  if (o.expireAfterMs !== undefined && o.expireAt !== undefined) throw new InvalidArgumentError('give expireAfterMs or expireAt, not both');
  let expiry = '';
  if (o.expireAfterMs !== undefined) expiry = `a${intOption('expireAfterMs', o.expireAfterMs, 1)}`;
  if (o.expireAt !== undefined) expiry = `t${intOption('expireAt', o.expireAt instanceof Date ? o.expireAt.getTime() : o.expireAt, 0)}`;
  return [id, encodePayload(payload, maxPayloadBytes), group, delayMs, runAt, priority, maxAttempts, backoff, ...dedupe, '', '', timeoutMs, expiry, encodeKeys(o.keys)];
}

/**
 * `job` with its flow links: a flow child's parent (`<queue>|<id>|<policy>`, '' none) and a flow
 * parent's children (`<queue>|<id>` joined by `,`, '' none), every other value kept. Typed, so a
 * value added to EncodedJob is carried here too.
 */
export function withLinks(job: EncodedJob, parent: string, children: string): EncodedJob {
  const [id, payload, group, delayMs, runAt, priority, maxAttempts, backoff, dedupeKey, dedupeTtlMs, replace, , , timeoutMs, expiry, keys] = job;
  return [id, payload, group, delayMs, runAt, priority, maxAttempts, backoff, dedupeKey, dedupeTtlMs, replace, parent, children, timeoutMs, expiry, keys];
}

/** The most concurrency keys one job names. */
export const MAX_JOB_KEYS = 4;
/** A concurrency key's name: letters, digits and `._:-`, 1 to 128 (`org:7`). */
const KEY_NAME = /^[A-Za-z0-9._:-]{1,128}$/;

/** A job's concurrency keys (`EnqueueOptions.keys`) as enqueue takes them: joined by `,`, '' for none. */
export function encodeKeys(keys: unknown): string {
  if (keys === undefined) return '';
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_JOB_KEYS) {
    throw new InvalidArgumentError(`keys must be an array of 1 to ${MAX_JOB_KEYS} concurrency key names, got ${shown(keys)}`);
  }
  for (const key of keys) {
    if (typeof key !== 'string' || !KEY_NAME.test(key)) throw new InvalidArgumentError(`a concurrency key is 1 to 128 letters, digits, '.', '_', ':' or '-', got ${shown(key)}`);
  }
  if (new Set(keys).size !== keys.length) throw new InvalidArgumentError(`a job names each concurrency key once, got ${shown(keys)}`);
  return keys.join(',');
}

/** Throws InvalidArgumentError unless `key` is a concurrency key's name. */
export function assertKeyName(key: unknown): asserts key is string {
  if (typeof key !== 'string' || !KEY_NAME.test(key)) throw new InvalidArgumentError(`a concurrency key is 1 to 128 letters, digits, '.', '_', ':' or '-', got ${shown(key)}`);
}
