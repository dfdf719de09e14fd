import { scripts } from '../generated/scripts.js';
import { asArray } from './reply.js';
import { codes, type Held, type ScriptOp, strings, type WithOutbox } from './op.js';

/** A failed attempt to settle by retry. */
export interface RetryItem extends Held {
  /** The error the attempt ended with: the row keeps it as its last. */
  readonly error: string;
  /** Retry after exactly this many ms instead of the job's backoff. */
  readonly delayMs?: number;
}

/** What retry did with a job. */
export type RetryOutcome = 'scheduled' | 'pending' | 'dead' | 'cancelled' | 'fenced';

const RETRY_OUTCOMES: Record<number, RetryOutcome> = { 0: 'fenced', 1: 'scheduled', 2: 'pending', 3: 'dead', 9: 'cancelled' };

/** Retries failed attempts with their backoff (jittered by `random`) or `delayMs`; dead once attempts are used up (lua/retry.lua). */
export function retryOp(items: readonly RetryItem[], random: () => number = Math.random): ScriptOp<WithOutbox<RetryOutcome[]>> {
  return {
    script: scripts.retry,
    args: items.flatMap((i) => [i.id, i.token, i.error, i.delayMs ?? -1, random()]),
    read: (reply) => {
      const [done, outbox] = asArray(reply, 'retry');
      return { value: codes(done ?? [], 'retry').map((c) => RETRY_OUTCOMES[c] ?? 'fenced'), outbox: strings(outbox, 'retry outbox') };
    },
  };
}
