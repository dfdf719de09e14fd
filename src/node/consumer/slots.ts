import type { HeldJob } from './jobs-in-hand.js';
import type { SettleCall, SettleEntry } from './settles.js';
import type { StepHost } from '../../steps/job-steps.js';

/**
 * The most slots (concurrency) a consumer has, and jobs a batch takes: a claim asks for the free
 * slots' jobs plus prefetch, a count Lua must read exactly (past 2^53 it is not an integer).
 */
export const MAX_SLOTS = 1_000_000;

/**
 * How a parked consumer's slots take jobs, in place of methods a subclass overrides: how many to
 * claim and to start, and how claimed jobs run. `SingleSlots` (Consumer) runs one job per slot,
 * `BatchSlots` (BatchConsumer) one batch per slot. The loop and its requests ask the counts; the
 * runs hand it jobs to start (dispatch), and it runs them through the host they pass.
 *
 * @example
 * const loop = new Loop(transport, queue, settingsOf(options), new SingleSlots(handler, options));
 */
export interface SlotStrategy<Payload> {
  /**
   * How many jobs to claim now for the slots, not counting prefetch, given the jobs `held`
   * (running or settling): the slots less the jobs in hand until their settles are recorded
   * (negative when prefetched jobs run while others settle).
   */
  capacity(held: number): number;
  /** How many jobs could start now: the slots less the handlers running (settling ones not counted). */
  startable(): number;
  /** How many jobs 'auto' prefetches while handlers are short (the jobs the slots hold). */
  prefetchSize(): number;
  /** The jobs one run takes: a request claims whole runs' worth, so none starts short for being split. */
  readonly claimUnit: number;
  /** How many more jobs the loop may claim once `calls` (settle calls) are recorded. */
  freedBy(calls: ReadonlyArray<SettleCall<Payload>>): number;
  /** Starts running claimed jobs (never more than startable()); each must end in `host.settle`. */
  dispatch(jobs: ReadonlyArray<HeldJob<Payload>>, host: SlotHost<Payload>): void;
}

/**
 * What a strategy's runs use of the consumer: the Runs passes itself.
 *
 * @example
 * const held = host.start(waiting);
 * host.keep(run(held).then((outcome) => host.settle([{ held, outcome }])));
 */
export interface SlotHost<Payload> {
  /** The queue the jobs come from: their `process` spans name it (README, "Telemetry"). */
  readonly queue: string;
  /** Takes a waiting job into hand as it starts (a batch's jobs share the batch's controller). */
  start(waiting: HeldJob<Payload>, controller?: AbortController): HeldJob<Payload>;
  /**
   * Records how held jobs ended and frees their slots; resolves once recorded (see Settles).
   * Settles of one event-loop turn go out together, riding with the loop's claim when it has one.
   */
  settle(entries: ReadonlyArray<SettleEntry<Payload>>): Promise<void>;
  /** A handler ended after `ms` (its settle not yet recorded): prefetch learns it, its slot takes the next waiting job. */
  handlerEnded(ms: number): void;
  /**
   * Writes a handler's progress report to each of `jobs` (one for a Consumer, the batch for a
   * BatchConsumer) in one round trip: true when every one was written. A job whose lease turns
   * out lost is fenced and its run aborted, as a refused renewal does.
   */
  progress(jobs: ReadonlyArray<HeldJob<Payload>>, value: unknown): Promise<boolean>;
  /** Where a Consumer's handlers record their durable steps (docs/guides/steps.md); none: a step is a StepError. */
  readonly steps?: StepHost | undefined;
  /** Keeps a running job's promise so stop() can wait for it. */
  keep(run: Promise<void>): void;
  /** Tells a loop waiting for a free slot to look again: call whenever capacity() may have grown. */
  slotFreed(): void;
}
