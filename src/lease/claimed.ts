import { decodeChildren, decodeParent } from '../flows/flow.js';
import type { Job } from '../job.js';
import type { ClaimedRow, ClaimResult } from '../ops/claim.js';
import { firedBy } from '../schedulers/schedulers.js';
import { traceReceive } from '../telemetry/telemetry.js';
import { decodeSteps, stepRecords } from '../steps/step-records.js';
import type { Claimed } from './rounds.js';

/** A claim's rows as jobs with decoded payloads; its `receive` span, from `sentAt`, when it claimed any. */
export function claimedOf<Payload>(queue: string, result: ClaimResult, sentAt?: number): Claimed<Payload> {
  const claimed = { ...result, fired: 0, jobs: result.jobs.map((row) => jobOf<Payload>(row)) };
  if (sentAt !== undefined) traceReceive(queue, sentAt, claimed.jobs);
  return claimed;
}

/**
 * A claimed row as the job its handler gets, written out field by field: every claimed job comes
 * through here, and spreading the row into a new object (and the flow's parts into another) was
 * three objects a job where one does.
 */
function jobOf<Payload>(row: ClaimedRow): Job<Payload> {
  const job: { -readonly [K in keyof Job<Payload>]: Job<Payload>[K] } = {
    id: row.id,
    token: row.token,
    payload: JSON.parse(row.payload) as Payload,
    group: row.group,
    attempt: row.attempt,
    maxAttempts: row.maxAttempts,
    createdAt: row.createdAt,
    leaseUntil: row.leaseUntil,
    traceparent: row.traceparent,
  };
  const scheduler = firedBy(row.id);
  if (scheduler) job.scheduler = scheduler;
  if (row.parent !== undefined) job.parent = decodeParent(row.parent);
  if (row.children !== undefined) job.children = decodeChildren(row.children);
  if (row.timeoutMs !== undefined) job.timeoutMs = row.timeoutMs;
  if (row.steps !== undefined) job.steps = stepRecords(decodeSteps(row.steps));
  return job;
}
