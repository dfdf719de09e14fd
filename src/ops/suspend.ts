import { scripts } from '../generated/scripts.js';
import type { Suspension } from '../steps/job-steps.js';
import { codes, type Held, type ScriptOp } from './op.js';

/** How a held job's handler suspended (src/steps/job-steps.ts): the step it stopped at, and the lease. */
export interface SuspendItem extends Held, Suspension {}

/** Where suspend left a job: sleeping (`scheduled`), `pending` (went on at once), `awaiting` an event, `waiting` for its child, or `fenced`. */
export type SuspendOutcome = 'scheduled' | 'pending' | 'awaiting' | 'waiting' | 'cancelled' | 'fenced';

const SUSPEND_OUTCOMES: Record<number, SuspendOutcome> = { 0: 'fenced', 1: 'scheduled', 2: 'pending', 3: 'awaiting', 4: 'waiting', 9: 'cancelled' };

/** Suspends held jobs at a sleep, a wait for an event or an invoke (lua/suspend.lua). */
export function suspendOp(items: readonly SuspendItem[]): ScriptOp<SuspendOutcome[]> {
  return {
    script: scripts.suspend,
    args: items.flatMap((i) => [i.id, i.token, i.index, i.how, i.name, i.number, i.event ?? '', i.shape ?? '', i.values ?? '[]']),
    read: (reply) => codes(reply, 'suspend').map((c) => SUSPEND_OUTCOMES[c] ?? 'fenced'),
  };
}
