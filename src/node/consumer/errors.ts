/** The errors a parked consumer throws into a job's signal: its lease was lost, or stop() ran out of time. */

/**
 * Thrown into a held job's signal when its lease is lost.
 *
 * @example
 * if (signal.reason instanceof LeaseLostError) return; // another consumer runs it now
 */
export class LeaseLostError extends Error {
  constructor(
    /** The job whose lease was lost. */
    readonly jobId: string,
  ) {
    super(`the lease of ${jobId} was lost (reaped or removed): stop working on it`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Thrown into held jobs' signals when stop() runs out of time: the job has been given back
 * (claimable at once), so another consumer may run it now, and nothing this run does is recorded.
 *
 * @example
 * if (signal.reason instanceof ConsumerStoppedError) await saveProgress();
 */
export class ConsumerStoppedError extends Error {
  constructor() {
    super('the consumer stopped before the job finished');
    this.name = 'ConsumerStoppedError';
  }
}
