import { DEFAULT_JOB_DEFAULTS, type EncodedJob, encodeBackoff } from '../encode.js';
import { scripts } from '../generated/scripts.js';
import type { EnqueueResult } from '../job.js';
import { asArray, asString } from './reply.js';
import type { ScriptOp } from './op.js';

/** The request an enqueue belongs to: a repeat of the same key is the same enqueue. */
export interface EnqueueRequest {
  /** "" for none. */
  readonly key: string;
  readonly ttlMs: number;
  /** A caller's key (Idempotency-Key), checked against the jobs it first came with. */
  readonly callerKey: boolean;
  /** The W3C traceparent to store on each new row ("" or absent: none); enqueue.lua checks its shape. */
  readonly traceparent?: string;
}

const NO_REQUEST: EnqueueRequest = { key: '', ttlMs: 0, callerKey: false };

/** The backoff every field of a plain job has: the scripts' default (lua/includes/job_defaults.lua). */
const PLAIN_BACKOFF = encodeBackoff(DEFAULT_JOB_DEFAULTS.backoff);

/**
 * A job whose every field but its id, payload, group and flow links is the scripts' default: due
 * now at priority 0, the default attempts and backoff, no dedupe key, no timeout of its own, no
 * expiry (a flow's jobs, as a rule).
 */
const isLinked = (job: EncodedJob): boolean =>
  job[3] === -1 &&
  job[4] === -1 &&
  job[5] === 0 &&
  job[6] === DEFAULT_JOB_DEFAULTS.maxAttempts &&
  job[7] === PLAIN_BACKOFF &&
  job[8] === '' &&
  job[9] === -1 &&
  job[10] === '0' &&
  job[13] === -1 &&
  job[14] === '' &&
  job[15] === '';

/** A linked job with no id and no flow link: its payload and group are all it has of its own. */
const isPlain = (job: EncodedJob): boolean => isLinked(job) && job[0] === '' && job[11] === '' && job[12] === '';

/**
 * Enqueues `jobs`; with `request`, once per key for `ttlMs`: the key again answers the first
 * reply (a caller's key with other jobs is EMQCONFLICT): lua/enqueue.lua.
 */
export function enqueueOp(jobs: readonly EncodedJob[], request: EnqueueRequest = NO_REQUEST): ScriptOp<EnqueueResult[]> {
  const { key, ttlMs, callerKey, traceparent = '' } = request;
  const args: Array<string | number> = [key, ttlMs, callerKey ? '1' : '0', traceparent, jobs.length];
  // plain jobs (the usual bulk add) go as their payloads and groups alone, a flow's as those, their
  // ids and links, the script writing in the other fields' defaults: 2 or 5 arguments a job
  // instead of 16 (lua/enqueue.lua, ARGV[7])
  if (jobs.every(isPlain)) {
    args.push('p');
    for (const job of jobs) args.push(job[1], job[2]);
  } else if (jobs.every(isLinked)) {
    args.push('l');
    for (const job of jobs) args.push(job[0], job[1], job[2], job[11], job[12]);
  } else {
    args.push('f');
    for (const job of jobs) for (const value of job) args.push(value);
  }
  return {
    script: scripts.enqueue,
    args,
    read: (reply) => {
      const list = asArray(reply, 'enqueue');
      const out: EnqueueResult[] = [];
      for (let i = 0; i < list.length; i += 2) {
        out.push({ id: asString(list[i], 'id'), state: asString(list[i + 1], 'state') as EnqueueResult['state'] });
      }
      return out;
    },
  };
}
