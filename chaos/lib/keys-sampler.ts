import type { Redis } from 'ioredis';
import type { KeyInfo } from '../../src/queue/key-limits.js';
import type { Queue } from '../../src/queue/queue.js';
import type { RateLimit } from '../../src/queue/rate-limits.js';
import { findViolations, snapshotQueue } from '../../test/invariants.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** A limit as a bound: none is no bound. */
const bound = (limit: number | null | undefined): number => (limit === null || limit === undefined ? Number.POSITIVE_INFINITY : limit);
/** A rate as text, for comparing and showing: "limit/periodMs", or "none". */
export const rateText = (rate: RateLimit | null | undefined): string => (rate ? `${rate.limit}/${rate.periodMs}` : 'none');

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

/** One `setKeyRateLimit` the scenario made, as a LimitChange records a limit's. */
export interface RateChange {
  readonly key: string;
  readonly from: RateLimit | null;
  readonly to: RateLimit | null;
  readonly sentAt: number;
  readonly answeredAt: number | undefined;
  readonly tries: number;
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
 * what was seen), `limitsWrong` (a sample whose limit, or rate limit, is not the last one set: a
 * change lost or undone; with a change unanswered, either is right; and a key throttled by its rate
 * with no rate), `violations` (the checker's, distinct).
 *
 * Rate limits (`setKeyRateLimit`) are changed the same way (`setRate`, `rateChanges`); a sample
 * cannot see a key's starts (the events stream judges them: chaos/lib/keys-accounting.ts), only its
 * rate and whether its rate throttles it (`throttledSamples`, per key).
 */
export class KeySampler {
  readonly overLimit: string[] = [];
  readonly limitsWrong: string[] = [];
  readonly violations = new Set<string>();
  readonly changes: LimitChange[] = [];
  readonly rateChanges: RateChange[] = [];
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
  /** Per key, the samples that found it throttled by its rate (jobs parked on it until one more start fits). */
  readonly throttledSamples: Record<string, number> = {};
  /** Per key, the most its next sample may show running (see the rule). */
  readonly #carry = new Map<string, number>();
  /** Per key, the limit last set, and the one before it while that change is unanswered. */
  readonly #limits = new Map<string, { now: number | null; or?: number | null }>();
  /** Per key, the rate last set, and the one before it while that change is unanswered. */
  readonly #rates = new Map<string, { now: RateLimit | null; or?: RateLimit | null }>();
  readonly #due: Array<{ key: string; change: { limit: number | null } | { rate: RateLimit | null }; done: () => void }> = [];
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
    initialRates: ReadonlyMap<string, RateLimit | null> = new Map(),
  ) {
    for (const [key, limit] of initial) {
      this.#limits.set(key, { now: limit });
      this.#carry.set(key, bound(limit));
    }
    for (const [key, rate] of initialRates) this.#rates.set(key, { now: rate });
  }

  /** The limit the scenario last set for `key` (null: none). */
  limitOf(key: string): number | null {
    return this.#limits.get(key)?.now ?? null;
  }

  /** The rate limit the scenario last set for `key` (null: none). */
  rateOf(key: string): RateLimit | null {
    return this.#rates.get(key)?.now ?? null;
  }

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      // the checker's turn comes every checkEveryMs, or later: its snapshot holds Redis and its look
      // this process, so it takes at most a fifth of the run however large the keyspace grows
      let nextCheck = 0;
      while (this.#running) {
        const due = this.#due.shift();
        if (due) {
          await this.#make(due);
          due.done();
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
    for (const due of this.#due.splice(0)) {
      await this.#make(due);
      due.done();
    }
  }

  #make(due: { key: string; change: { limit: number | null } | { rate: RateLimit | null } }): Promise<void> {
    return 'rate' in due.change ? this.#applyRate(due.key, due.change.rate) : this.#apply(due.key, due.change.limit);
  }

  /** Sets `key`'s limit between two samples (the loop's next turn); resolves once answered or given up. */
  setLimit(key: string, limit: number | null): Promise<void> {
    if (!this.#running) return this.#apply(key, limit);
    return new Promise((done) => this.#due.push({ key, change: { limit }, done }));
  }

  /** Sets `key`'s rate limit (null: lifts it) between two samples, as setLimit does a limit. */
  setRate(key: string, rate: RateLimit | null): Promise<void> {
    if (!this.#running) return this.#applyRate(key, rate);
    return new Promise((done) => this.#due.push({ key, change: { rate }, done }));
  }

  async #applyRate(key: string, rate: RateLimit | null): Promise<void> {
    const from = this.rateOf(key);
    this.#rates.set(key, { now: rate, or: from });
    const sentAt = Date.now();
    let tries = 0;
    while (Date.now() - sentAt < this.giveUpMs) {
      tries++;
      try {
        const readmitted = await this.queue.setKeyRateLimit(key, rate);
        this.#rates.set(key, { now: rate });
        this.rateChanges.push({ key, from, to: rate, sentAt, answeredAt: Date.now(), tries, readmitted });
        return;
      } catch {
        await sleep(100);
      }
    }
    this.rateChanges.push({ key, from, to: rate, sentAt, answeredAt: undefined, tries, readmitted: undefined });
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
    for (const { key, limit, running, parked, rate, throttledUntil } of infos) {
      this.maxRunning[key] = Math.max(this.maxRunning[key] ?? 0, running);
      this.maxParked[key] = Math.max(this.maxParked[key] ?? 0, parked);
      const set = this.#limits.get(key);
      if (set ? limit !== set.now && (!('or' in set) || limit !== set.or) : limit !== null) {
        this.limitsWrong.push(`${key}: limit ${limit} read, ${set ? `${set.now}${'or' in set ? ` or ${set.or}` : ''}` : 'none'} set`);
      }
      const rateSet = this.#rates.get(key);
      const read = rateText(rate);
      if (rateSet ? read !== rateText(rateSet.now) && (!('or' in rateSet) || read !== rateText(rateSet.or)) : rate !== null) {
        this.limitsWrong.push(`${key}: rate ${read} read, ${rateSet ? `${rateText(rateSet.now)}${'or' in rateSet ? ` or ${rateText(rateSet.or)}` : ''}` : 'none'} set`);
      }
      if (throttledUntil !== null) {
        this.throttledSamples[key] = (this.throttledSamples[key] ?? 0) + 1;
        if (rate === null) this.limitsWrong.push(`${key}: throttled until ${throttledUntil} with no rate (sample ${this.samples})`);
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
