/**
 * What BullMQ's Job does that echomq does not: each method throws UnsupportedBullMQError naming
 * the echomq way, before anything is written (docs/guides/bullmq.md, "Not built"). Job extends it.
 */
import { UnsupportedBullMQError } from './errors.js';

/** The refused part of BullMQ's Job. */
export abstract class JobRefusals {
  /** Throws UnsupportedBullMQError: echomq keeps no job logs. */
  async log(_row: string): Promise<number> {
    throw new UnsupportedBullMQError('job.log', 'log with your own logger, or report a small JSON value with job.updateProgress');
  }
  /** Throws UnsupportedBullMQError: echomq keeps no job logs. */
  async clearLogs(_keep?: number): Promise<void> {
    throw new UnsupportedBullMQError('job.clearLogs', 'echomq keeps no job logs');
  }
  /** Throws UnsupportedBullMQError: add without a delay, or with a shorter one. */
  async promote(): Promise<void> {
    throw new UnsupportedBullMQError('job.promote', 'echomq cannot move a delayed job forward yet: remove it and add it again without the delay');
  }
  /** Throws UnsupportedBullMQError. */
  async changeDelay(_delay: number): Promise<void> {
    throw new UnsupportedBullMQError('job.changeDelay', 'remove the job and add it again with the new delay (or use deduplication with replace)');
  }
  /** Throws UnsupportedBullMQError: a processor throws RetryAfterError (echomq) instead. */
  async moveToDelayed(_timestamp: number, _token?: string): Promise<void> {
    throw new UnsupportedBullMQError('job.moveToDelayed', 'throw RetryAfterError(message, delayMs) (echomq) from the processor');
  }
  /** Throws UnsupportedBullMQError: flows are written whole by FlowProducer.add. */
  async moveToWaitingChildren(_token: string, _opts?: unknown): Promise<boolean> {
    throw new UnsupportedBullMQError('job.moveToWaitingChildren', "add the parent with its children through FlowProducer.add, or use echomq's step.invoke");
  }
  /** Throws UnsupportedBullMQError: a job goes back to wait by a processor's RateLimitError. */
  async moveToWait(_token?: string): Promise<number> {
    throw new UnsupportedBullMQError('job.moveToWait', 'call worker.rateLimit(ms) and throw Worker.RateLimitError(): the job goes back without spending an attempt');
  }
  /** Throws UnsupportedBullMQError: a Worker settles its jobs itself. */
  async moveToCompleted(_value: unknown, _token: string, _fetchNext?: boolean): Promise<void> {
    throw new UnsupportedBullMQError('job.moveToCompleted', 'return the value from the processor');
  }
  /** Throws UnsupportedBullMQError: a Worker settles its jobs itself. */
  async moveToFailed(_error: Error, _token: string, _fetchNext?: boolean): Promise<void> {
    throw new UnsupportedBullMQError('job.moveToFailed', 'throw from the processor (UnrecoverableError to fail for good)');
  }
  /** Throws UnsupportedBullMQError: echomq renews a running job's lease itself. */
  async extendLock(_token: string, _duration: number): Promise<number> {
    throw new UnsupportedBullMQError('job.extendLock', "a Worker renews its jobs' leases itself (lockDuration sets the lease)");
  }
}
