import { encodeProgress } from '../encode.js';
import { InvalidArgumentError, shown } from '../errors.js';
import type { QueuePartition } from '../queue/surface.js';
import { beatOp } from '../ops/beat.js';
import { type ClaimResult, claimOp } from '../ops/claim.js';
import { type CompleteItem, completeOp } from '../ops/complete.js';
import { extendOp, type Renewal } from '../ops/extend.js';
import { type FailItem, failOp } from '../ops/fail.js';
import { fireSchedulersOp } from '../ops/fire-schedulers.js';
import type { Held, ScriptOp } from '../ops/op.js';
import { progressOp } from '../ops/progress.js';
import { promoteOp } from '../ops/promote.js';
import { reapOp } from '../ops/reap.js';
import { type ReleaseItem, type ReleaseOutcome, releaseOp } from '../ops/release.js';
import { type RetryItem, type RetryOutcome, retryOp } from '../ops/retry.js';
import { suspendOp } from '../ops/suspend.js';
import type { StepHost } from '../steps/job-steps.js';
import { LeaseSteps } from './lease-steps.js';
import { runCalls, Scripts } from '../ops/scripts.js';
import type { Replication, Reply, ScriptCall, Transport } from '../transport.js';
import { type DurabilityOptions, replicationOf } from '../durability.js';
import { randomHex } from '../random-hex.js';
import { findOpenTelemetry } from '../telemetry/opentelemetry.js';
import { traceSettles } from '../telemetry/telemetry.js';
import { nextAfterFiring } from '../schedulers/schedulers.js';
import { relayOrLeave } from '../flows/flow-relay.js';
import { claimedOf } from './claimed.js';
import { assertCount, type BeatOptions, type Claimed, type ClaimCall, type Completed, type PreparedRound, type Round, type RoundResult, type Settled } from './rounds.js';
import { leaseOf, settleItems } from './settle-items.js';

export type { BeatOptions, Claimed, ClaimCall, Completed, Finished, PreparedRound, Round, RoundResult, Settled } from './rounds.js';
export { readRiddenRound, sendRounds } from './send-rounds.js';

/** How long after a firing that failed its slots are looked at again, in ms. */
const FIRE_RETRY_MS = 1000;

interface RoundState {
  readonly settled: Settled[];
  givenBack: ReleaseOutcome[];
  claimed: ClaimResult | null;
  readonly outbox: string[];
}

/**
 * The lease protocol of one queue, the only way a consumer touches Redis: claim, beat (reap,
 * promote, claim), settle (complete, retry, fail), give back, extend, reap and promote. Both
 * runtimes drive it: the Node consumer from its parked loop, the edge from its bounded beat; each
 * keeps only its own scheduling. `round()` is the consumer's request: what finished plus what to
 * claim, in one round trip, answered as typed results.
 *
 * @example
 * const leases = new Leases(queue);
 * let { claimed } = await leases.round({ claim: 10, leaseMs: 30_000 });
 * const finished = claimed!.jobs.map((job) => ({ job, outcome: { kind: 'complete' } as const }));
 * ({ claimed } = await leases.round({ finished, claim: 10, leaseMs: 30_000 }));
 */
export class Leases<Payload = unknown> {
  /** The name of the queue these leases are of. */
  readonly queue: string;
  /** Round trips sent through this object (a NOSCRIPT retry counts): what an edge beat spends. */
  requests = 0;
  /**
   * Told the queues in which relaying this queue's flow news released parents (their doorbells
   * rung): a runtime that cannot park on a doorbell (the Worker) drains them. Unset: nothing.
   */
  onRelease: ((queues: readonly string[]) => void) | undefined;
  /** Relays of flow news in flight (round() does not wait for them: `relayed()` does). */
  private readonly relaying = new Set<Promise<void>>();
  private readonly scripts: Scripts;
  private readonly transport: Transport;
  private readonly keepCompletedMs: number;
  private readonly maxResultBytes: number;
  /** What a settle waits for after Redis ran it (durability), undefined for nothing. */
  private readonly replication: Replication | undefined;
  private readonly keyPrefix = randomHex();
  /** Where this queue's handlers record their durable steps (`runHandler`'s `steps`: src/lease/lease-steps.ts). */
  readonly steps: StepHost;
  private claims = 0;
  private readonly countRequest = (): void => {
    this.requests++;
  };

