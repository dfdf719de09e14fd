import { UnrecoverableError } from '../src/handler.js';

/** The example queue's payload: a message, and knobs that make a job fail or take time. */
export interface DemoPayload {
  readonly kind?: 'email' | 'report' | 'reminder' | 'flaky' | 'doomed';
  readonly to?: string;
  readonly message?: string;
  /** `retry`: always throw (retried, then dead); `dead`: fail for good at once. */
  readonly fail?: 'retry' | 'dead';
  readonly sleepMs?: number;
  /** What the handler returns: the job's result. */
  readonly result?: unknown;
  /** Reported with `context.progress` before the handler returns. */
  readonly progress?: unknown;
}

/**
 * The `demo` queue's handler, the same at the edge and on Node: it logs the job, reports
 * `progress` (through the handler context's `progress`, when given one), waits `sleepMs`, fails
 * when asked, and returns `result` as the job's result. A `flaky` job fails its first attempt; a
 * `doomed` one fails every attempt and gives up for good on its last. A flow's parent (a job with
 * `children`) logs its children's results and returns how many completed.
 */
export async function demoHandler(
  job: {
    readonly id: string;
    readonly payload: DemoPayload;
    readonly attempt: number;
    readonly maxAttempts: number;
    /** A flow parent's children (Job.children): their results are what it merges. */
    readonly children?: ReadonlyArray<{ readonly id: string; readonly state: string; readonly result?: unknown }> | undefined;
  },
  runtime: string,
  log: (line: string) => void = (line) => console.log(line),
  progress?: (value: unknown) => Promise<boolean>,
): Promise<unknown> {
  const p = job.payload;
  log(`[${runtime}] ${job.id} attempt ${job.attempt}: ${JSON.stringify(p).slice(0, 200)}`);
  if (job.children) {
    // a flow's parent: it runs once its children have finished, with their results
    log(`[${runtime}] ${job.id} merges ${job.children.length} children: ${JSON.stringify(job.children.map((c) => c.result))}`);
    return { merged: job.children.filter((c) => c.state === 'completed').length };
  }
  if (p.progress !== undefined && progress) await progress(p.progress);
  if (p.sleepMs) await new Promise((resolve) => setTimeout(resolve, p.sleepMs));
  if (p.fail === 'dead') throw new UnrecoverableError('asked to die');
  if (p.fail === 'retry') throw new Error('asked to retry');
  if (p.kind === 'flaky' && job.attempt === 1) throw new Error('the mail server hung up (first try only)');
  if (p.kind === 'doomed') {
    if (job.attempt < job.maxAttempts) throw new Error(`no such mailbox (attempt ${job.attempt})`);
    throw new UnrecoverableError('no such mailbox: giving up');
  }
  return p.result;
}
