/**
 * The errors of the BullMQ layer: BullMQ's own exported classes, with BullMQ's constructors, and
 * `UnsupportedBullMQError`, thrown (before anything is written) for what echomq does not do, naming
 * the echomq way instead (docs/guides/bullmq.md, "What throws").
 */
import { UnrecoverableError as EmqUnrecoverableError } from '../handler-errors.js';

/**
 * A BullMQ option, method or processor that echomq does not do: thrown before any write, never
 * silently replaced by something else. `feature` names what was asked, `instead` the echomq way.
 *
 * @example
 * try { await queue.add('x', {}, { lifo: true }); } catch (e) { if (e instanceof UnsupportedBullMQError) console.log(e.instead); }
 */
export class UnsupportedBullMQError extends Error {
  constructor(
    /** What was asked: `JobsOptions.lifo`, `Job.log`, `a sandboxed processor`. */
    readonly feature: string,
    /** What to do in echomq instead. */
    readonly instead: string,
  ) {
    super(`echomq/bullmq does not support ${feature}: ${instead} (docs/guides/bullmq.md)`);
    this.name = 'UnsupportedBullMQError';
  }
}

/**
 * Thrown by a processor: the job fails for good, attempts left or not (BullMQ's class, echomq's
 * UnrecoverableError underneath, so an echomq consumer reads it the same way).
 *
 * @example
 * new Worker('mail', async (job) => { if (!job.data.to) throw new UnrecoverableError('no address'); });
 */
export class UnrecoverableError extends EmqUnrecoverableError {
  constructor(message = '') {
    super(message);
    this.name = 'UnrecoverableError';
  }
}

/**
 * BullMQ's signal that a processor rate-limited its worker (`worker.rateLimit(ms)` then
 * `throw Worker.RateLimitError()`): the job goes back without spending an attempt and the queue is
 * held for the time given.
 *
 * @example
 * await worker.rateLimit(1_000);
 * throw Worker.RateLimitError();
 */
export class RateLimitError extends Error {
  constructor(message = 'bullmq:rateLimitExceeded') {
    super(message);
    this.name = 'RateLimitError';
  }
}

/**
 * BullMQ's signal after `job.moveToDelayed`: not supported here (`job.moveToDelayed` throws
 * UnsupportedBullMQError); exported so code that names it compiles.
 *
 * @example
 * if (error instanceof DelayedError) return;
 */
export class DelayedError extends Error {
  constructor(message = 'bullmq:movedToDelayed') {
    super(message);
    this.name = 'DelayedError';
  }
}

/**
 * BullMQ's signal after `job.moveToWaitingChildren`: not supported here (that method throws
 * UnsupportedBullMQError); exported so code that names it compiles.
 *
 * @example
 * if (error instanceof WaitingChildrenError) return;
 */
export class WaitingChildrenError extends Error {
  constructor(message = 'bullmq:movedToWaitingChildren') {
    super(message);
    this.name = 'WaitingChildrenError';
  }
}

/**
 * BullMQ's signal after `job.moveToWait`: not supported here (that method throws
 * UnsupportedBullMQError); exported so code that names it compiles.
 *
 * @example
 * if (error instanceof WaitingError) return;
 */
export class WaitingError extends Error {
  constructor(message = 'bullmq:movedToWait') {
    super(message);
    this.name = 'WaitingError';
  }
}
