import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Handler, Job, Outcome, Queue, SentEvent, StepHost, StepRecord } from '../../src/index.js';
import { runHandler } from '../../src/handler.js';
import type { Finished, Settled } from '../../src/lease/rounds.js';
import { checkInvariants } from '../invariants.js';
import { leases, queueName, sleep, snapshotKeys, useRedis } from '../helpers.js';

/**
 * Durable steps under random programs and faults (src/steps/, lua/step.lua, lua/suspend.lua,
 * lua/send-event.lua). Each run enqueues one to three jobs, each running a random program of
 * steps (run steps that throw on their first tries, sleeps, waits for events), and interleaves
 * passes driven as the runtimes drive them (test/transport/steps.test.ts: a beat's claim,
 * runHandler with the leases' step host, a round) with faults: a run abandoned mid-way whose
 * short lease a later beat reaps (and which may wake up later, a zombie whose writes must be
 * fenced), a round sent twice, an old round sent again, events sent at any moment (some twice
 * with one id, some not kept), beats and pauses at random. A model kept here predicts every
 * claim, settle, record, send's answer and fn run, and each job's result.
 */

/**
 * Fixed, so the file's time stays bounded: 22 to 39 s a transport project with the four projects
 * running it at once on 2 cores. fast-check prints the seed and path of a failure.
 */
const NUM_RUNS = 60;
/** Replays a failure: STEPS_SEED=<seed> STEPS_PATH=<path> npx vitest run test/transport/steps.property.test.ts */
const REPLAY = process.env.STEPS_SEED === undefined ? {} : { seed: Number(process.env.STEPS_SEED), ...(process.env.STEPS_PATH ? { path: process.env.STEPS_PATH } : {}) };

const EVENTS = ['paid', 'order.shipped'] as const;
/** What a wait matches on its data's key `k`: a string and a number (which cjson encodes on both sides). */
const VALUES = ['a', 2] as const;
type EventName = (typeof EVENTS)[number];
type Value = (typeof VALUES)[number];

/** Far above what a run spends: 2 failures a step and MAX_ABANDONS lapsed leases a job. */
const MAX_ATTEMPTS = 20;
const MAX_ABANDONS = 3;
const LONG_LEASE = 30_000;
/** An abandoned run's lease: over by the next beat or soon after (hold fences on the token, not the time). */
const SHORT_LEASE = 5;

type Step =
  | { readonly kind: 'run'; readonly name: string; readonly fails: number }
  | { readonly kind: 'sleep'; readonly name: string; readonly ms: number }
  | { readonly kind: 'wait'; readonly name: string; readonly event: EventName; readonly match: Value | null; readonly timeoutMs: number | null };

type Abandon = { readonly pick: number; readonly at: number; readonly inFn: boolean };
type Send = { readonly event: EventName; readonly k: Value | null; readonly id: 'none' | 'fresh' | 'again'; readonly keep: boolean; readonly pick: number };

/** One thing a run does: plain descriptors, so a failing run shrinks to a readable list. */
type Action =
  | { readonly a: 'add'; readonly job: number }
  /** `during`: an event sent once the handlers ran, before their round: before the waits they reached are recorded. */
  | { readonly a: 'pass'; readonly repeat: boolean; readonly abandon: Abandon | null; readonly during: Send | null }
  | ({ readonly a: 'send' } & Send)
  | { readonly a: 'beat' }
  | { readonly a: 'tick'; readonly ms: number }
  | { readonly a: 'zombie'; readonly pick: number }
  | { readonly a: 'stale'; readonly pick: number };

type StepShape = Step extends infer S ? (S extends Step ? Omit<S, 'name'> : never) : never;

const runArb: fc.Arbitrary<StepShape> = fc.record({
  kind: fc.constant('run' as const),
  fails: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 2 }) }),
});
const stepArb: fc.Arbitrary<StepShape> = fc.oneof(
  { weight: 3, arbitrary: runArb },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('sleep' as const), ms: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: 1, max: 60 }) }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      event: fc.constantFrom(...EVENTS),
      match: fc.option(fc.constantFrom(...VALUES), { nil: null, freq: 3 }),
      timeoutMs: fc.option(fc.integer({ min: 5, max: 80 }), { nil: null, freq: 3 }),
    }),
  },
);

/** What a step's name ends with: JSON's escapes and UTF-8 go through the scripts' string work. */
const NAME_TAILS = ['', ' "quoted"', ' back\\slash', ' a/b', ' café', ' 🙂'] as const;

