import { scripts } from '../generated/scripts.js';
import { asArray, asNumber, asString } from './reply.js';
import { nullable, type ScriptOp } from './op.js';

/** What fire-schedulers answered. */
export interface FireResult {
  /** The server's time when it ran (epoch ms). */
  readonly now: number;
  /** The queue's next due time after the firing (a scheduled job or a scheduler's slot), null for none. */
  readonly nextDueAt: number | null;
  /** Slots fired (the rest were fenced: fired by someone else, or the scheduler changed). */
  readonly fired: number;
  /** Per scheduler asked, the id of the job its slot fired, or null when fenced. */
  readonly jobs: ReadonlyArray<string | null>;
}

/** Fires due slots, each fenced on the revision and slot read, moving each scheduler on to `next` (-1: none): lua/fire-schedulers.lua. */
export function fireSchedulersOp(items: ReadonlyArray<{ id: string; revision: number; slot: number; next: number }>): ScriptOp<FireResult> {
  return {
    script: scripts.fireSchedulers,
    args: [items.length, ...items.flatMap((i) => [i.id, i.revision, i.slot, i.next])],
    read: (reply) => {
      const [now, next, fired, ...jobs] = asArray(reply, 'fireSchedulers');
      return {
        now: asNumber(now, 'now'),
        nextDueAt: nullable(asNumber(next, 'next due')),
        fired: asNumber(fired, 'fired'),
        jobs: jobs.map((j) => asString(j, 'fired job') || null),
      };
    },
  };
}