  /**
   * @param options when settles count as done (default: as the queue's enqueues, `queue.replication`):
   *   with `durability: 'replicated'`, a round that settles jobs, and complete, retry and fail,
   *   wait for a replica in the same round trip, and reject with ReplicationError when none
   *   acknowledged in time (a settle is harmless twice: send it again). Claims, beats, give-backs
   *   and renewals never wait: losing one in a failover costs a lease, not a job.
   */
  constructor(queue: QueuePartition<Payload>, options: DurabilityOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
    this.replication = replicationOf(options, queue.replication);
    this.queue = queue.name;
    this.transport = queue.transport;
    this.keepCompletedMs = queue.keepCompletedMs;
    this.maxResultBytes = queue.maxResultBytes;
    this.scripts = new Scripts(queue.transport, queue.name, this.countRequest);
    this.steps = new LeaseSteps(this.scripts, queue, this.countRequest);
  }

  /**
   * Records what finished, gives back, and claims, in one round trip (see Round). When the request
   * fails and `again(error, failures)` resolves true, the same request goes again: every part of a
   * round is harmless twice (a settle repeated answers what the first did, a give-back repeated
   * is fenced, the claim carries its request key and a repeat answers the same jobs), so a reply
   * lost after Redis ran the round costs a round trip, not a lease. Flow news the round wrote is
   * relayed to the parents' queues after it resolves, without holding up the jobs it claimed
   * (`relayed()` waits for it; news a relay could not deliver, a later beat delivers).
   */
  async round(round: Round, again?: (error: unknown, failures: number) => Promise<boolean>): Promise<RoundResult<Payload>> {
    const looking = findOpenTelemetry();
    if (looking) await looking;
    const prepared = this.prepare(round);
    if (prepared.calls.length === 0) return prepared.read([]);
    let result: RoundResult<Payload>;
    for (let failures = 0; ; failures++) {
      try {
        result = prepared.read(await this.send(prepared.calls, prepared.replication));
        break;
      } catch (error) {
        if (!(await again?.(error, failures))) throw error;
      }
    }
    this.relayLater(result.outbox);
    if (!result.claimed || result.claimed.dueSchedulers.length === 0) return result;
    // the round is recorded whatever the firing does; the firing goes again as the round would
    return { ...result, claimed: await this.fireDueOrDefer(result.claimed, again) };
  }

  /**
   * `fireDue`, never failing. A firing whose request failed goes again while `again(error,
   * failures)` resolves true (harmless: a repeat is fenced by the revision the first moved); once
   * it gives up, the slots stay due and the answer's next due time is a second from the beat's, so
   * the caller's timer (or an edge drain's sleep) tries again then rather than at once, spending a
   * request a second at most on a Redis that keeps failing.
   */
  async fireDueOrDefer(claimed: Claimed<Payload>, again?: (error: unknown, failures: number) => Promise<boolean>): Promise<Claimed<Payload>> {
    for (let failures = 0; ; failures++) {
      try {
        return await this.fireDue(claimed);
      } catch (error) {
        if (!(await again?.(error, failures))) return { ...claimed, dueSchedulers: [], nextDueAt: claimed.now + FIRE_RETRY_MS };
      }
    }
  }