/** 1 to 8 steps with unique names, at least one a run step (what a lying step host is caught on). */
const programArb: fc.Arbitrary<Step[]> = fc
  .tuple(runArb, fc.array(fc.tuple(stepArb, fc.constantFrom(...NAME_TAILS)), { maxLength: 7 }), fc.nat(), fc.constantFrom(...NAME_TAILS))
  .map(([run, rest, at, tail]) => {
    const named: Array<[StepShape, string]> = [...rest];
    named.splice(at % (rest.length + 1), 0, [run, tail]);
    return named.map(([shape, tail], i) => ({ ...shape, name: `${shape.kind} ${i + 1}${tail}` }) as Step);
  });

const sendArb: fc.Arbitrary<Send> = fc.record({
  event: fc.constantFrom(...EVENTS),
  k: fc.option(fc.constantFrom(...VALUES), { nil: null, freq: 4 }),
  id: fc.constantFrom('none' as const, 'fresh' as const, 'again' as const),
  keep: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  pick: fc.nat(),
});

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      a: fc.constant('pass' as const),
      repeat: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      abandon: fc.option(fc.record({ pick: fc.nat(), at: fc.nat({ max: 8 }), inFn: fc.boolean() }), { nil: null, freq: 3 }),
      during: fc.option(sendArb, { nil: null, freq: 4 }),
    }),
  },
  { weight: 5, arbitrary: sendArb.map((send) => ({ a: 'send' as const, ...send })) },
  { weight: 2, arbitrary: fc.constant({ a: 'beat' as const }) },
  { weight: 2, arbitrary: fc.record({ a: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ a: fc.constant('zombie' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('stale' as const), pick: fc.nat() }) },
);

/** Programs, and the actions with each job's enqueue placed among them. */
const scenarioArb = fc
  .tuple(fc.array(programArb, { minLength: 1, maxLength: 3 }), fc.array(actionArb, { minLength: 3, maxLength: 32 }), fc.array(fc.nat(), { minLength: 3, maxLength: 3 }))
  .map(([programs, actions, places]) => {
    const all: Action[] = [...actions];
    programs.forEach((_, job) => all.splice(places[job]! % (all.length + 1), 0, { a: 'add', job }));
    return { programs, actions: all };
  });

/** A step's record as the model expects it (StepRecord's fields that matter here). */
type Rec =
  | { kind: 'run'; state: 'done' | 'failed'; attempts: number; result?: string; error?: string }
  | { kind: 'sleep'; state: 'sleeping' | 'done'; until?: number; finishedAt?: number }
  | { kind: 'wait'; state: 'waiting' | 'done' | 'timed-out'; result?: unknown; eventId?: string; until?: number | null; finishedAt?: number };

/** A sent event as the model keeps it. */
interface Sent {
  readonly seq: number;
  readonly id: string;
  readonly name: EventName;
  readonly data: { readonly tag: string; readonly k?: Value };
  readonly keep: boolean;
  readonly reply: SentEvent;
}

/** What the model knows of one job. */
interface ModelJob {
  readonly index: number;
  readonly program: readonly Step[];
  id: string;
  /** The events sent before it was created: those with a sequence number up to this. */
  createdSeq: number;
  state: 'new' | 'pending' | 'active' | 'scheduled' | 'awaiting' | 'completed';
  /** Its steps' records, index i for step i + 1: always a prefix of the program. */
  records: Rec[];
  /** How many times each step's fn ran, as the model predicts it. */
  ran: number[];
  /** Of those, the runs by a handler run that never settled (abandoned, then perhaps a zombie). */
  abandonedRuns: number[];
  /** The attempt its next claim is. */
  attempt: number;
  claims: number;
  abandons: number;
  /** The step it is suspended at (asleep or awaiting), else null. */
  suspendedAt: number | null;
  /** The lease of an abandoned run not yet reaped. */
  leaseUntil: number | null;
  /** The sequence number of the last event a wait of its took, per event. */
  lastTaken: Map<string, number>;
  result: Record<string, unknown> | undefined;
}

/**
 * How the model says a live (not zombie) run ends: abandoned, settled, or at a wait, which the
 * round records with an event kept by then or as a waiter (Model.suspendWait).
 */
type Prediction = { readonly end: 'hang' } | { readonly end: 'settle'; readonly settled: Settled } | { readonly end: 'wait'; readonly at: number };

const matches = (step: Extract<Step, { kind: 'wait' }>, e: Pick<Sent, 'name' | 'data'>): boolean =>
  e.name === step.event && (step.match === null || e.data.k === step.match);

