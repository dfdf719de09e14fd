import type { Redis } from 'ioredis';
import type { KeyInfo } from '../../src/queue/key-limits.js';
import type { Queue } from '../../src/queue/queue.js';
import { findViolations, snapshotQueue } from '../../test/invariants.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** A limit as a bound: none is no bound. */
const bound = (limit: number | null | undefined): number => (limit === null || limit === undefined ? Number.POSITIVE_INFINITY : limit);

/** One `setKeyLimit` the scenario made: the limit before and after, when it was sent and answered (undefined: never answered). */
export interface LimitChange {
  readonly key: string;
  readonly from: number | null;
  readonly to: number | null;
  readonly sentAt: number;
  readonly answeredAt: number | undefined;
  readonly tries: number;
  /** Parked jobs it readmitted, as its answer said. */
  readonly readmitted: number | undefined;
}

/**
 * Samples a queue's concurrency keys while a run goes on, `queue.keyLimits()` every `everyMs` and
 * the keyspace checker (test/invariants.ts: its rule (t) holds each key's count equal to its
 * running jobs) every `checkEveryMs`, or five times its last run's time when that is longer (its
 * snapshot holds Redis, its look this process: a fifth of the run at most), and makes the run's limit changes itself, between two
 * samples, each sent again until answered (Redis restarts meanwhile) and recorded with its times.
 *
 * The rule a sample is held to, per limited key: its `running` (the count the claims read, one
 * script's instant with its `limit`) at most the largest of its limit now, the key's count at the
 * previous sample, and every limit in force since then (the previous sample's, each one set in
 * between). Claims start a key's job only while its count is below the limit in force, so the
 * count after the last claim in between is at most that claim's limit, and with no claim in
 * between it only fell: a limit lowered below the jobs running lets them drain, never grow.
 *
 * Kept, so a breach that lasts several samples counts each time: `overLimit` (the breaches, with
 * what was seen), `limitsWrong` (a sample whose limit is not the last one set: a change lost or
 * undone; with a change unanswered, either of its limits is right), `violations` (the checker's,
 * distinct).
 */
export class KeySampler {
  readonly overLimit: string[] = [];
  readonly limitsWrong: string[] = [];
  readonly violations = new Set<string>();
  readonly changes: LimitChange[] = [];
  samples = 0;
  failures = 0;
  checks = 0;
  checkFailures = 0;
  /** The longest snapshot (one script: Redis busy meanwhile) and the longest look at one (this process busy), ms. */
  snapshotMaxMs = 0;
  findMaxMs = 0;
  /** The time spent checking, ms, over the loop's time. */
  checkMs = 0;
  /** Samples where a key ran above its limit now, allowed because it was lowered with those running. */
  aboveLowered = 0;
  readonly maxRunning: Record<string, number> = {};
  readonly maxParked: Record<string, number> = {};
  /** Per key, the most its next sample may show running (see the rule). */
  readonly #carry = new Map<string, number>();
  /** Per key, the limit last set, and the one before it while that change is unanswered. */
  readonly #limits = new Map<string, { now: number | null; or?: number | null }>();
  readonly #due: Array<{ key: string; limit: number | null; done: () => void }> = [];
  #running = false;
  #loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly queue: Queue<unknown>,
    private readonly raw: Redis,
    private readonly queueName: string,
    initial: ReadonlyMap<string, number | null>,
    private readonly everyMs = 50,
    private readonly checkEveryMs = 1_000,
    private readonly giveUpMs = 30_000,
  ) {
    for (const [key, limit] of initial) {
      this.#limits.set(key, { now: limit });
      this.#carry.set(key, bound(limit));
    }
  }

  /** The limit the scenario last set for `key` (null: none). */
  limitOf(key: string): number | null {
    return this.#limits.get(key)?.now ?? null;
  }

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      // the checker's turn comes every checkEveryMs, or later: its snapshot holds Redis and its look
      // this process, so it takes at most a fifth of the run however large the keyspace grows
      let nextCheck = 0;
      while (this.#running) {
        const change = this.#due.shift();
        if (change) {
          await this.#apply(change.key, change.limit);
          change.done();
        }
        await this.sample().catch(() => void this.failures++);
        if (performance.now() >= nextCheck) {
          const from = performance.now();
          await this.check().catch(() => void this.checkFailures++);
          const took = performance.now() - from;
          nextCheck = from + Math.max(this.checkEveryMs, 5 * took);
        }
        await sleep(this.everyMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    // changes asked after the loop's end: made now
    for (const change of this.#due.splice(0)) {
      await this.#apply(change.key, change.limit);
      change.done();
    }
  }

  /** Sets `key`'s limit between two samples (the loop's next turn); resolves once answered or given up. */
  setLimit(key: string, limit: number | null): Promise<void> {
    if (!this.#running) return this.#apply(key, limit);
    return new Promise((done) => this.#due.push({ key, limit, done }));
  }

  async #apply(key: string, limit: number | null): Promise<void> {
    const from = this.limitOf(key);
    // from the first send on, either limit may be in force until it is answered
    this.#limits.set(key, { now: limit, or: from });
    this.#carry.set(key, Math.max(this.#carry.get(key) ?? Number.POSITIVE_INFINITY, bound(from), bound(limit)));
    const sentAt = Date.now();
    let tries = 0;
    while (Date.now() - sentAt < this.giveUpMs) {
      tries++;
      try {
        const readmitted = await this.queue.setKeyLimit(key, limit);
        this.#limits.set(key, { now: limit });
        this.changes.push({ key, from, to: limit, sentAt, answeredAt: Date.now(), tries, readmitted });
        return;
      } catch {
        await sleep(100);
      }
    }
    this.changes.push({ key, from, to: limit, sentAt, answeredAt: undefined, tries, readmitted: undefined });
  }

  /** One keyLimits sample now, held to the rule. */
  async sample(): Promise<KeyInfo[]> {
    const infos = await this.queue.keyLimits();
    this.samples++;
    for (const { key, limit, running, parked } of infos) {
      this.maxRunning[key] = Math.max(this.maxRunning[key] ?? 0, running);
      this.maxParked[key] = Math.max(this.maxParked[key] ?? 0, parked);
      const set = this.#limits.get(key);
      if (set ? limit !== set.now && (!('or' in set) || limit !== set.or) : limit !== null) {
        this.limitsWrong.push(`${key}: limit ${limit} read, ${set ? `${set.now}${'or' in set ? ` or ${set.or}` : ''}` : 'none'} set`);
      }
      const allowed = Math.max(bound(limit), this.#carry.get(key) ?? Number.POSITIVE_INFINITY);
      if (running > allowed) this.overLimit.push(`${key}: ${running} running, limit ${limit}, at most ${allowed} allowed (sample ${this.samples})`);
      if (running > bound(limit)) this.aboveLowered++;
      this.#carry.set(key, Math.max(bound(limit), running));
    }
    return infos;
  }

  /** One run of the keyspace checker now; its violations kept, distinct. */
  async check(): Promise<string[]> {
    const from = performance.now();
    const snap = await snapshotQueue(this.raw, this.queueName);
    const read = performance.now();
    const found = findViolations(snap);
    const done = performance.now();
    this.checks++;
    this.snapshotMaxMs = Math.max(this.snapshotMaxMs, Math.round(read - from));
    this.findMaxMs = Math.max(this.findMaxMs, Math.round(done - read));
    this.checkMs += done - from;
    for (const v of found) this.violations.add(v);
    return found;
  }
}
