/**
 * The jobs a queue completed and sent to dead in each minute of the last hour: what the scripts
 * count in `emq:{q}:minutes` (lua/includes/count_minute.lua) and counts.lua reads
 * (docs/design.md, "Keyspace").
 */

/** How many one-minute buckets {@link LastHour} holds: the current minute and the 59 before it. */
export const LAST_HOUR_MINUTES = 60;

const MINUTE_MS = 60_000;

/**
 * Jobs completed and sent to dead per minute of the last hour, by the Redis server's clock: 60
 * buckets each, oldest first, the current minute (still counting) last. Bucket `i` covers the
 * minute starting at `minute - (59 - i) * 60000`.
 *
 * @example
 * const { lastHour } = await queue.stats();
 * const thisMinute = lastHour.completed[lastHour.completed.length - 1];
 */
export interface LastHour {
  /** When the last bucket's minute began (epoch ms, a multiple of 60000): the server's current minute. */
  readonly minute: number;
  /** Jobs completed in each minute, oldest first (60 numbers). */
  readonly completed: number[];
  /** Jobs sent to dead in each minute (attempts used up, failed for good, a lease reaped on its last attempt), oldest first (60 numbers). */
  readonly dead: number[];
}

/**
 * The hour ending with minute `minute` (floor(server ms / 60000)) from the bucket fields counts.lua
 * answers (`c<minute>` and `d<minute>` -> count): fields outside the hour (an idle queue's, not yet
 * trimmed) are left out, and a minute without a field counts 0.
 *
 * @example
 * lastHourOf(29_000_000, { c28999999: '3' }).completed[58] // 3
 */
export function lastHourOf(minute: number, fields: Readonly<Record<string, string>>): LastHour {
  const completed = new Array<number>(LAST_HOUR_MINUTES).fill(0);
  const dead = new Array<number>(LAST_HOUR_MINUTES).fill(0);
  const first = minute - LAST_HOUR_MINUTES + 1;
  for (const [field, value] of Object.entries(fields)) {
    const kind = field[0];
    const at = Number(field.slice(1));
    if ((kind !== 'c' && kind !== 'd') || !Number.isSafeInteger(at) || at < first || at > minute) continue;
    const buckets = kind === 'c' ? completed : dead;
    buckets[at - first] = buckets[at - first]! + (Number(value) || 0);
  }
  return { minute: minute * MINUTE_MS, completed, dead };
}

/**
 * Several queues' hours added up minute by minute (a partitioned queue's partitions), aligned on
 * the latest `minute` among them: a partition read just before a minute turned has its buckets
 * moved back one, its oldest dropped. Undefined for none.
 *
 * @example
 * const { lastHour } = addLastHours([a.lastHour, b.lastHour])!;
 */
export function addLastHours(hours: readonly LastHour[]): LastHour | undefined {
  if (hours.length === 0) return undefined;
  const minute = Math.max(...hours.map((h) => h.minute));
  const completed = new Array<number>(LAST_HOUR_MINUTES).fill(0);
  const dead = new Array<number>(LAST_HOUR_MINUTES).fill(0);
  for (const hour of hours) {
    const lag = Math.round((minute - hour.minute) / MINUTE_MS);
    for (let i = lag; i < LAST_HOUR_MINUTES; i++) {
      completed[i - lag] = completed[i - lag]! + (hour.completed[i] ?? 0);
      dead[i - lag] = dead[i - lag]! + (hour.dead[i] ?? 0);
    }
  }
  return { minute, completed, dead };
}