class Model {
  readonly jobs: ModelJob[];
  /** The queue's event sequence (meta `evseq`): one a send, none for a send repeated by its id. */
  seq = 0;
  readonly sent: Sent[] = [];
  /** The sends that gave an id, for sending one again. */
  readonly withIds: Sent[] = [];
  /** Makes each send's data its own (`tag`), so a wait's result names the event it took. */
  tags = 0;

  constructor(programs: ReadonlyArray<readonly Step[]>) {
    this.jobs = programs.map((program, index) => ({
      index,
      program,
      id: '',
      createdSeq: 0,
      state: 'new',
      records: [],
      ran: program.map(() => 0),
      abandonedRuns: program.map(() => 0),
      attempt: 1,
      claims: 0,
      abandons: 0,
      suspendedAt: null,
      leaseUntil: null,
      lastTaken: new Map(),
      result: undefined,
    }));
  }

  byId(id: string): ModelJob {
    const found = this.jobs.find((j) => j.id === id);
    if (!found) throw new Error(`no job ${id} in the model`);
    return found;
  }

  added(): ModelJob[] {
    return this.jobs.filter((j) => j.state !== 'new');
  }

  /**
   * A beat at server time `now` (lua/beat.lua): expired leases reaped (the attempt counted),
   * sleepers due by now done, waits whose timeout passed timed out; what it counts of each.
   */
  beat(now: number, reaped: (job: ModelJob) => void): { requeued: number; promoted: number } {
    let requeued = 0;
    let promoted = 0;
    for (const job of this.jobs) {
      if (job.state === 'active' && job.leaseUntil !== null && job.leaseUntil <= now) {
        job.state = 'pending';
        job.attempt++;
        job.leaseUntil = null;
        reaped(job);
        requeued++;
        continue;
      }
      if (job.suspendedAt === null) continue;
      const rec = job.records[job.suspendedAt]!;
      if (job.state === 'scheduled' && rec.kind === 'sleep' && rec.until! <= now) {
        rec.state = 'done';
        rec.finishedAt = now;
      } else if (job.state === 'awaiting' && rec.kind === 'wait' && rec.until !== null && rec.until! <= now) {
        rec.state = 'timed-out';
        rec.finishedAt = now;
      } else {
        continue;
      }
      job.state = 'pending';
      job.suspendedAt = null;
      promoted++;
    }
    return { requeued, promoted };
  }

  /** The next due time a beat reports: the earliest sleeper's or wait timeout's, null for none. */
  nextDue(): number | null {
    const times = this.jobs.flatMap((job) => {
      const rec = job.suspendedAt === null ? undefined : job.records[job.suspendedAt];
      return rec && rec.kind !== 'run' && typeof rec.until === 'number' ? [rec.until] : [];
    });
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * A live run of `job`'s handler from its claim (`hang`: abandoned before step `at`, or inside
   * its fn when `inFn` and it is a run step that runs): the records it writes, the fn runs, the
   * attempts, and how it ends.
   */
  runLive(job: ModelJob, hang: { at: number; inFn: boolean } | null): Prediction {
    const out: Record<string, unknown> = {};
    for (let i = 0; i <= job.program.length; i++) {
      const step = job.program[i];
      const hangsHere = hang !== null && hang.at === i;
      if (hangsHere && !(hang.inFn && step?.kind === 'run')) return { end: 'hang' };
      if (step === undefined) {
        job.result = out;
        job.state = 'completed';
        return { end: 'settle', settled: 'completed' };
      }
      const rec = job.records[i];
      if (step.kind === 'run') {
        if (rec?.kind === 'run' && rec.state === 'done') {
          out[step.name] = rec.result;
          continue;
        }
        const n = ++job.ran[i]!;
        if (hangsHere) {
          job.abandonedRuns[i]!++;
          return { end: 'hang' };
        }
        const attempts = (rec?.kind === 'run' ? rec.attempts : 0) + 1;
        if (n <= step.fails) {
          job.records[i] = { kind: 'run', state: 'failed', attempts, error: `${step.name} try ${n}` };
          expect(job.attempt, `${job.id} would die: the model's schedule spent too many attempts`).toBeLessThan(MAX_ATTEMPTS);
          job.attempt++;
          job.state = 'pending';
          return { end: 'settle', settled: 'pending' };
        }
        job.records[i] = { kind: 'run', state: 'done', attempts, result: `${step.name}#${n}` };
        job.attempt = 1;
        out[step.name] = `${step.name}#${n}`;
        continue;
      }
      if (step.kind === 'sleep') {
        if (rec) continue;
        if (step.ms === 0) {
          job.records[i] = { kind: 'sleep', state: 'done' };
          job.state = 'pending';
          return { end: 'settle', settled: 'pending' };
        }
        job.records[i] = { kind: 'sleep', state: 'sleeping' };
        job.state = 'scheduled';
        job.suspendedAt = i;
        return { end: 'settle', settled: 'scheduled' };
      }
      if (rec?.kind === 'wait') {
        out[step.name] = rec.state === 'done' ? rec.result : null;
        continue;
      }
      return { end: 'wait', at: i };
    }
    throw new Error('unreachable');
  }

