import type { Redis } from 'ioredis';
import { epochMs } from './stats.js';

/** Redis's clock against this process's: how far ahead Redis TIME is, and how well that is known. */
export interface ClockOffset {
  /** Redis TIME minus `epochMs()` at the same instant, ms. */
  readonly offset: number;
  /** The most `offset` can be off by, ms: half the round trip of the TIME call it came from. */
  readonly error: number;
}

/**
 * Redis TIME minus this process's `epochMs()`, from the TIME call with the shortest round trip of
 * `samples`, taken as read at that round trip's middle. On one machine both read the same wall
 * clock, so it is ~0; a server time (a slot, a due time the scripts set) plus nothing, minus a
 * local time plus `offset`, is then a duration good to `error`.
 */
export async function clockOffset(admin: Redis, samples = 20): Promise<ClockOffset> {
  let best: ClockOffset = { offset: 0, error: Infinity };
  for (let i = 0; i < samples; i++) {
    const t0 = epochMs();
    const [seconds, micros] = await admin.time();
    const t1 = epochMs();
    const server = Number(seconds) * 1000 + Number(micros) / 1000;
    if ((t1 - t0) / 2 < best.error) best = { offset: server - (t0 + t1) / 2, error: (t1 - t0) / 2 };
  }
  return best;
}
