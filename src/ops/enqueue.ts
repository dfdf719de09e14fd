import type { EncodedJob } from '../encode.js';
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

/**
 * Enqueues `jobs`; with `request`, once per key for `ttlMs`: the key again answers the first
 * reply (a caller's key with other jobs is EMQCONFLICT): lua/enqueue.lua.
 */
export function enqueueOp(jobs: readonly EncodedJob[], request: EnqueueRequest = NO_REQUEST): ScriptOp<EnqueueResult[]> {
  const { key, ttlMs, callerKey, traceparent = '' } = request;
  return {
    script: scripts.enqueue,
    args: [key, ttlMs, callerKey ? '1' : '0', traceparent, jobs.length, ...jobs.flat()],
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