  /** The round records a wait `runLive` reached: at once with a kept event, else awaiting. */
  suspendWait(job: ModelJob, i: number): Settled {
    const step = job.program[i]!;
    if (step.kind !== 'wait') throw new Error(`step ${i + 1} of ${job.id} is no wait`);
    // lua/suspend.lua: the earliest kept event of its name, sent after the job was created and
    // after the last one a wait of this job took, that matches
    const after = Math.max(job.createdSeq, job.lastTaken.get(step.event) ?? 0);
    const kept = this.sent.find((e) => e.keep && e.seq > after && matches(step, e));
    if (kept) {
      job.records[i] = { kind: 'wait', state: 'done', result: kept.data, eventId: kept.id };
      job.lastTaken.set(step.event, kept.seq);
      job.state = 'pending';
      return 'pending';
    }
    job.records[i] = { kind: 'wait', state: 'waiting' };
    job.state = 'awaiting';
    job.suspendedAt = i;
    return 'awaiting';
  }

  /**
   * A zombie: an abandoned run, reaped since, woken up. It goes on with the records it was
   * claimed with, until its first write or suspension, which is fenced: the fn run it may do,
   * and the outcome kind its runHandler gives.
   */
  runZombie(job: ModelJob, snapshot: readonly Rec[], at: number, inFn: boolean): Outcome['kind'] {
    if (inFn) return 'fail';
    for (let i = at; i < job.program.length; i++) {
      const step = job.program[i]!;
      const rec = snapshot[i];
      if (step.kind === 'run') {
        if (rec?.state === 'done') continue;
        job.ran[i]!++;
        job.abandonedRuns[i]!++;
        return 'fail';
      }
      if (!rec) return 'suspend';
    }
    return 'complete';
  }

  /** A new event (not a repeat): the waiters it matches resume with it; how many. */
  deliver(event: Sent): number {
    let resumed = 0;
    for (const job of this.jobs) {
      if (job.state !== 'awaiting') continue;
      const i = job.suspendedAt!;
      const step = job.program[i]!;
      if (step.kind !== 'wait' || !matches(step, event)) continue;
      const rec = job.records[i] as Extract<Rec, { kind: 'wait' }>;
      rec.state = 'done';
      rec.result = event.data;
      rec.eventId = event.id;
      job.lastTaken.set(event.name, event.seq);
      job.state = 'pending';
      job.suspendedAt = null;
      resumed++;
    }
    return resumed;
  }
}

/** Where a handler run stops for good (abandoned) and, for a zombie, goes on. */
class Control {
  readonly hung: Promise<'hung'>;
  private signal!: () => void;
  private readonly gate: Promise<void>;
  wake!: () => void;

  constructor(
    readonly at: number | null,
    readonly inFn: boolean,
  ) {
    this.hung = new Promise((resolve) => (this.signal = () => resolve('hung')));
    this.gate = new Promise((resolve) => (this.wake = resolve));
  }

  hang(): Promise<void> {
    this.signal();
    return this.gate;
  }
}

/** The handler for one run of a job: its program, counting each fn run in `ran`. */
function handlerFor(program: readonly Step[], ran: number[], ctl: Control): Handler<{ j: number }> {
  return async (_job, { step }) => {
    const out: Record<string, unknown> = {};
    for (const [i, s] of program.entries()) {
      if (ctl.at === i && !(ctl.inFn && s.kind === 'run')) await ctl.hang();
      if (s.kind === 'run') {
        out[s.name] = await step.run(s.name, async () => {
          const n = ++ran[i]!;
          if (ctl.at === i && ctl.inFn) await ctl.hang();
          if (n <= s.fails) throw new Error(`${s.name} try ${n}`);
          return `${s.name}#${n}`;
        });
      } else if (s.kind === 'sleep') {
        await step.sleep(s.name, s.ms);
      } else {
        out[s.name] = await step.waitForEvent(s.name, {
          event: s.event,
          ...(s.match === null ? {} : { match: { k: s.match } }),
          ...(s.timeoutMs === null ? {} : { timeoutMs: s.timeoutMs }),
        });
      }
    }
    if (ctl.at === program.length) await ctl.hang();
    return out;
  };
}

