/**
 * The hooks a parked consumer (Consumer, BatchConsumer) calls, and how: a throw is ignored. Part
 * of the public vocabulary with options.ts and errors.ts, kept apart from the loop so its parts
 * share them without importing the loop.
 */

import type { Job } from '../../job.js';

/**
 * What a consumer tells about the jobs it runs. A hook that throws is ignored.
 *
 * @example
 * new Consumer(transport, 'mail', handler, {
 *   hooks: { onDead: (job, { error }) => console.error(`${job.id} is dead: ${error}`) },
 * });
 */
export interface ConsumerHooks<Payload> {
  /** A handler started on `job`. */
  onStarted?(job: Job<Payload>): void;
  /** `job` completed, its handler having run `durationMs`. */
  onCompleted?(job: Job<Payload>, info: { durationMs: number }): void;
  /** A failed attempt that will run again: `outcome` says whether now or after a delay. */
  onRetried?(job: Job<Payload>, info: { durationMs: number; error: string; outcome: 'pending' | 'scheduled' }): void;
  /**
   * `job`'s handler suspended at durable step `step` (a sleep, a wait for an event, an invoke:
   * docs/guides/steps.md): `state` is where the job waits (`scheduled` asleep, `awaiting` an
   * event, `waiting` for its child), or `pending` when the step was over at once.
   */
  onSuspended?(job: Job<Payload>, info: { durationMs: number; step: string; state: 'pending' | 'scheduled' | 'awaiting' | 'waiting' }): void;
  /**
   * `job` ended cancelled: its cancel was asked while it ran (`queue.cancel`), and its settle
   * recorded that whatever the handler returned (docs/guides/job-controls.md).
   */
  onCancelled?(job: Job<Payload>, info: { durationMs: number }): void;
  /** `job` went to dead: its last attempt failed, or it failed for good; `error` is its last error. */
  onDead?(job: Job<Payload>, info: { durationMs: number; error: string }): void;
  /** The consumer lost the job's lease (it was reaped or removed): its result was not recorded. */
  onFenced?(job: Job<Payload>): void;
  /** Redis trouble or a failed settle: the consumer backs off and goes on. */
  onError?(error: unknown): void;
}

/**
 * Calls one hook if it is set. A hook that throws is ignored: it must never stop the loop, nor
 * keep a settle from being recorded.
 *
 * @example
 * fireHook(hooks, 'onStarted', job);
 */
export function fireHook<Payload, K extends keyof ConsumerHooks<Payload>>(
  hooks: ConsumerHooks<Payload>,
  name: K,
  ...args: Parameters<NonNullable<ConsumerHooks<Payload>[K]>>
): void {
  try {
    (hooks[name] as ((...a: typeof args) => void) | undefined)?.(...args);
  } catch {
    // a hook must never stop the loop
  }
}
