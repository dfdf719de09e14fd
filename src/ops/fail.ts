import { scripts } from '../generated/scripts.js';
import { asArray } from './reply.js';
import { codes, type Held, type ScriptOp, strings, type WithOutbox } from './op.js';

/** A failed attempt to settle by failing for good. */
export interface FailItem extends Held {
  /** Why it failed for good: the row keeps it as its last error. */
  readonly error: string;
}

/** Fails held jobs for good, straight to dead (lua/fail.lua). */
export function failOp(items: readonly FailItem[]): ScriptOp<WithOutbox<Array<'dead' | 'cancelled' | 'fenced'>>> {
  return {
    script: scripts.fail,
    args: items.flatMap((i) => [i.id, i.token, i.error]),
    read: (reply) => {
      const [done, outbox] = asArray(reply, 'fail');
      return { value: codes(done ?? [], 'fail').map((c): 'dead' | 'cancelled' | 'fenced' => (c === 1 ? 'dead' : c === 9 ? 'cancelled' : 'fenced')), outbox: strings(outbox, 'fail outbox') };
    },
  };
}
