import type { QueueEvent } from '../../src/events/events.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a pause or resume is sent again, after a failure, before the cycles give up (and throw). */
const GIVE_UP_MS = 60_000;

/**
 * Pauses of a queue or of its groups made during a run: each cycle lets it run a while, pauses
 * (`pause(k)`, the k-th cycle's), holds the pause a while, then resumes (`resume(k)`); each call
 * is sent again after a failure (a Redis restart, an edge fault) until it is answered, harmless
 * since a pause of a paused queue changes nothing. The spans themselves are read back from the
 * events stream (pauseSpans), by the server's clock.
 *
 * @example
 * const cycles = new PauseCycles({ pause: () => queue.pause(), resume: () => queue.resume(), runMs: [600, 1500], pausedMs: [800, 2000], rand });
 * cycles.start();
 * await produce;
 * await cycles.stop(); // after its cycle: the queue resumed
 */
export class PauseCycles {
  #on = false;
  #done: Promise<void> = Promise.resolve();
  /** Pauses made (each followed by its resume). */
  cycles = 0;
  /** Calls sent again after a failure. */
  retries = 0;

  constructor(
    private readonly options: {
      readonly pause: (k: number) => Promise<unknown>;
      readonly resume: (k: number) => Promise<unknown>;
      /** How long it runs between two pauses, ms (drawn from [lo, hi]). */
      readonly runMs: readonly [number, number];
      /** How long a pause holds, ms (drawn from [lo, hi]). */
      readonly pausedMs: readonly [number, number];
      readonly rand: () => number;
    },
  ) {}

  start(): void {
    this.#on = true;
    this.#done = (async () => {
      const { pause, resume, runMs, pausedMs, rand } = this.options;
      const between = ([lo, hi]: readonly [number, number]): number => lo + Math.floor(rand() * (hi - lo + 1));
      for (let k = 0; ; k++) {
        await sleep(between(runMs));
        if (!this.#on) return;
        await this.#answered(() => pause(k));
        this.cycles++;
        await sleep(between(pausedMs));
        await this.#answered(() => resume(k));
      }
    })();
  }

  /** Ends the cycles once the one under way is over: resumed. Throws if a call was never answered. */
  async stop(): Promise<void> {
    this.#on = false;
    await this.#done;
  }

  async #answered(call: () => Promise<unknown>): Promise<void> {
    const from = Date.now();
    for (;;) {
      try {
        await call();
        return;
      } catch (error) {
        if (Date.now() - from > GIVE_UP_MS) throw error;
        this.retries++;
        await sleep(50);
      }
    }
  }
}

/**
 * A span the queue (`group` undefined) or a group was paused: by the server's clock (its events'
 * times, ms) and by the events stream's order (the positions of its `paused` and `resumed` events
 * in the stream as read: what happened in the same millisecond as a resume is still before or
 * after it).
 */
export interface PauseSpan {
  readonly group: string | undefined;
  readonly from: number;
  readonly to: number;
  readonly fromAt: number;
  readonly toAt: number;
}

/**
 * The pauses of a queue and of its groups, from its events stream (every event, in order): each
 * `paused` to the next `resumed`, each `group-paused` to its group's next `group-resumed` (a pause
 * still on at the end runs to `end`, and past the stream's last event).
 */
export function pauseSpans(events: readonly QueueEvent[], end: number): PauseSpan[] {
  const spans: PauseSpan[] = [];
  const open = new Map<string | undefined, { from: number; fromAt: number }>();
  events.forEach((e, at) => {
    const group = e.event === 'group-paused' || e.event === 'group-resumed' ? e.group : undefined;
    if (e.event === 'paused' || e.event === 'group-paused') {
      if (!open.has(group)) open.set(group, { from: e.time, fromAt: at });
    } else if (e.event === 'resumed' || e.event === 'group-resumed') {
      const start = open.get(group);
      if (start !== undefined) spans.push({ group, ...start, to: e.time, toAt: at });
      open.delete(group);
    }
  });
  for (const [group, start] of open) spans.push({ group, ...start, to: end, toAt: events.length });
  return spans;
}
