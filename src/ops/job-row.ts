import { decodeBackoff } from '../encode.js';
import { decodeChildren, decodeParent } from '../flows/flow.js';
import type { JobRecord, JobState } from '../job.js';
import { asArray, asRecord, asString } from './reply.js';
import { firedBy } from '../schedulers/schedulers.js';
import type { Reply } from '../transport.js';
import { decodeSteps, stepRecords } from '../steps/step-records.js';

/** Every state a job can be in, in the order the docs list them. */
export const JOB_STATES: readonly JobState[] = ['pending', 'scheduled', 'active', 'completed', 'dead', 'waiting', 'awaiting', 'cancelled'];

const optionalNumber = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));

/** A job's row (its hash, short fields: docs/design.md, "The row") as a JobRecord. */
export function decodeJobRow<Payload>(id: string, row: Record<string, string>): JobRecord<Payload> {
  const state = JOB_STATES.includes(row.s as JobState) ? (row.s as JobState) : 'pending';
  return {
    id,
    state,
    payload: JSON.parse(row.d ?? 'null') as Payload,
    group: row.g,
    priority: Number(row.p ?? 0),
    attempt: Number(row.a ?? 0) - Number(row.z ?? 0),
    maxAttempts: Number(row.m ?? 0),
    attemptsStarted: Number(row.a ?? 0),
    backoff: decodeBackoff(row.b),
    error: row.e,
    createdAt: Number(row.c ?? 0),
    finishedAt: optionalNumber(row.f),
    leaseUntil: optionalNumber(row.lease),
    runAt: optionalNumber(row.due),
    result: row.r === undefined ? undefined : (JSON.parse(row.r) as unknown),
    progress: row.pg === undefined ? undefined : (JSON.parse(row.pg) as unknown),
    scheduler: firedBy(id),
    ...(row.fp === undefined ? {} : { parent: decodeParent(row.fp) }),
    ...(row.fw === undefined
      ? {}
      : { children: decodeChildren(JSON.parse(row.kids ?? '[]') as string[]), flow: { total: Number(row.fw), done: Number(row.fd ?? 0) } }),
    ...(row.steps === undefined ? {} : { steps: stepRecords(decodeSteps(JSON.parse(row.steps) as string[])) }),
    ...(row.timeout === undefined ? {} : { timeoutAt: Number(row.timeout) }),
    ...(row.to === undefined ? {} : { timeoutMs: Number(row.to) }),
    ...(row.cx === undefined ? {} : { cancelReason: row.cx }),
    ...(row.xa === undefined ? {} : { expiresAt: Number(row.xa) }),
    ...(row.ck === undefined ? {} : { keys: row.ck.split(',') }),
  };
}

/** A row, or null for an empty one (no such job). */
export function jobOrNull<Payload>(id: string, reply: Reply | undefined, what: string): JobRecord<Payload> | null {
  const row = asRecord(reply, what);
  return Object.keys(row).length === 0 ? null : decodeJobRow<Payload>(id, row);
}

/** A page of rows, each `{id, field, value, ...}` (list-dead.lua, list-jobs.lua), as JobRecords. */
export function jobPage<Payload>(reply: Reply, what: string): Array<JobRecord<Payload>> {
  return asArray(reply, what).map((entry) => {
    const [id, ...fields] = asArray(entry, `${what} entry`);
    const jobId = asString(id, 'id');
    return decodeJobRow<Payload>(jobId, asRecord(fields, `${what} row`));
  });
}
