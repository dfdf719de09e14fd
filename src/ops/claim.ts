import { scripts } from '../generated/scripts.js';
import { RedisError } from '../errors.js';
import { asArray, asNumber, asString } from './reply.js';
import type { DueScheduler } from '../schedulers/schedulers.js';
import type { Reply } from '../transport.js';
import { nullable, type ScriptOp, strings } from './op.js';

/** A claimed job as the script returns it, payload still JSON text. */
export interface ClaimedRow {
  readonly id: string;
  readonly token: number;
  readonly payload: string;
  readonly group: string | undefined;
  /** This run's attempt, from 1 (Job.attempt). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly createdAt: number;
  readonly leaseUntil: number;
  /** The W3C traceparent its enqueue stored (the row's `x`), when it was traced. */
  readonly traceparent: string | undefined;
  /** A flow child's parent, as its row's `fp` (`<queue>|<id>|<policy>`: src/flows/flow.ts decodeParent). */
  readonly parent: string | undefined;
  /** A flow parent's children hash, flat (src/flows/flow.ts decodeChildren); undefined for a job without children. */
  readonly children: string[] | undefined;
  /** Its own timeout in ms (the row's `to`), undefined for the consumer's. */
  readonly timeoutMs: number | undefined;
  /** Its durable steps hash, flat (src/steps/step-records.ts decodeSteps); undefined for a job without steps. */
  readonly steps: string[] | undefined;
}

/** What a claim (or a beat) saw and took. */
export interface ClaimResult {
  /** The server's time when it ran (epoch ms). */
  readonly now: number;
  /** Whether the queue is paused (then nothing was claimed). */
  readonly paused: boolean;
  /**
   * The next scheduled job's due time (null for none) when fewer jobs were claimed than asked, or
   * the schedule bell had news, or it was a beat; else null.
   */
  readonly nextDueAt: number | null;
  /** The earliest lease deadline, on the same occasions as nextDueAt; else null. */
  readonly nextLeaseEnd: number | null;
  /** Due scheduled jobs a beat moved to be claimed. */
  readonly promoted: number;
  /** Expired leases a beat took back to be claimed again. */
  readonly requeued: number;
  /** Expired leases a beat sent to dead: that was their last attempt. */
  readonly buried: number;
  /** Schedulers whose slot a beat saw due, for its caller to fire (Leases does); empty otherwise. */
  readonly dueSchedulers: readonly DueScheduler[];
  /** Flow news a beat found to relay (outbox entries: docs/design.md, "Flows"); empty otherwise. */
  readonly outbox: readonly string[];
  readonly jobs: readonly ClaimedRow[];
}

/** Claims up to `n` for `leaseMs`; with `requestKey`, the same key again answers this claim's jobs (lua/claim.lua). */
export function claimOp(n: number, leaseMs: number, requestKey = ''): ScriptOp<ClaimResult> {
  return { script: scripts.claim, args: [n, leaseMs, requestKey], read: (reply) => readClaim(reply, leaseMs) };
}

function readDueSchedulers(reply: Reply | undefined): DueScheduler[] {
  if (reply === undefined) return [];
  const flat = asArray(reply, 'due schedulers');
  const due: DueScheduler[] = [];
  for (let i = 0; i + 4 < flat.length; i += 5) {
    const anchor = asString(flat[i + 4], 'anchor');
    due.push({
      id: asString(flat[i], 'scheduler id'),
      revision: Number(asString(flat[i + 1], 'revision')),
      slot: Number(asString(flat[i + 2], 'slot')),
      spec: asString(flat[i + 3], 'spec'),
      anchor: anchor === '' ? -1 : Number(anchor),
    });
  }
  return due;
}

/** A claim's reply (claim.lua's, beat.lua's, and complete.lua's claim): its head, then one entry per job. */
export function readClaim(reply: Reply, leaseMs: number): ClaimResult {
  const list = asArray(reply, 'claim');
  const raw = asArray(list[0], 'claim head');
  const head = raw.slice(0, 7).map((v) => asNumber(v, 'claim head'));
  const now = head[0] ?? 0;
  return {
    now,
    paused: head[1] === 1,
    nextDueAt: nullable(head[2] ?? -1),
    nextLeaseEnd: nullable(head[3] ?? -1),
    promoted: head[4] ?? 0,
    requeued: head[5] ?? 0,
    buried: head[6] ?? 0,
    dueSchedulers: readDueSchedulers(raw[7]),
    outbox: strings(raw[8], 'beat outbox'),
    jobs: list.slice(1).map((entry) => readClaimedJob(entry, now + leaseMs)),
  };
}

/** The fields before a claimed job's payload (lua/includes/claimed_job.lua). */
const CLAIMED_FIELDS = 9;

/**
 * One claimed job as lua/includes/claimed_job.lua writes it: a string of nine fields and the
 * payload, each field ended by a space (no field but the payload, which is last, may hold one),
 * or, for a flow parent, that string and its children hash.
 */
function readClaimedJob(entry: Reply | undefined, leaseUntil: number): ClaimedRow {
  let wire: string;
  let children: string[] | undefined;
  let steps: string[] | undefined;
  if (Array.isArray(entry)) {
    wire = asString(entry[0], 'claimed job');
    // 0 for a job with steps and no children (lua/includes/claimed_job.lua)
    if (Array.isArray(entry[1])) children = strings(entry[1], 'children');
    if (entry.length > 2) steps = strings(entry[2], 'steps');
  } else {
    wire = asString(entry, 'claimed job');
  }
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < CLAIMED_FIELDS; i++) {
    const end = wire.indexOf(' ', at);
    if (end < 0) throw new RedisError(`claimed job: expected ${CLAIMED_FIELDS} fields before the payload, got ${JSON.stringify(wire)}`);
    fields.push(wire.slice(at, end));
    at = end + 1;
  }
  const [id, token, group, attempt, maxAttempts, createdAt, traceparent, parent, timeout] = fields as [string, string, string, string, string, string, string, string, string];
  return {
    id,
    token: asNumber(token, 'token'),
    payload: wire.slice(at),
    group: group === '' ? undefined : group,
    attempt: asNumber(attempt, 'attempt'),
    maxAttempts: asNumber(maxAttempts, 'maxAttempts'),
    createdAt: asNumber(createdAt, 'createdAt'),
    leaseUntil,
    traceparent: traceparent === '' ? undefined : traceparent,
    parent: parent === '' ? undefined : parent,
    timeoutMs: timeout === '' ? undefined : asNumber(timeout, 'timeoutMs'),
    children,
    steps,
  };
}
