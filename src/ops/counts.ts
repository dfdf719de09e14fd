import { scripts } from '../generated/scripts.js';
import { type LastHour, lastHourOf } from '../queue/last-hour.js';
import { asArray, asRecord } from './reply.js';
import { codes, type ScriptOp } from './op.js';

/** A queue's counts per state, its counters, the paused flag and its last hour, as counts.lua reads them. */
export interface CountsRead {
  readonly pending: number;
  readonly scheduled: number;
  readonly active: number;
  readonly dead: number;
  readonly completed: number;
  readonly paused: boolean;
  readonly buried: number;
  readonly retried: number;
  readonly stalled: number;
  readonly fired: number;
  readonly rated: number;
  readonly waiting: number;
  readonly awaiting: number;
  readonly sleeping: number;
  readonly cancelled: number;
  readonly lastHour: LastHour;
}

/**
 * The queue's counts per state, its counters, the paused flag, and its jobs completed and sent
 * to dead per minute of the last hour (lua/counts.lua).
 */
export function countsOp(): ScriptOp<CountsRead> {
  return {
    script: scripts.counts,
    args: [],
    read: (reply) => {
      const list = asArray(reply, 'counts');
      const [pending = 0, scheduled = 0, active = 0, dead = 0, completed = 0, paused = 0, buried = 0, retried = 0, stalled = 0, fired = 0, rated = 0, waiting = 0, minute = 0] = codes(list.slice(0, 13), 'counts');
      const lastHour = lastHourOf(minute, asRecord(list[13] ?? [], 'counts minutes'));
      const [awaiting = 0, sleeping = 0, cancelled = 0] = codes(list.slice(14, 17), 'counts');
      return { pending, scheduled, active, dead, completed, paused: paused === 1, buried, retried, stalled, fired, rated, waiting, awaiting, sleeping, cancelled, lastHour };
    },
  };
}
