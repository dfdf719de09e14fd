import { bytesOver, toJobId } from '../encode.js';
import { InvalidArgumentError, shown, StepError } from '../errors.js';
import { errorText, UnrecoverableError } from '../handler-errors.js';
import type { Job } from '../job.js';
import { assertEventName, assertStepName, encodeMatch } from './step-records.js';
import { type InvokeOptions, MAX_STEP_BYTES, MAX_STEPS, type StepRecord, type Steps, type WaitForEventOptions } from './steps.js';

/** A step record to write under a job's lease (lua/step.lua's tuple, without the lease). */
export interface StepWrite {
  /** The step's index, from 1. */
  readonly index: number;
  /** `d` a run step done, `f` a run step that threw, `i` an invoke about to enqueue its child. */
  readonly kind: 'd' | 'f' | 'i';
  /** How long the step ran, in ms (its record's start is the server's time less this). */
  readonly ms: number;
  /** The step's name. */
  readonly name: string;
  /** Its record: a JSON object without its times (n, k, s, r, e, a; an invoke's cq and ci). */
  readonly record: string;
}

/** The child an invoke enqueues, linked to its parent. */
export interface InvokeChild extends InvokeOptions {
  /** Its id, `JOB:` and the rest. */
  readonly id: string;
}

/**
 * What the steps need of the runtime that holds the job's lease (`Leases.steps`): writes fenced
 * by the lease (true written, false when the lease is lost), and the enqueue of an invoke's child.
 */
export interface StepHost {
  /** The queue the jobs are of. */
  readonly queue: string;
  /** The largest step result recorded, in UTF-8 bytes of JSON (the queue's `maxResultBytes`). */
  readonly maxResultBytes: number;
  /** Writes a step record for `job`, fenced by its lease: true written, false when the lease is lost. */
  write(job: Pick<Job, 'id' | 'token'>, write: StepWrite): Promise<boolean>;
  /** Enqueues an invoke's child, linked to its parent (a duplicate when it was enqueued before). */
  invoke(parent: { readonly queue: string; readonly id: string }, child: InvokeChild): Promise<void>;
}

/** Where a handler suspended, as lua/suspend.lua takes it (besides the job's lease): the settle moves its job. */
export interface Suspension {
  /** The step's index, from 1. */
  readonly index: number;
  /** The step's name. */
  readonly name: string;
  /** `s` sleep for `number` ms, `u` until the epoch ms `number`, `w` wait for `event`, `i` wait for the invoked child. */
  readonly how: 's' | 'u' | 'w' | 'i';
  /** s: ms; u: epoch ms; w: the timeout in ms (-1 none); i: unused. */
  readonly number: number;
  /** w: the event. */
  readonly event?: string;
  /** w: the match's shape, its paths sorted and joined by newlines (src/steps/step-records.ts encodeMatch). */
  readonly shape?: string;
  /** w: the match's values in the shape's order, a JSON array. */
  readonly values?: string;
}

/**
 * Thrown out of a step that suspends the job (a sleep, a wait, an invoke) to end the handler's
 * run: its outcome is the suspension, whatever the handler does with this (runHandler reads
 * `JobSteps.suspension`).
 */
export class StepSuspended extends Error {
  constructor(step: string) {
    super(`the job suspends at step "${step}": its handler runs again when the step is over`);
    this.name = 'StepSuspended';
  }
}

/** A child an invoke step ran died: its error is `childError`. Unrecoverable: running the parent again finds the same death. */
export class InvokedJobError extends UnrecoverableError {
  constructor(
    /** The child's queue and id. */
    readonly child: {
      /** Its queue. */
      readonly queue: string;
      /** Its id. */
      readonly id: string;
    },
    /** The error the child died with. */
    readonly childError: string,
  ) {
    super(`the invoked job ${child.id} in ${child.queue} died: ${childError}`);
    this.name = 'InvokedJobError';
  }
}

