import type { Redis } from 'ioredis';
import type { RateLimit } from '../src/index.js';

/**
 * Rate-limit checks the suites and the chaos run share: the bound itself over start times (server
 * ms), and a record of a queue's start logs that outlives their trimming.
 */

/** A window of `periodMs` that held more starts than `limit`: the window (end - periodMs, end] and its count. */
export interface OverLimit {
  readonly end: number;
  readonly count: number;
}

/**
 * Every window (t - periodMs, t], t a start time, that holds more than `limit` of `starts` (server
 * ms, any order): the bound a rate limit promises (docs/design.md, "Rate limits and holds"). A start
 * at s counts until s + periodMs, exclusive, as the scripts count it. Empty when the bound held.
 *
 * @example
 * windowsOverLimit([0, 10, 99, 100], { limit: 3, periodMs: 100 }); // [] : (0, 100] holds 10, 99, 100
 * windowsOverLimit([0, 10, 99, 100], { limit: 2, periodMs: 100 }); // [{ end: 99, count: 3 }, { end: 100, count: 3 }]
 */
export function windowsOverLimit(starts: readonly number[], { limit, periodMs }: RateLimit): OverLimit[] {
  const sorted = [...starts].sort((a, b) => a - b);
  const out: OverLimit[] = [];
  let lo = 0;
  for (let i = 0; i < sorted.length; i++) {
    const end = sorted[i]!;
    // the last start at this time closes the window: starts at one ms all count in it
    if (sorted[i + 1] === end) continue;
    while (sorted[lo]! <= end - periodMs) lo++;
    const count = i - lo + 1;
    if (count > limit) out.push({ end, count });
  }
  return out;
}

/** The most starts any window of `periodMs` held (0 for none). */
export function busiestWindow(starts: readonly number[], periodMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let most = 0;
  let lo = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[lo]! <= sorted[i]! - periodMs) lo++;
    most = Math.max(most, i - lo + 1);
  }
  return most;
}

/**
 * A copy of a queue's starts logs (`emq:{q}:starts[:<g>]`, lease token -> the claim's server ms)
 * kept by reading them every `everyMs`: a claim trims a log to its last period and the key
 * expires a period after its newest start, so a poll more often than the shortest period sees
 * every start. The times are the claims' own `now` (TIME, read as the claim began): an `active`
 * event's entry id is taken when its XADD runs, at the script's end, so it can trail the claim
 * by a ms or more and put two starts a period apart into one window. A run that records each
 * handler's lease token checks the copy is whole with `tokens`.
 *
 * @example
 * const logs = new StartsLogCopy(raw, queue.name, ['g']).start();
 * // ... run ...
 * await logs.stop();
 * windowsOverLimit(logs.times('g'), { limit: 10, periodMs: 500 });
 */
export class StartsLogCopy {
  private readonly seen = new Map<string, Map<number, number>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private polling: Promise<void> | undefined;
  private stopped = false;
  /** Polls that failed (a Redis away): a gap in the copy is then possible. */
  failures = 0;
  /** The longest time between two polls that read (ms): a gap over the shortest period may have lost starts. */
  longestGapMs = 0;
  private lastPollAt = 0;

  /**
   * @param entries the logs to copy: group names, or `!` for the queue's own
   */
  constructor(
    private readonly raw: Redis,
    private readonly queue: string,
    private readonly entries: readonly string[],
    private readonly everyMs = 20,
  ) {
    for (const entry of entries) this.seen.set(entry, new Map());
  }

  /** Starts polling; returns at once. */
  start(): this {
    this.lastPollAt = performance.now();
    const loop = async (): Promise<void> => {
      if (this.stopped) return;
      await this.poll();
      if (!this.stopped) this.timer = setTimeout(() => void (this.polling = loop()), this.everyMs);
    };
    this.polling = loop();
    return this;
  }

  /** Stops polling after one last read. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    await this.poll();
  }

  /** Reads every log once into the copy. */
  async poll(): Promise<void> {
    try {
      const pipeline = this.raw.pipeline();
      for (const entry of this.entries) pipeline.zrange(this.keyOf(entry), '0', '-1', 'WITHSCORES');
      const replies = (await pipeline.exec()) ?? [];
      replies.forEach(([error, flat], i) => {
        if (error) throw error;
        const into = this.seen.get(this.entries[i]!)!;
        const pairs = flat as string[];
        for (let j = 0; j + 1 < pairs.length; j += 2) into.set(Number(pairs[j]), Number(pairs[j + 1]));
      });
      const now = performance.now();
      this.longestGapMs = Math.max(this.longestGapMs, now - this.lastPollAt);
      this.lastPollAt = now;
    } catch {
      this.failures++;
    }
  }

  /** The start times of `entry` (server ms), one per start, in token order. */
  times(entry: string): number[] {
    return [...this.seen.get(entry)!.entries()].sort(([a], [b]) => a - b).map(([, at]) => at);
  }

  /** The lease tokens of `entry`'s starts, with when each started (server ms). */
  tokens(entry: string): ReadonlyMap<number, number> {
    return this.seen.get(entry)!;
  }

  private keyOf(entry: string): string {
    return entry === '!' ? `emq:{${this.queue}}:starts` : `emq:{${this.queue}}:starts:${entry}`;
  }
}