  /**
   * Fires the scheduler slots a beat saw due (`claimed.dueSchedulers`; docs/design.md,
   * "Schedulers"): works out each one's next slot from its spec (after the slot and after the
   * server's time then, so a scheduler late by several slots fires one catch-up job) and sends
   * one fire-schedulers call, fenced on what the beat read, so a slot another runtime fired
   * first writes nothing. Answers `claimed` with the slots fired and the next due time after
   * them; `claimed` itself when nothing was due.
   */
  async fireDue(claimed: Claimed<Payload>): Promise<Claimed<Payload>> {
    const due = claimed.dueSchedulers;
    if (due.length === 0) return claimed;
    const items = due.map((d) => ({ id: d.id, revision: d.revision, slot: d.slot, next: nextAfterFiring(d, claimed.now) }));
    const fired = await this.scripts.run(fireSchedulersOp(items));
    return { ...claimed, dueSchedulers: [], fired: claimed.fired + fired.fired, nextDueAt: fired.nextDueAt };
  }

  /** A Round's calls without sending them, to share a round trip with other queues' (sendRounds). */
  prepare(round: Round): PreparedRound<Payload> {
    const { finished = [], giveBack = [], claim = 0, beat = false, leaseMs } = round;
    assertCount('claim', claim, 0);
    assertCount('leaseMs', leaseMs, 1);
    // when the request goes out: the start of its settle and receive spans (README, "Telemetry")
    const sentAt = Date.now();
    const { retry, fail, complete, hold, suspend } = settleItems(finished, this.maxResultBytes);
    const calls: ScriptCall[] = [];
    const readers: Array<(reply: Reply, state: RoundState) => void> = [];
    const add = <T>(op: ScriptOp<T>, take: (value: T, state: RoundState) => void): void => {
      const bound = this.scripts.bind(op);
      calls.push(bound.call);
      readers.push((reply, state) => take(bound.read(reply), state));
    };
    const settle = (indices: readonly number[], outcomes: readonly Settled[], state: RoundState): void =>
      indices.forEach((index, i) => (state.settled[index] = outcomes[i] ?? 'fenced'));

    if (retry.items.length > 0) {
      add(retryOp(retry.items), ({ value, outbox }, state) => {
        settle(retry.indices, value, state);
        state.outbox.push(...outbox);
      });
    }
    if (fail.items.length > 0) {
      add(failOp(fail.items), ({ value, outbox }, state) => {
        settle(fail.indices, value, state);
        state.outbox.push(...outbox);
      });
    }
    // suspended at a durable step: before the claim, which may take a job whose step was over at once
    if (suspend.items.length > 0) add(suspendOp(suspend.items), (outcomes, state) => settle(suspend.indices, outcomes, state));
    if (giveBack.length > 0 || hold.items.length > 0) {
      add(releaseOp([...giveBack.map(leaseOf), ...hold.items]), ({ value, outbox }, state) => {
        state.givenBack = value.slice(0, giveBack.length);
        settle(hold.indices, value.slice(giveBack.length).map((o) => (o === 'released' ? 'pending' : o)), state);
        state.outbox.push(...outbox);
      });
    }
    const claimWithComplete = beat ? 0 : claim;
    if (complete.items.length > 0 || claimWithComplete > 0) {
      add(
        completeOp(complete.items, { keepMs: this.keepCompletedMs, claimN: claimWithComplete, leaseMs, requestKey: this.claimKey(claimWithComplete) }),
        ({ outcomes, claimed, outbox }, state) => {
          settle(complete.indices, outcomes, state);
          state.claimed = claimed;
          state.outbox.push(...outbox);
        },
      );
    }
    // a beat reaps and promotes even when it claims nothing (a consumer with no room still beats)
    if (beat) {
      add(this.beatOp({ n: claim, leaseMs }), (claimed, state) => {
        state.claimed = claimed;
        state.outbox.push(...claimed.outbox);
      });
    }

    return {
      queue: this.queue,
      onRelease: this.onRelease,
      calls,
      replication: finished.length > 0 ? this.replication : undefined,
      read: (replies) => {
        const state: RoundState = { settled: new Array<Settled>(finished.length).fill('fenced'), givenBack: [], claimed: null, outbox: [] };
        readers.forEach((reader, i) => reader(replies[i]!, state));
        traceSettles(this.queue, sentAt, finished, state.settled);
        return { settled: state.settled, givenBack: state.givenBack, claimed: state.claimed && this.decode(state.claimed, sentAt), outbox: state.outbox };
      },
    };
  }