/** The job's steps: replays the recorded ones in order, records the new ones (see Steps). */
export class JobSteps implements Steps {
  /** Set once a step suspended the job: the run's outcome. */
  suspension: Suspension | undefined;
  private readonly recorded = new Map<number, StepRecord>();
  private readonly names = new Set<string>();
  private readonly writes = new Set<Promise<unknown>>();
  private next = 0;
  private bytes = 0;

  constructor(
    private readonly job: Job,
    private readonly host: StepHost | undefined,
  ) {
    for (const record of job.steps ?? []) {
      this.recorded.set(record.index, record);
      this.bytes += record.result === undefined ? 0 : JSON.stringify(record.result).length;
    }
  }

  /** Resolves once every write this run started has ended. */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  async run<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    const index = this.take(name, 'run');
    if (typeof fn !== 'function') throw new InvalidArgumentError(`step.run("${name}") needs a function, got ${shown(fn)}`);
    const old = this.recorded.get(index);
    if (old?.state === 'done') return old.result as T;
    const attempts = (old?.attempts ?? 0) + 1;
    const started = performance.now();
    let value: T;
    try {
      value = await fn();
    } catch (error) {
      if (error instanceof StepSuspended) throw error;
      await this.write(index, 'f', started, name, { n: name, k: 'run', s: 'failed', e: errorText(error), a: attempts });
      throw error;
    }
    let result: string | undefined;
    try {
      result = value === undefined ? undefined : JSON.stringify(value);
    } catch (error) {
      throw new StepError('limit', `step "${name}"'s result is not JSON-serialisable: ${(error as Error).message}`, { jobId: this.job.id });
    }
    const over = result === undefined ? undefined : bytesOver(result, this.hostOf(name).maxResultBytes);
    if (over !== undefined) {
      throw new StepError('limit', `step "${name}"'s result is ${over} bytes of JSON, over maxResultBytes (${this.hostOf(name).maxResultBytes})`, { jobId: this.job.id });
    }
    this.bytes += result?.length ?? 0;
    if (this.bytes > MAX_STEP_BYTES) {
      throw new StepError('limit', `job ${this.job.id}'s steps would record ${this.bytes} bytes, over the ${MAX_STEP_BYTES} a job may`, { jobId: this.job.id });
    }
    await this.write(index, 'd', started, name, result === undefined ? { n: name, k: 'run', s: 'done', a: attempts } : { n: name, k: 'run', s: 'done', r: result, a: attempts });
    return (result === undefined ? undefined : JSON.parse(result)) as T;
  }

  async sleep(name: string, ms: number): Promise<void> {
    const index = this.take(name, 'sleep');
    if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidArgumentError(`step.sleep("${name}") takes ms as an integer >= 0, got ${shown(ms)}`);
    if (this.recorded.has(index)) return;
    this.suspend({ index, name, how: 's', number: ms });
  }

  async sleepUntil(name: string, at: number | Date): Promise<void> {
    const index = this.take(name, 'sleep');
    const ms = at instanceof Date ? at.getTime() : at;
    if (!Number.isSafeInteger(ms) || ms < 0) throw new InvalidArgumentError(`step.sleepUntil("${name}") takes epoch ms or a Date, got ${shown(at)}`);
    if (this.recorded.has(index)) return;
    this.suspend({ index, name, how: 'u', number: ms });
  }

  async waitForEvent<T = unknown>(name: string, options: WaitForEventOptions): Promise<T | null> {
    const index = this.take(name, 'wait');
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`step.waitForEvent("${name}") takes options { event, match?, timeoutMs? }, got ${shown(options)}`);
    assertEventName(options.event);
    const { shape, values } = encodeMatch(options.match);
    const timeoutMs = options.timeoutMs ?? -1;
    if (options.timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1)) {
      throw new InvalidArgumentError(`step.waitForEvent("${name}") takes timeoutMs as an integer >= 1, got ${shown(options.timeoutMs)}`);
    }
    const old = this.recorded.get(index);
    if (old) return old.state === 'done' ? ((old.result ?? null) as T | null) : null;
    this.suspend({ index, name, how: 'w', number: timeoutMs, event: options.event, shape, values });
  }

  async invoke<T = unknown>(name: string, options: InvokeOptions): Promise<T> {
    const index = this.take(name, 'invoke');
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`step.invoke("${name}") takes options { queue, payload, ... }, got ${shown(options)}`);
    const host = this.hostOf(name);
    const id = options.id === undefined ? toJobId(`${this.job.id.replace(/[^A-Za-z0-9._:-]/g, '_')}.s${index}`) : toJobId(options.id);
    const old = this.recorded.get(index);
    const childQueue = old?.child?.queue ?? options.queue;
    const childId = old?.child?.id ?? id;
    const outcome = this.job.children?.find((c) => c.queue === childQueue && c.id === childId);
    // a run cut off before it suspended, its child finished since: no claim marked the step over
    // (only a suspended row's claim does), so this run does
    if (old && old.state !== 'done' && (outcome?.state === 'completed' || outcome?.state === 'failed')) {
      await this.write(index, 'd', performance.now(), name, { n: name, k: 'invoke', s: 'done', cq: childQueue, ci: childId });
    }
    if (old && outcome?.state === 'completed') return outcome.result as T;
    if (old && outcome?.state === 'failed') throw new InvokedJobError({ queue: childQueue, id: childId }, outcome.error ?? 'unknown error');
    if (old?.state === 'done' && outcome === undefined) {
      throw new InvokedJobError({ queue: childQueue, id: childId }, 'it was removed before it finished');
    }
    // not yet, or cut off before it suspended: the child's record first (so its news counts however
    // early it comes), then the child (a duplicate when it was enqueued before), then the suspension
    await this.write(index, 'i', performance.now(), name, { n: name, k: 'invoke', s: 'invoking', cq: childQueue, ci: childId });
    await host.invoke({ queue: host.queue, id: this.job.id }, { ...options, id: childId, queue: childQueue });
    this.suspend({ index, name, how: 'i', number: 0 });
  }

  /** The next index, for a step of `name` and `kind`: refused when the record holds another there. */
  private take(name: string, kind: StepRecord['kind']): number {
    assertStepName(name);
    if (this.suspension) throw new StepSuspended(this.suspension.name);
    if (this.names.has(name)) throw new StepError('duplicate', `step name "${name}" is used twice in job ${this.job.id}: each step's name is its own`, { jobId: this.job.id });
    this.names.add(name);
    const index = ++this.next;
    if (index > MAX_STEPS) throw new StepError('limit', `job ${this.job.id} calls more than ${MAX_STEPS} steps, the most a job may record`, { jobId: this.job.id });
    const old = this.recorded.get(index);
    if (old && (old.name !== name || old.kind !== kind)) {
      throw new StepError(
        'order',
        `step ${index} is "${old.name}" (${old.kind}) in job ${this.job.id}'s record, but the handler called "${name}" (${kind}) there: a handler must call its steps in the same order on every run`,
        { jobId: this.job.id },
      );
    }
    return index;
  }

  private suspend(suspension: Suspension): never {
    this.hostOf(suspension.name);
    this.suspension = suspension;
    throw new StepSuspended(suspension.name);
  }

  private hostOf(name: string): StepHost {
    if (this.host) return this.host;
    throw new StepError('context', `step "${name}" records under a consumer's lease: run the handler with a Consumer, the Worker or a serverless adapter (a BatchConsumer's handler has no steps)`, { jobId: this.job.id });
  }

  private async write(index: number, kind: StepWrite['kind'], started: number, name: string, record: object): Promise<void> {
    const write = this.hostOf(name).write(this.job, { index, kind, ms: performance.now() - started, name, record: JSON.stringify(record) });
    this.writes.add(write);
    try {
      if (!(await write)) throw new StepError('context', `step "${name}" was not recorded: job ${this.job.id}'s lease was lost (reaped or removed)`, { jobId: this.job.id });
    } finally {
      this.writes.delete(write);
    }
  }
}
