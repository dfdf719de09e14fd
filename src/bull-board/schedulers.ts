/**
 * echomq's schedulers as bull-board's Job Schedulers page shows and edits them
 * (docs/guides/bull-board.md, "Schedulers"): a cron is BullMQ's `pattern`, `every` stays, the
 * slots fired are its `iterationCount`. echomq writes a slot's job when the slot fires, not ahead
 * as a delayed job, so a scheduler has no next-run job to link to; its last run is job
 * `<id>@<slot>` while that job is kept.
 */
import type { AppJobScheduler, JobSchedulerRepeatOptions, JobSchedulerUpdateResult } from '@bull-board/api/typings/app';
import { InvalidArgumentError } from '../errors.js';
import type { SchedulerRecord, SchedulerSpec } from '../schedulers/schedulers.js';
import type { QueueSurface } from '../queue/surface.js';
import { shownPayload } from './payload.js';

/** A scheduler as the board lists it (the board adds its queue's name). */
export type BoardScheduler = Omit<AppJobScheduler, 'queueName'>;

/**
 * A scheduler record as bull-board shows it.
 *
 * @example
 * const shown = (await queue.listSchedulers()).map(boardSchedulerOf);
 */
export function boardSchedulerOf(record: SchedulerRecord<unknown>): BoardScheduler {
  const { name, data, opts } = shownPayload(record.job.payload);
  return {
    id: record.id,
    name: name === '' ? record.id : name,
    ...(record.cron === undefined ? {} : { pattern: record.cron }),
    ...(record.every === undefined ? {} : { every: record.every }),
    ...(record.tz === undefined ? {} : { tz: record.tz }),
    ...(record.limit === undefined ? {} : { limit: record.limit }),
    ...(record.startAt === undefined ? {} : { startDate: record.startAt }),
    ...(record.endAt === undefined ? {} : { endDate: record.endAt }),
    ...(record.nextRunAt === null ? {} : { next: record.nextRunAt }),
    ...(record.lastRunAt === null ? {} : { lastRun: record.lastRunAt, lastRunJobId: `${record.id}@${record.lastRunAt}` }),
    iterationCount: record.fired,
    template: {
      data,
      opts: {
        ...opts,
        attempts: record.job.maxAttempts,
        ...(record.job.priority > 0 ? { priority: record.job.priority } : {}),
        ...(record.job.group === undefined ? {} : { group: { id: record.job.group } }),
      },
    },
  };
}

/**
 * bull-board's schedule edit as echomq's spec: `pattern` is the cron (with its `tz`), `every` the
 * interval; `limit` and `endDate` carried over. The start of the stored spec is kept.
 */
function specOf(current: SchedulerRecord<unknown>, repeat: JobSchedulerRepeatOptions): SchedulerSpec {
  return {
    ...(repeat.pattern !== undefined ? { cron: repeat.pattern, ...(repeat.tz === undefined ? {} : { tz: repeat.tz }) } : {}),
    ...(repeat.pattern === undefined && repeat.every !== undefined ? { every: repeat.every } : {}),
    ...(current.startAt === undefined ? {} : { startAt: current.startAt }),
    ...(repeat.endDate === undefined ? {} : { endAt: repeat.endDate }),
    ...(repeat.limit === undefined ? {} : { limit: repeat.limit }),
  };
}

/**
 * Changes scheduler `id`'s schedule, its job as it was (echomq's `upsertScheduler`): `not-found`
 * for none, `invalid-schedule` when echomq refuses the spec (InvalidArgumentError, nothing
 * written) or it would fire no more.
 *
 * @example
 * await updateScheduler(queue, 'nightly', { pattern: '0 4 * * *' }); // 'updated'
 */
export async function updateScheduler(queue: QueueSurface<unknown>, id: string, repeat: JobSchedulerRepeatOptions): Promise<JobSchedulerUpdateResult> {
  const current = await queue.getScheduler(id);
  if (!current) return 'not-found';
  const { job } = current;
  try {
    const { nextRunAt } = await queue.upsertScheduler(id, specOf(current, repeat), {
      payload: job.payload,
      priority: job.priority,
      maxAttempts: job.maxAttempts,
      backoff: job.backoff,
      ...(job.group === undefined ? {} : { group: job.group }),
      ...(job.expireAfterMs === undefined ? {} : { expireAfterMs: job.expireAfterMs }),
    });
    return nextRunAt === null ? 'invalid-schedule' : 'updated';
  } catch (error) {
    if (error instanceof InvalidArgumentError) return 'invalid-schedule';
    throw error;
  }
}

/**
 * Adds one job of scheduler `id`'s template now, as an ordinary job (the schedule is left as it
 * is); its echomq id, or `not-found`.
 *
 * @example
 * await runSchedulerNow(queue, 'nightly'); // 'JOB:7'
 */
export async function runSchedulerNow(queue: QueueSurface<unknown>, id: string): Promise<string | 'not-found'> {
  const current = await queue.getScheduler(id);
  if (!current) return 'not-found';
  const { job } = current;
  const added = await queue.add(job.payload, {
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    backoff: job.backoff,
    ...(job.group === undefined ? {} : { group: job.group }),
    ...(job.expireAfterMs === undefined ? {} : { expireAfterMs: job.expireAfterMs }),
  });
  return added.id;
}