  /** Leases up to `n` jobs for `leaseMs`, one turn of the ring each. */
  async claim(n: number, leaseMs: number): Promise<Claimed<Payload>> {
    assertCount('n', n, 1);
    assertCount('leaseMs', leaseMs, 1);
    const sentAt = Date.now();
    return this.decode(await this.scripts.run(claimOp(n, leaseMs, this.claimKey(n))), sentAt);
  }

  /** A claim to send behind a blocking pop, and how to read its reply. */
  claimCall(n: number, leaseMs: number): ClaimCall<Payload> {
    assertCount('n', n, 1);
    assertCount('leaseMs', leaseMs, 1);
    const op = this.scripts.bind(claimOp(n, leaseMs, this.claimKey(n)));
    // a receive that waits behind a blocking pop: its span covers the wait, as a long poll's does
    const sentAt = Date.now();
    return { call: op.call, read: (reply) => this.decode(op.read(reply), sentAt) };
  }

  /**
   * One consumer step in one call: reap, promote, then claim up to `n` (0: claim nothing). Its
   * reply carries the next due time and lease deadline even when it claimed `n`. Scheduler slots
   * it saw due are fired right after, in a second call (`fireDueOrDefer`: a firing that fails
   * leaves them due, looked at again a second later).
   */
  async beat(options: BeatOptions): Promise<Claimed<Payload>> {
    const sentAt = Date.now();
    const beat = await this.scripts.run(this.beatOp(options));
    await this.relay(beat.outbox);
    return this.fireDueOrDefer(this.decode(beat, sentAt));
  }

  /**
   * Completes held jobs, each with its result when it has one (JSON text within the queue's
   * `maxResultBytes`, as `round` checks it); per job `completed` true when recorded, and its
   * `outcomes`: `completed`, `cancelled` (its cancel was asked while it ran) or `fenced` (its lease
   * was lost). With `claimN`, the same call claims up to that many next jobs (`claimed`, else null).
   */
  async complete(held: readonly CompleteItem[], options: { claimN?: number; leaseMs?: number } = {}): Promise<Completed<Payload>> {
    const requestKey = this.claimKey(options.claimN ?? 0);
    const { outcomes, claimed, outbox } = await this.scripts.run(completeOp(held, { keepMs: this.keepCompletedMs, ...options, requestKey }), this.replication);
    await this.relay(outbox);
    return { completed: outcomes.map((o) => o === 'completed'), outcomes, claimed: claimed && this.decode(claimed) };
  }

  /** Retries failed attempts with their backoff (or `delayMs`), dead once attempts are used up. */
  async retry(items: readonly RetryItem[]): Promise<RetryOutcome[]> {
    const { value, outbox } = await this.scripts.run(retryOp(items), this.replication);
    await this.relay(outbox);
    return value;
  }

  /** Fails held jobs for good: straight to dead. */
  async fail(items: readonly FailItem[]): Promise<Array<'dead' | 'cancelled' | 'fenced'>> {
    const { value, outbox } = await this.scripts.run(failOp(items), this.replication);
    await this.relay(outbox);
    return value;
  }

  /**
   * Resolves once the relays of flow news that round() started have ended: a runtime about to
   * stop (or an edge event about to end) waits for them, so the parents hear now rather than
   * from a later beat.
   */
  async relayed(): Promise<void> {
    while (this.relaying.size > 0) await Promise.all([...this.relaying]);
  }

