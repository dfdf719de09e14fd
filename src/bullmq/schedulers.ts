/**
 * BullMQ's job schedulers (`upsertJobScheduler`'s repeat options and `JobSchedulerJson`) on
 * echomq's schedulers (docs/guides/schedulers.md).
 */
import type { SchedulerRecord, SchedulerSpec } from '../schedulers/schedulers.js';
import { envelopeOf, type Envelope } from './envelope.js';
import { UnsupportedBullMQError } from './errors.js';
import type { JobsOptions } from './options.js';

/** BullMQ's repeat options for a job scheduler. */
export interface RepeatOptions {
  /** A cron pattern: echomq's `cron`. */
  readonly pattern?: string;
  /** Every this many ms: echomq's `every` (at least 100). */
  readonly every?: number;
  /** The cron's time zone: echomq's `tz`. */
  readonly tz?: string;
  /** At most this many jobs: echomq's `limit`. */
  readonly limit?: number;
  /** No slot before: echomq's `startAt`. */
  readonly startDate?: Date | string | number;
  /** No slot after: echomq's `endAt`. */
  readonly endDate?: Date | string | number;
  /** Fire the first slot now: echomq's `every` scheduler fires its first slot at once anyway; with a pattern it throws. */
  readonly immediately?: boolean;
  /** Not supported: throws. */
  readonly offset?: number;
  /** Not supported: throws. */
  readonly count?: number;
  /** Internal to BullMQ: accepted. */
  readonly prevMillis?: number;
  /** BullMQ's older name for `pattern`. */
  readonly cron?: string;
  /** BullMQ's older name for `tz`. */
  readonly utc?: boolean;
  /** Internal to BullMQ: accepted. */
  readonly jobId?: string;
}

/** The options a scheduler's jobs take: a job's, less the id, the delay and deduplication. */
export type JobSchedulerTemplateOptions = Omit<JobsOptions, 'jobId' | 'delay' | 'deduplication' | 'debounce'>;

/** A scheduler as BullMQ shows it. */
export interface JobSchedulerJson<D = any> {
  /** Its id (BullMQ's key). */
  readonly key: string;
  /** Its jobs' name. */
  readonly name: string;
  /** Its id. */
  readonly id?: string | null;
  /** How many slots it has fired. */
  readonly iterationCount?: number;
  /** The most slots it fires. */
  readonly limit?: number;
  /** No slot before (epoch ms). */
  readonly startDate?: number;
  /** No slot after (epoch ms). */
  readonly endDate?: number;
  /** Its cron's time zone. */
  readonly tz?: string;
  /** Its cron pattern. */
  readonly pattern?: string;
  /** Its interval, ms. */
  readonly every?: number;
  /** Its next slot (epoch ms). */
  readonly next?: number;
  /** The job it adds at each slot. */
  readonly template?: {
    /** Its data. */
    readonly data?: D;
    /** Its options. */
    readonly opts?: JobsOptions;
  };
}

/**
 * echomq's scheduler spec for BullMQ's repeat options.
 *
 * @example
 * schedulerSpecOf({ pattern: '0 3 * * *', tz: 'Europe/Berlin' }); // { cron: '0 3 * * *', tz: 'Europe/Berlin' }
 */
export function schedulerSpecOf(r: RepeatOptions): SchedulerSpec {
  if (r.offset !== undefined) throw new UnsupportedBullMQError('repeat.offset', 'give `startDate`: `every` slots run from it');
  if (r.count !== undefined) throw new UnsupportedBullMQError('repeat.count', 'use `limit`');
  const pattern = r.pattern ?? r.cron;
  if (pattern !== undefined && r.immediately) throw new UnsupportedBullMQError('repeat.immediately with a pattern', 'add one job now with queue.add beside the scheduler');
  return {
    ...(pattern !== undefined ? { cron: pattern } : {}),
    ...(r.tz !== undefined ? { tz: r.tz } : {}),
    ...(r.every !== undefined ? { every: r.every } : {}),
    ...(r.limit !== undefined ? { limit: r.limit } : {}),
    ...(r.startDate !== undefined ? { startAt: r.startDate } : {}),
    ...(r.endDate !== undefined ? { endAt: r.endDate } : {}),
  };
}

/**
 * BullMQ's JSON of an echomq scheduler.
 *
 * @example
 * schedulerJsonOf(await emq.getScheduler('nightly')!);
 */
export function schedulerJsonOf<D>(record: SchedulerRecord<Envelope>): JobSchedulerJson<D> {
  const { name, data, opts } = envelopeOf(record.job.payload);
  return {
    key: record.id,
    id: record.id,
    name,
    iterationCount: record.fired,
    ...(record.limit !== undefined ? { limit: record.limit } : {}),
    ...(record.startAt !== undefined ? { startDate: record.startAt } : {}),
    ...(record.endAt !== undefined ? { endDate: record.endAt } : {}),
    ...(record.tz !== undefined ? { tz: record.tz } : {}),
    ...(record.cron !== undefined ? { pattern: record.cron } : {}),
    ...(record.every !== undefined ? { every: record.every } : {}),
    ...(record.nextRunAt !== null ? { next: record.nextRunAt } : {}),
    template: { data: data as D, opts },
  };
}
