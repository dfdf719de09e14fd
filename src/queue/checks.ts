import { replicationOf } from '../durability.js';
import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_MAX_RESULT_BYTES, type EncodedJob, encodeJob, type JobDefaults } from '../encode.js';
import { InvalidArgumentError, shown } from '../errors.js';
import type { PageOptions } from '../job.js';
import { EVENTS_POLL_MS } from '../events/subscribe.js';
import type { Replication } from '../transport.js';
import type { BulkJob, QueueOptions, WaitForOptions } from './options.js';

export { JOB_STATES } from '../ops/job-row.js';

/** Throws InvalidArgumentError unless `value` is an object (options, a bulk job): null, a number or a string is not. */
export function assertObject(what: string, value: unknown): asserts value is object {
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError(`${what} must be an object, got ${shown(value)}`);
}

/** A Queue's options, checked, with their defaults. */
export interface QueueSettings {
  readonly defaults: JobDefaults;
  readonly maxPayloadBytes: number;
  readonly maxResultBytes: number;
  readonly idempotencyTtlMs: number;
  readonly keepCompletedMs: number;
  readonly ownsTransport: boolean;
  readonly replication: Replication | undefined;
}

function integerAtLeast(name: string, value: number, min: number, what = `an integer >= ${min}`): number {
  if (!Number.isSafeInteger(value) || value < min) throw new InvalidArgumentError(`${name} must be ${what}, got ${shown(value)}`);
  return value;
}

/** `options` (an object) checked, in this order, each bad one an InvalidArgumentError naming it. */
export function settingsOf(options: QueueOptions): QueueSettings {
  if (options.defaults !== undefined) assertObject('defaults', options.defaults);
  const defaults = { ...DEFAULT_JOB_DEFAULTS, ...options.defaults };
  const maxPayloadBytes = integerAtLeast('maxPayloadBytes', options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 1, 'a positive integer');
  const maxResultBytes = integerAtLeast('maxResultBytes', options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, 1, 'a positive integer');
  const idempotencyTtlMs = integerAtLeast('idempotencyTtlMs', options.idempotencyTtlMs ?? 86_400_000, 1);
  const ownsTransport = options.ownsTransport ?? false;
  const replication = replicationOf(options);
  const keepCompletedMs = integerAtLeast('keepCompletedMs', options.keepCompletedMs ?? 3_600_000, -1);
  // the defaults must make a valid job (a job of them alone, any payload size): checked once here,
  // so an add without options never meets a bad default
  try {
    encodeJob(null, undefined, defaults, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (error instanceof Error) error.message = `defaults: ${error.message}`;
    throw error;
  }
  return { defaults, maxPayloadBytes, maxResultBytes, idempotencyTtlMs, keepCompletedMs, ownsTransport, replication };
}

/**
 * The jobs of an addBulk, each `{payload, ...options}`, encoded: the first bad one throws, naming
 * its index, so nothing is written.
 */
export function encodeBulk<Payload>(jobs: ReadonlyArray<BulkJob<Payload>>, defaults: JobDefaults, maxPayloadBytes: number): EncodedJob[] {
  return jobs.map((job: unknown, i) => {
    try {
      assertObject('a bulk job', job);
      // the earlier nested form would otherwise enqueue with every option silently dropped
      if ('options' in job) {
        throw new InvalidArgumentError('a bulk job takes its options beside the payload, {payload, group, delayMs, ...}, not under `options`');
      }
      return encodeJob((job as BulkJob<Payload>).payload, job as BulkJob<Payload>, defaults, maxPayloadBytes);
    } catch (error) {
      if (error instanceof Error) error.message = `job ${i}: ${error.message}`;
      throw error;
    }
  });
}

/** An interval to poll at, checked: an integer from 1 to 60,000 ms (default EVENTS_POLL_MS). */
export function pollOf(pollMs: number | undefined): number {
  const ms = pollMs ?? EVENTS_POLL_MS;
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > 60_000) throw new InvalidArgumentError(`pollMs must be an integer from 1 to 60000, got ${shown(ms)}`);
  return ms;
}

/** A wait's options, checked. */
export interface Wait {
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly signal?: AbortSignal;
}

/** A wait's options, checked: timeoutMs an integer from 0 (default 30,000), pollMs as pollOf. */
export function waitOf(options: WaitForOptions): Wait {
  assertObject('options', options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0) throw new InvalidArgumentError(`timeoutMs must be an integer >= 0, got ${shown(timeoutMs)}`);
  return { timeoutMs, pollMs: pollOf(options.pollMs), ...(options.signal ? { signal: options.signal } : {}) };
}

/** A page's offset and limit, checked: limit 1 to 1000 (default 50), offset from 0. */
export function pageOf(options: PageOptions): { offset: number; limit: number } {
  assertObject('options', options);
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 50;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be an integer >= 0');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new InvalidArgumentError('limit must be an integer from 1 to 1000');
  return { offset, limit };
}