  /** Relays `outbox` in the background (round's news), tracked for relayed(). */
  private relayLater(outbox: readonly string[]): void {
    if (outbox.length === 0) return;
    const relay: Promise<void> = this.relay(outbox).finally(() => this.relaying.delete(relay));
    this.relaying.add(relay);
  }

  /**
   * Relays flow news this queue's scripts wrote (src/flows/flow-relay.ts), never failing: news whose
   * relay failed stays in the outbox, and a later beat of this queue relays it.
   */
  private async relay(outbox: readonly string[]): Promise<void> {
    await relayOrLeave(this.transport, this.queue, outbox, this.countRequest, this.onRelease);
  }

  /**
   * Gives back held jobs that were never started: claimable again, the claim not counted; one
   * with a `holdMs` holds its group (or the ungrouped lane) that long too.
   */
  async release(held: readonly ReleaseItem[]): Promise<ReleaseOutcome[]> {
    const { value, outbox } = await this.scripts.run(releaseOp(held));
    await this.relay(outbox);
    return value;
  }

  /**
   * Writes `value` as the progress of each held job (`JobRecord.progress`), fenced by its lease:
   * per job, true when written, false when its holder lost the lease (nothing written). One round
   * trip per call, never batched: a handler's `context.progress` is this. Rejects with
   * InvalidArgumentError before any write unless `value` is a number from 0 to 100 or a JSON value
   * of at most 4 KiB.
   *
   * @example
   * const [written] = await leases.progress([{ id: job.id, token: job.token }], 50);
   */
  async progress(held: readonly Held[], value: unknown): Promise<boolean[]> {
    const text = encodeProgress(value);
    if (held.length === 0) return [];
    return this.scripts.run(progressOp(held.map(leaseOf), text));
  }

  /** Renews leases: per job its new deadline, `{ cancel }` when its cancel was asked (see Renewal), or null when its holder lost it. */
  extend(held: readonly Held[], leaseMs: number): Promise<Renewal[]> {
    assertCount('leaseMs', leaseMs, 1);
    return this.scripts.run(extendOp(held, leaseMs));
  }

  /** Moves up to `limit` due scheduled jobs to be claimed. */
  promote(limit = 1000): Promise<{
    /** Jobs moved to be claimed. */
    promoted: number;
    /** When the next scheduled job falls due (server time, epoch ms), null for none. */
    nextDueAt: number | null;
  }> {
    assertCount('limit', limit, 1);
    return this.scripts.run(promoteOp(limit));
  }

  /** Takes back up to `limit` expired leases. */
  reap(limit = 1000): Promise<{
    /** Jobs back to be claimed, their attempt counted. */
    requeued: number;
    /** Jobs sent to dead: that lapsed lease was their last attempt. */
    buried: number;
  }> {
    assertCount('limit', limit, 1);
    return this.scripts.run(reapOp(limit));
  }

  private beatOp(options: BeatOptions): ScriptOp<ClaimResult> {
    assertCount('n', options.n, 0);
    assertCount('leaseMs', options.leaseMs, 1);
    return beatOp({ reapLimit: 1000, promoteLimit: 1000, ...options, requestKey: this.claimKey(options.n) });
  }

  /**
   * The request key of a claim of `n` jobs ("" when it claims none): the same request sent again
   * (its reply lost) answers the same jobs (lua/claim.lua). A random prefix once, then a count.
   */
  private claimKey(n: number): string {
    return n > 0 ? `c:${this.keyPrefix}${(this.claims++).toString(36)}` : '';
  }

  private async send(calls: readonly ScriptCall[], replication: Replication | undefined): Promise<Reply[]> {
    return runCalls(this.transport, calls, this.countRequest, replication);
  }

  /** A claim's rows as jobs with decoded payloads; its `receive` span, from `sentAt`, when it claimed any. */
  private decode(result: ClaimResult, sentAt?: number): Claimed<Payload> {
    return claimedOf<Payload>(this.queue, result, sentAt);
  }
}