/** A run abandoned mid-way: its handler hangs at its Control until woken as a zombie. */
interface Hung {
  readonly job: ModelJob;
  readonly claimed: Job<{ j: number }>;
  readonly snapshot: readonly Rec[];
  readonly at: number;
  readonly inFn: boolean;
  readonly ctl: Control;
  readonly outcome: Promise<Outcome>;
  reaped: boolean;
  woken: boolean;
}

/** A round that settled, to send again later. */
interface SettledRound {
  readonly finished: readonly Finished[];
  readonly settled: readonly Settled[];
  readonly jobs: ModelJob[];
  /** Each job's claims when it settled: claimed again since, a repeat is fenced. */
  readonly claimsAt: number[];
}

/** A host that answers every write as done and writes nothing: the mutant the properties must catch. */
const lyingHost = (host: StepHost): StepHost => ({
  queue: host.queue,
  maxResultBytes: host.maxResultBytes,
  write: async () => true,
  invoke: (parent, child) => host.invoke(parent, child),
});

describe('durable steps under random programs and faults', () => {
  const redis = useRedis();

  /**
   * Every key of the queue, for "nothing changed": but the claims' request records (`req:`),
   * which expire with the lease they were made for (a short one lapses between two reads), and
   * meta's `st`, which a fenced step write or suspension turns on though it writes nothing else
   * (lua/step.lua and lua/suspend.lua mark the feature before the fence: reported, harmless to
   * the state).
   */
  async function keyspaceOf(queue: Queue<unknown>): Promise<Record<string, unknown>> {
    const all = await snapshotKeys(redis.raw, `emq:{${queue.name}}:*`);
    const meta = all[`emq:{${queue.name}}:meta`] as { value: Record<string, string> } | undefined;
    if (meta) delete meta.value.st;
    return Object.fromEntries(Object.entries(all).filter(([key]) => !key.includes('}:req:')));
  }

  /** Compares what Redis recorded of `job`'s steps with the model, learning each suspension's `until`. */
  function expectRecords(actual: readonly StepRecord[] | undefined, job: ModelJob, where: string): void {
    const got = actual ?? [];
    expect(got.map((r) => `${r.index} ${r.name} ${r.state}`), `${where}: ${job.id}'s records`).toEqual(
      job.records.map((r, i) => `${i + 1} ${job.program[i]!.name} ${r.state}`),
    );
    for (const [i, want] of job.records.entries()) {
      const step = job.program[i]!;
      const rec = got[i]!;
      const at = `${where}: ${job.id} step ${i + 1} (${step.name})`;
      expect(rec.kind, at).toBe(step.kind);
      if (want.kind === 'run') {
        expect(rec.attempts, `${at}: attempts`).toBe(want.attempts);
        if (want.state === 'done') expect(rec.result, `${at}: result`).toBe(want.result);
        else expect(rec.error, `${at}: error`).toContain(want.error);
      } else if (want.kind === 'sleep' && step.kind === 'sleep') {
        if (want.until === undefined) {
          expect(rec.until! - rec.startedAt!, `${at}: sleeps its ms`).toBe(step.ms);
          want.until = rec.until!;
        }
        expect(rec.until, `${at}: until`).toBe(want.until);
        if (want.state === 'done') {
          want.finishedAt ??= rec.finishedAt!;
          expect(rec.finishedAt, `${at}: finished`).toBe(want.finishedAt);
          expect(rec.finishedAt!, `${at}: a sleep done before its until`).toBeGreaterThanOrEqual(rec.until!);
        }
      } else if (want.kind === 'wait' && step.kind === 'wait') {
        expect(rec.event, at).toBe(step.event);
        if (want.until === undefined) {
          if (step.timeoutMs === null) expect(rec.until, `${at}: a wait without a timeout`).toBeUndefined();
          else expect(rec.until! - rec.startedAt!, `${at}: waits its timeoutMs`).toBe(step.timeoutMs);
          want.until = rec.until ?? null;
        }
        expect(rec.until ?? null, `${at}: until`).toBe(want.until);
        if (want.state === 'done') {
          expect({ result: rec.result, eventId: rec.eventId }, `${at}: the event it took`).toEqual({ result: want.result, eventId: want.eventId });
        } else {
          expect(rec.result, `${at}: no event`).toBeUndefined();
        }
        if (want.finishedAt !== undefined) expect(rec.finishedAt, `${at}: finished`).toBe(want.finishedAt);
      }
    }
  }

  /** Runs one scenario, asserting the model at every action; `lie` runs the handlers on a lying host. */
  async function scenario(programs: ReadonlyArray<readonly Step[]>, actions: readonly Action[], lie = false): Promise<void> {
    const name = queueName('steps');
    const queue = redis.queue<{ j: number }>({ name });
    const l = leases(queue);
    const host = lie ? lyingHost(l.steps) : l.steps;
    const model = new Model(programs);
    /** What the handlers really did: fn runs per job and step. */
    const ran = programs.map((p) => p.map(() => 0));
    const hung: Hung[] = [];
    const rounds: SettledRound[] = [];

    const expectRuns = (where: string): void =>
      expect(
        ran.map((r, j) => r.map((n, i) => `${programs[j]![i]!.name}: ${n}`)),
        `${where}: fn runs per step`,
      ).toEqual(model.jobs.map((job) => job.ran.map((n, i) => `${job.program[i]!.name}: ${n}`)));

    /** Reads each job back: its state, records, timeout and result as the model has them. */
    async function readBack(where: string): Promise<void> {
      const { counts } = await queue.stats();
      const count = (state: ModelJob['state']): number => model.jobs.filter((j) => j.state === state).length;
      expect({ sleeping: counts.sleeping, awaiting: counts.awaiting }, `${where}: stats`).toEqual({ sleeping: count('scheduled'), awaiting: count('awaiting') });
      for (const job of model.added()) {
        const record = (await queue.getJob(job.id))!;
        expect(record.state, `${where}: ${job.id}'s state`).toBe(job.state);
        expectRecords(record.steps, job, where);
        if (job.state === 'completed') expect(record.result, `${where}: ${job.id}'s result`).toEqual(job.result);
        if (job.state === 'awaiting') {
          const until = (job.records[job.suspendedAt!] as Extract<Rec, { kind: 'wait' }>).until;
          expect(record.timeoutAt ?? null, `${where}: ${job.id}'s timeout`).toBe(until);
        }
      }
    }

    async function beat(n: number, leaseMs: number, where: string): Promise<Array<Job<{ j: number }>>> {
      const claimed = await l.beat({ n, leaseMs });
      const counts = model.beat(claimed.now, (job) => {
        for (const h of hung) if (h.job === job) h.reaped = true;
      });
      expect({ requeued: claimed.requeued, promoted: claimed.promoted, buried: claimed.buried }, `${where}: the beat's counts`).toEqual({ ...counts, buried: 0 });
      const due = model.nextDue();
      expect(claimed.nextDueAt, `${where}: the beat's next due time`).toBe(due);
      const pending = model.jobs.filter((j) => j.state === 'pending').map((j) => j.id);
      if (n > 0) expect(claimed.jobs.map((j) => j.id).sort(), `${where}: claimed`).toEqual(pending.sort());
      return claimed.jobs;
    }

    /** A pass: a beat's claim, each job's handler, a round; a run may be abandoned, the round sent twice. */
    async function pass(act: Extract<Action, { a: 'pass' }>, where: string): Promise<number> {
      const jobs = await beat(50, act.abandon ? SHORT_LEASE : LONG_LEASE, where);
      const victim = act.abandon && jobs.length > 0 ? jobs[act.abandon.pick % jobs.length] : undefined;
      const runs = jobs.map((claimed) => {
        const job = model.byId(claimed.id);
        expect(claimed.attempt, `${where}: ${job.id}'s attempt`).toBe(job.attempt);
        expectRecords(claimed.steps, job, `${where} (as claimed)`);
        job.claims++;
        job.state = 'active';
        const snapshot = structuredClone(job.records);
        const hang = claimed === victim && job.abandons < MAX_ABANDONS ? { at: act.abandon!.at % (job.program.length + 1), inFn: act.abandon!.inFn } : null;
        const ctl = new Control(hang?.at ?? null, hang?.inFn ?? false);
        const outcome = runHandler(handlerFor(job.program, ran[job.index]!, ctl), claimed, { controller: new AbortController(), steps: host });
        const predicted = model.runLive(job, hang);
        return { claimed, job, snapshot, hang, ctl, outcome, predicted };
      });
      const ends = await Promise.all(runs.map((r) => Promise.race([r.outcome, r.ctl.hung])));
      if (act.during) await send(act.during, `${where} (during)`);
      const finished: Finished[] = [];
      const expected: Settled[] = [];
      const settling: ModelJob[] = [];
      for (const [i, r] of runs.entries()) {
        const end = ends[i]!;
        expect(end === 'hung' ? 'hang' : 'settle', `${where}: ${r.job.id}'s run ends`).toBe(r.predicted.end === 'hang' ? 'hang' : 'settle');
        if (end === 'hung') {
          r.job.abandons++;
          r.job.leaseUntil = r.claimed.leaseUntil;
          // in its fn only at a run step (past the last step, it hangs before returning)
          const inFn = r.hang!.inFn && r.job.program[r.hang!.at]?.kind === 'run';
          hung.push({ job: r.job, claimed: r.claimed, snapshot: r.snapshot, at: r.hang!.at, inFn, ctl: r.ctl, outcome: r.outcome, reaped: false, woken: false });
        } else if (r.predicted.end !== 'hang') {
          finished.push({ job: r.claimed, outcome: end });
          expected.push(r.predicted.end === 'wait' ? model.suspendWait(r.job, r.predicted.at) : r.predicted.settled);
          settling.push(r.job);
        }
      }
      expectRuns(where);
      if (finished.length > 0) {
        const { settled } = await l.round({ finished, leaseMs: LONG_LEASE });
        await l.relayed();
        expect(settled, `${where}: settled`).toEqual(expected);
        rounds.push({ finished, settled, jobs: settling, claimsAt: settling.map((j) => j.claims) });
        if (act.repeat) {
          // the reply lost, the same round again: the same answers, nothing written
          const before = await keyspaceOf(queue);
          const again = await l.round({ finished, leaseMs: LONG_LEASE });
          expect(again.settled, `${where}: the round sent again`).toEqual(settled);
          expect(await keyspaceOf(queue), `${where}: the round sent again wrote`).toEqual(before);
        }
      }
      await readBack(where);
      return jobs.length;
    }

    /** Sends an event (or one sent before, again, by its id); checks its answer and who it resumed. */
    async function send(act: Send, where: string): Promise<void> {
      if (act.id === 'again' && model.withIds.length > 0) {
        const first = model.withIds[act.pick % model.withIds.length]!;
        const before = await keyspaceOf(queue);
        const reply = await queue.sendEvent(first.name, first.data, { id: first.id, ...(first.keep ? {} : { keepMs: 0 }) });
        expect(reply, `${where}: ${first.name} ${first.id} sent again`).toEqual(first.reply);
        expect(await keyspaceOf(queue), `${where}: ${first.name} ${first.id} sent again wrote`).toEqual(before);
        return;
      }
      const tag = `d${++model.tags}`;
      const data = act.k === null ? { tag } : { tag, k: act.k };
      const given = act.id === 'fresh' ? `ev-${tag}` : undefined;
      const reply = await queue.sendEvent(act.event, data, { ...(given === undefined ? {} : { id: given }), ...(act.keep ? {} : { keepMs: 0 }) });
      const seq = ++model.seq;
      const event: Sent = { seq, id: given ?? String(seq), name: act.event, data, keep: act.keep, reply };
      model.sent.push(event);
      if (given !== undefined) model.withIds.push(event);
      expect(reply, `${where}: the send's answer`).toEqual({ id: event.id, resumed: model.deliver(event) });
    }

    /** Wakes an abandoned run its beat reaped: whatever it does now is fenced. */
    async function wake(h: Hung, where: string): Promise<void> {
      h.woken = true;
      const before = await keyspaceOf(queue);
      h.ctl.wake();
      const outcome = await h.outcome;
      const kind = model.runZombie(h.job, h.snapshot, h.at, h.inFn);
      expect(outcome.kind, `${where}: the zombie of ${h.job.id} ends`).toBe(kind);
      if (outcome.kind === 'fail') expect(outcome.error, where).toContain('lease was lost');
      expectRuns(where);
      const { settled } = await l.round({ finished: [{ job: h.claimed, outcome }], leaseMs: LONG_LEASE });
      expect(settled, `${where}: the zombie's settle`).toEqual(['fenced']);
      expect(await keyspaceOf(queue), `${where}: the zombie wrote`).toEqual(before);
    }

    async function act(action: Action, where: string): Promise<void> {
      switch (action.a) {
        case 'add': {
          const job = model.jobs[action.job]!;
          // an event sent in the same ms as the enqueue counts as sent after it (lua/suspend.lua
          // compares ms: sent >= created; reported): 3 ms keep the events sent before it apart
          await sleep(3);
          const { id, state } = await queue.add({ j: job.index }, { maxAttempts: MAX_ATTEMPTS, backoff: 0 });
          expect(state).toBe('pending');
          job.id = id;
          job.createdSeq = model.seq;
          job.state = 'pending';
          return;
        }
        case 'pass':
          await pass(action, where);
          return;
        case 'send':
          await send(action, where);
          await readBack(where);
          return;
        case 'beat':
          await beat(0, LONG_LEASE, where);
          await readBack(where);
          return;
        case 'tick':
          await sleep(action.ms);
          return;
        case 'zombie': {
          const ready = hung.filter((h) => h.reaped && !h.woken);
          if (ready.length > 0) await wake(ready[action.pick % ready.length]!, where);
          return;
        }
        case 'stale': {
          if (rounds.length === 0) return;
          const round = rounds[action.pick % rounds.length]!;
          const want = round.settled.map((s, i) => (round.jobs[i]!.claims === round.claimsAt[i] ? s : 'fenced'));
          const before = await keyspaceOf(queue);
          const { settled } = await l.round({ finished: round.finished, leaseMs: LONG_LEASE });
          expect(settled, `${where}: an old round sent again`).toEqual(want);
          expect(await keyspaceOf(queue), `${where}: an old round sent again wrote`).toEqual(before);
          return;
        }
      }
    }

    try {
      for (const [i, action] of actions.entries()) {
        const where = `action ${i} ${JSON.stringify(action)}`;
        await act(action, where);
        expect(await checkInvariants(redis.raw, name), `${where}: invariants`).toEqual([]);
      }
      // then to the end: passes (and the events waits without a timeout need) until every job is done
      for (let turn = 0; model.jobs.some((j) => j.state !== 'completed'); turn++) {
        const where = `drain ${turn}`;
        expect(turn, 'no progress').toBeLessThan(300);
        for (const job of model.jobs) {
          const step = job.state === 'awaiting' ? job.program[job.suspendedAt!] : undefined;
          if (step?.kind === 'wait' && step.timeoutMs === null) {
            await send({ event: step.event, k: step.match ?? 'a', id: 'none', keep: false, pick: 0 }, where);
          }
        }
        if ((await pass({ a: 'pass', repeat: false, abandon: null, during: null }, where)) === 0) await sleep(5);
        expect(await checkInvariants(redis.raw, name), `${where}: invariants`).toEqual([]);
      }
      for (const h of hung) if (!h.woken) await wake(h, 'at the end');
      expect(await checkInvariants(redis.raw, name), 'at the end: invariants').toEqual([]);

      // the properties, read from what Redis recorded
      for (const job of model.jobs) {
        const record = (await queue.getJob(job.id))!;
        expect(record.state).toBe('completed');
        expect(record.result, `${job.id}'s result`).toEqual(job.result);
        const steps = record.steps ?? [];
        const taken = new Set<string>();
        for (const [i, step] of job.program.entries()) {
          const rec = steps[i]!;
          if (step.kind === 'run') {
            // each fn run is one recorded try (the failures and the one done), or one of a run that
            // was abandoned before its record landed
            expect(rec.state).toBe('done');
            expect(ran[job.index]![i], `${job.id} ${step.name}: fn runs`).toBe(rec.attempts + job.abandonedRuns[i]!);
          } else if (step.kind === 'sleep') {
            expect(rec.finishedAt!, `${job.id} ${step.name}: done before its until`).toBeGreaterThanOrEqual(rec.until!);
          } else if (rec.state === 'done') {
            const event = model.sent.find((e) => e.id === rec.eventId);
            expect(event, `${job.id} ${step.name}: took ${rec.eventId}, never sent`).toBeDefined();
            expect(event!.seq, `${job.id} ${step.name}: took an event sent before the job was created`).toBeGreaterThan(job.createdSeq);
            expect(taken.has(rec.eventId!), `${job.id} ${step.name}: took ${rec.eventId} twice`).toBe(false);
            taken.add(rec.eventId!);
          } else {
            expect(rec.state).toBe('timed-out');
          }
        }
      }
    } finally {
      // a zombie never woken stays parked on its gate: nothing of it runs once the keys are gone
      const keys = await redis.raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await redis.raw.del(...keys);
    }
  }

  const property = (lie: boolean) => fc.asyncProperty(scenarioArb, ({ programs, actions }) => scenario(programs, actions, lie));

  it('records each step once, resumes each wait with its event or null, and keeps every invariant', async () => {
    await fc.assert(property(false), { numRuns: NUM_RUNS, ...REPLAY });
  }, 180_000);

  it('fails on the first run against a step host whose write answers true without writing', async () => {
    const details = await fc.check(property(true), { numRuns: NUM_RUNS, endOnFailure: true, ...REPLAY });
    expect(details.failed, 'the properties passed against a lying host').toBe(true);
    expect(details.numRuns).toBe(1);
    expect(String(details.errorInstance)).toMatch(/records|fn runs/);
  }, 60_000);
});
