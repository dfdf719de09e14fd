import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Handler } from '../../src/handler.js';
import { StepSuspended } from '../../src/steps/job-steps.js';

/** The steps-faults scenario's queues: the jobs written as steps, and the children they invoke. */
export const STEPS_QUEUE = 'chaos-steps';
export const STEPS_KIDS = 'chaos-steps-kids';
/** The event the jobs wait for, each matching its own `key`. */
export const STEPS_EVENT = 'chaos.steps.go';
/** The run steps whose side effects are counted. */
export const COUNTED_STEPS = ['a', 'z'] as const;

/** A job of the scenario: what its handler does at each step. */
export interface StepsPayload {
  readonly n: number;
  /** What its wait matches (`match: { key }`): shared by the two jobs of a pair that gets an event. */
  readonly key: string;
  /** The durable sleep, ms. */
  readonly sleepMs: number;
  /** The wait's timeout, ms. */
  readonly timeoutMs: number;
  /** Whether it invokes a child in STEPS_KIDS. */
  readonly invoke: boolean;
  /** How long a counted step works after its side effect, ms: the window a kill can cut. */
  readonly workMs: number;
}

/** One run of a counted step's function, as its side effect recorded it. */
export interface StepExecution {
  /** `node:<pid>` or `edge`. */
  readonly by: string;
  readonly token: number;
  /** When it ran (`Date.now()` of its process: the scenario's clock too). */
  readonly at: number;
}

/** A counted step whose `step.run` threw in a run (its record not written, or fenced): a reason it may run again. */
export interface StepFailure {
  readonly id: string;
  readonly step: string;
  readonly token: number;
  readonly by: string;
  readonly error: string;
}

/**
 * Outside the queue's keyspace: a counted step's side effects (`chaos:steps:<job>:<step>`, an
 * INCR per run of its function), the list of those runs, the runs' ids (so a command ioredis sends
 * again after a reconnect counts once), each handler run's view of its wait, and the failures the
 * Node consumers noted.
 */
export const stepsKeys = {
  count: (id: string, step: string): string => `chaos:steps:${id}:${step}`,
  runs: (id: string, step: string): string => `chaos:steps:${id}:${step}:runs`,
  execs: 'chaos:steps:execs',
  seen: (id: string): string => `chaos:steps:seen:${id}`,
  failures: 'chaos:steps:failures',
};

// the side effect: one INCR per run of the step's function, the run's id kept so a replay of this
// very command (ioredis sends unanswered commands again after a reconnect) counts nothing
const SIDE_EFFECT = `
if redis.call('HSETNX', KEYS[2], ARGV[1], '1') == 1 then
  redis.call('INCR', KEYS[1])
  redis.call('RPUSH', KEYS[3], ARGV[2])
  return 1
end
return 0`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The scenario's handler, the same on both runtimes (`by` names the runtime; `noted` is told of a
 * counted step whose `step.run` threw): step.run `a` (a side effect), a durable sleep, a wait for
 * the event matching its key (whose outcome each run records in Redis), for some jobs an invoke of
 * a child, then step.run `z` (a side effect). Its result is `{n, got, child}`.
 */
export function stepsHandler(fx: Redis, by: string, noted: (failure: StepFailure) => void): Handler<StepsPayload> {
  return async (job, { step }) => {
    const { n, key, sleepMs, timeoutMs, invoke, workMs } = job.payload;
    const counted = async (name: string): Promise<{ n: number; step: string }> => {
      try {
        return await step.run(name, async () => {
          const execution: StepExecution = { by, token: job.token, at: Date.now() };
          await fx.eval(SIDE_EFFECT, 3, stepsKeys.count(job.id, name), stepsKeys.execs, stepsKeys.runs(job.id, name), randomUUID(), JSON.stringify(execution));
          await sleep(workMs);
          return { n, step: name };
        });
      } catch (error) {
        if (!(error instanceof StepSuspended)) noted({ id: job.id, step: name, token: job.token, by, error: String(error).slice(0, 200) });
        throw error;
      }
    };
    await counted('a');
    await step.sleep('nap', sleepMs);
    const got = await step.waitForEvent('go', { event: STEPS_EVENT, match: { key }, timeoutMs });
    await fx.rpush(stepsKeys.seen(job.id), JSON.stringify({ by, token: job.token, got }));
    const child = invoke ? await step.invoke<{ n: number }>('child', { queue: STEPS_KIDS, payload: { n }, maxAttempts: 10 }) : null;
    await counted('z');
    return { n, got, child };
  };
}

/** An invoked child: a short run, its result its n times 10. */
export const stepsKidHandler: Handler<{ n: number }> = async (job) => {
  await sleep(5 + (job.payload.n % 20));
  return { n: job.payload.n * 10 };
};
