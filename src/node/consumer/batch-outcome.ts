import { DEFAULT_MAX_RESULT_BYTES } from '../../encode.js';
import { completion, errorText, type Outcome } from '../../handler.js';

/**
 * What became of one job of a batch, as a BatchConsumer's handler says it, one per job in the
 * order the jobs came:
 * - `'completed'`: done, with no result.
 * - `{ completed: result }`: done, and `result` is the job's result, as a single handler's
 *   resolved value is (`JobRecord.result`; `undefined`: none). JSON within `maxResultBytes`:
 *   a result that JSON cannot carry or over the cap fails that job for good (dead) instead,
 *   with an error saying why.
 * - `{ retry: error, delayMs? }`: this attempt failed; retried after `delayMs`, or after the job's
 *   backoff without it, and dead once `attempt` reaches `maxAttempts`.
 * - `{ fail: error }`: failed for good, straight to dead whatever attempts are left.
 *
 * `error` is what the job's row keeps as its last error: a string as it is, an Error as its name,
 * message and first stack lines. The kind is the key, whatever the error's class. A result rides
 * under its own key, so any value, a string `'completed'` included, is a result and never taken
 * for an outcome.
 *
 * @example
 * const handler: BatchHandler<Row> = async (jobs) => {
 *   const results = await db.insertMany(jobs.map((job) => job.payload));
 *   return results.map((r): BatchOutcome => (r.ok ? { completed: { rowId: r.id } } : r.duplicate ? { fail: 'duplicate row' } : { retry: r.error, delayMs: 5_000 }));
 * };
 */
export type BatchOutcome<Result = unknown> =
  | 'completed'
  | {
      /** The job's result (JSON, as a single handler's resolved value): done, with it. */
      readonly completed: Result;
    }
  | {
      /** Why this attempt failed: the job is retried, or dead when it was the last. */
      readonly retry: string | Error;
      /** Retry after exactly this many ms (an integer >= 0) instead of the job's backoff. */
      readonly delayMs?: number;
    }
  | {
      /** Why the job failed for good: straight to dead. */
      readonly fail: string | Error;
    };

const COMPLETE: Outcome = { kind: 'complete' };
const SHAPES = "'completed', {completed: result}, {retry: error, delayMs?} or {fail: error}";
const KINDS = ['completed', 'retry', 'fail'] as const;

/** A handler's broken promise about its return, as the error its jobs are retried with. */
const misuse = (message: string): Outcome => ({ kind: 'retry', error: `InvalidArgumentError (EMQARG): ${message}` });

const textOf = (error: unknown): string => (typeof error === 'string' ? error : errorText(error));

/** A short rendering of what a handler returned, for an error message. */
function shown(value: unknown): string {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? JSON.stringify(value) : String(value);
  if (value instanceof Error) return `an Error (${value.name})`;
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 100);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** One entry of a handler's result as the settle scripts need it: a bad entry retries its job, saying why. */
function outcomeOf(entry: unknown, index: number, count: number, maxResultBytes: number): Outcome {
  if (entry === 'completed') return COMPLETE;
  if (typeof entry === 'object' && entry !== null && !(entry instanceof Error)) {
    // exactly one kind: an entry naming two (a retry with a result) is a misuse, not a guess
    const kinds = KINDS.filter((kind) => kind in entry);
    if (kinds.length === 1 && kinds[0] === 'completed') return completion((entry as { completed: unknown }).completed, maxResultBytes);
    if (kinds.length === 1 && kinds[0] === 'retry') {
      const { retry, delayMs } = entry as { retry: unknown; delayMs?: unknown };
      if (delayMs === undefined) return { kind: 'retry', error: textOf(retry) };
      if (typeof delayMs === 'number' && Number.isSafeInteger(delayMs) && delayMs >= 0) {
        return { kind: 'retry', error: textOf(retry), delayMs };
      }
      return misuse(`outcome ${index} of ${count} has delayMs ${shown(delayMs)}: an integer >= 0, or none for the job's backoff`);
    }
    if (kinds.length === 1 && kinds[0] === 'fail') return { kind: 'fail', error: textOf((entry as { fail: unknown }).fail) };
  }
  return misuse(`outcome ${index} of ${count} is ${shown(entry)}, not ${SHAPES}`);
}

/**
 * What a batch handler's result means for each of its `count` jobs, in order. `undefined` (the
 * handler returned nothing) completes them all; an array of one BatchOutcome per job settles each
 * as it says (a `{completed: result}` over `maxResultBytes`, default 64 KiB, or not JSON fails its
 * job for good), and an entry that is none of them retries its job, saying why. Anything else, or
 * an array of the wrong length, retries every job of the batch with an error naming what came
 * back (a short array would otherwise complete jobs nobody spoke for). Never throws.
 *
 * @example
 * batchOutcomes(['completed', { completed: 7 }, { retry: 'busy' }], 3); // [{ kind: 'complete' }, { kind: 'complete', result: '7' }, { kind: 'retry', error: 'busy' }]
 */
export function batchOutcomes(result: unknown, count: number, maxResultBytes = DEFAULT_MAX_RESULT_BYTES): Outcome[] {
  if (result === undefined) return Array.from({ length: count }, () => COMPLETE);
  if (!Array.isArray(result)) {
    const outcome = misuse(`the batch handler resolved with ${shown(result)} for ${count} jobs: return one outcome per job, in order (${SHAPES}), or nothing to complete them all`);
    return Array.from({ length: count }, () => outcome);
  }
  if (result.length !== count) {
    const outcome = misuse(`the batch handler returned ${result.length} outcomes for ${count} jobs: return one per job, in order (${SHAPES}), or nothing to complete them all`);
    return Array.from({ length: count }, () => outcome);
  }
  return result.map((entry: unknown, index) => outcomeOf(entry, index, count, maxResultBytes));
}
