import { jobIdOf } from '../encode.js';
import { InvalidArgumentError, JobNotFoundError, JobStateError, shown } from '../errors.js';
import { relayOrLeave } from '../flows/flow-relay.js';
import { assertName } from '../keyspace.js';
import { type CancelCode, cancelOp } from '../ops/cancel.js';
import { listJobsOp } from '../ops/list-jobs.js';
import type { Scripts } from '../ops/scripts.js';
import { assertObject } from './checks.js';

// Cancel (docs/guides/job-controls.md, docs/design/job-controls.md): a job that does not run ends
// `cancelled` at once; a running one is told (its handler's signal aborts with JobCancelledError)
// and ends `cancelled` at its settle, whatever the handler returns.

/** The longest reason kept on a cancelled row, in characters. */
export const MAX_CANCEL_REASON = 1000;
/** The reason a cancel without one keeps. */
export const DEFAULT_CANCEL_REASON = 'cancelled';
/** Jobs per call of a bulk cancel: a page of the state's list, then one cancel call for them. */
const CANCEL_CHUNK = 500;

/** How to cancel. */
export interface CancelOptions {
  /** Why, kept on the row (`JobRecord.cancelReason`) and carried by JobCancelledError: at most 1000 characters. Default `cancelled`. */
  readonly reason?: string;
}

/** What a cancel did. */
export interface CancelResult {
  /** The job's id, `JOB:` and the id given. */
  readonly id: string;
  /**
   * `cancelled`: it has ended (it was not running, or it was cancelled before: a cancel sent twice
   * answers as the first did, or as the run it stopped ended since); `cancelling`: it runs, its
   * holder was told, and its settle ends it cancelled.
   */
  readonly state: 'cancelled' | 'cancelling';
}

/** The states a bulk cancel takes its jobs from: every unfinished one. */
export const CANCELLABLE_STATES = ['pending', 'scheduled', 'active', 'waiting', 'awaiting'] as const;
/** A state a bulk cancel takes its jobs from (CANCELLABLE_STATES). */
export type CancellableState = (typeof CANCELLABLE_STATES)[number];

/** Which jobs a bulk cancel takes. */
export interface CancelJobsOptions extends CancelOptions {
  /** The state to cancel the jobs of (an unfinished one). */
  readonly state: CancellableState;
  /** Only this group's jobs (undefined: every job of the state; null: the ungrouped ones). */
  readonly group?: string | null;
  /** At most this many jobs (an integer >= 1); no limit by default. */
  readonly limit?: number;
}

/** What a bulk cancel did. */
export interface CancelJobsResult {
  /** Jobs that ended cancelled. */
  readonly cancelled: number;
  /** Running jobs whose holders were told (each ends cancelled at its settle). */
  readonly cancelling: number;
}

/** The reason of `options`, checked before any Redis call. */
export function reasonOf(options: CancelOptions | undefined): string {
  if (options === undefined) return DEFAULT_CANCEL_REASON;
  assertObject('options', options);
  const reason = options.reason ?? DEFAULT_CANCEL_REASON;
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_CANCEL_REASON) {
    throw new InvalidArgumentError(`a cancel's reason must be a string of 1 to ${MAX_CANCEL_REASON} characters, got ${shown(reason)}`);
  }
  return reason;
}

/** Queue.cancel: throws JobNotFoundError for no such job, JobStateError for a finished one. */
export async function cancelJob(scripts: Scripts, id: string, options?: CancelOptions): Promise<CancelResult> {
  const jobId = jobIdOf(id);
  const reason = reasonOf(options);
  const { value, outbox } = await scripts.run(cancelOp([jobId], reason));
  await relayOrLeave(scripts.transport, scripts.keys.queue, outbox);
  return resultOf(jobId, value[0] ?? 'missing');
}

function resultOf(id: string, code: CancelCode): CancelResult {
  if (code === 'missing') throw new JobNotFoundError(`no job ${id}`, { jobId: id });
  if (code === 'finished') throw new JobStateError(`job ${id} has finished (completed or dead): there is nothing to cancel`, { jobId: id });
  return { id, state: code === 'cancelling' ? 'cancelling' : 'cancelled' };
}

/** The checked options of a bulk cancel. */
export function checkCancelJobs(options: CancelJobsOptions): { state: CancellableState; group: string | null | undefined; limit: number; reason: string } {
  assertObject('options', options);
  const { state, group, limit } = options;
  if (!(CANCELLABLE_STATES as readonly string[]).includes(state)) {
    throw new InvalidArgumentError(`state must be one of ${CANCELLABLE_STATES.join(', ')}, got ${shown(state)}`);
  }
  if (group !== undefined && group !== null) assertName('group', group);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new InvalidArgumentError(`limit must be an integer >= 1, got ${shown(limit)}`);
  return { state, group, limit: limit ?? Number.POSITIVE_INFINITY, reason: reasonOf(options) };
}

/**
 * Queue.cancelJobs: walks the state's list a page at a time, cancelling the page's jobs (of the
 * group) in one call. A job cancelled leaves the list, a running one stays in it (cancelling), so
 * the walk moves on by what stayed. Jobs arriving meanwhile may or may not be taken.
 */
export async function cancelJobs(scripts: Scripts, options: CancelJobsOptions): Promise<CancelJobsResult> {
  const { state, group, limit, reason } = checkCancelJobs(options);
  let cancelled = 0;
  let cancelling = 0;
  let offset = 0;
  while (cancelled + cancelling < limit) {
    const page = await scripts.run(listJobsOp(state, offset, CANCEL_CHUNK));
    const ids = page.filter((job) => group === undefined || (job.group ?? null) === group).map((job) => job.id);
    const take = ids.slice(0, limit - cancelled - cancelling);
    let gone = 0;
    if (take.length > 0) {
      const { value, outbox } = await scripts.run(cancelOp(take, reason));
      await relayOrLeave(scripts.transport, scripts.keys.queue, outbox);
      for (const code of value) {
        if (code === 'cancelled') cancelled++;
        else if (code === 'cancelling') cancelling++;
        if (code !== 'cancelling') gone++;
      }
    }
    if (page.length < CANCEL_CHUNK) break;
    offset += page.length - gone;
  }
  return { cancelled, cancelling };
}
