import { FlowProducer, type Job as BullJob } from 'bullmq';
import { type FlowJob, Flows } from '../../src/flows/flows.js';
import type { Job } from '../../src/job.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, redisCostPerJob, sized, startMeter } from '../lib/context.js';
import { bullConnection, bullWorker, echoQueue } from '../lib/impls.js';
import { CountingTransport } from '../lib/round-trips.js';
import { latch, quantile, round } from '../lib/stats.js';

/** A flow-fanout run: `flows` trees, each a parent in one queue and `childrenPerQueue` children in each of two others. */
export interface FlowFanoutSpec {
  readonly flows: number;
  /** Children of each parent in each of the two child queues. */
  readonly childrenPerQueue: number;
  /** Slots of each queue's consumer (echomq) or Worker (BullMQ). */
  readonly concurrency: number;
  /** Adds in flight at once: each of this many loops adds one tree and awaits it before the next. */
  readonly inFlight: number;
  /** How long the measured run may take before the case fails, ms. */
  readonly timeoutMs: number;
}

/** Issue 18's case: 200 flows of 1 parent and 20 children (10 in each of two queues), concurrency 50 per queue. */
export const FLOW_FANOUT_FULL: FlowFanoutSpec = { flows: 200, childrenPerQueue: 10, concurrency: 50, inFlight: 50, timeoutMs: 120_000 };
/** --quick: the same trees and slots, 50 flows. */
export const FLOW_FANOUT_QUICK: FlowFanoutSpec = { ...FLOW_FANOUT_FULL, flows: 50, timeoutMs: 60_000 };
/** --smoke: the same trees, 4 flows. */
export const FLOW_FANOUT_SMOKE: FlowFanoutSpec = { ...FLOW_FANOUT_FULL, flows: 4, inFlight: 4, timeoutMs: 30_000 };

/** A child's payload and result: its flow and its page (0 .. 2 * childrenPerQueue - 1). */
interface ChildPayload {
  readonly flow: number;
  readonly page: number;
}
/** A parent's payload: its flow (-1 for the warm-up). */
interface ParentPayload {
  readonly flow: number;
}
interface PageResult {
  readonly page: number;
}

/**
 * What both sides report from their handlers: when each flow's last child's handler returned,
 * when its parent's handler started, whether the parent's join saw every child's result, and the
 * parents completed (the end of the run).
 */
class Tracker {
  /** Per flow: the latest return of one of its children's handlers (performance.now()). */
  private readonly lastChildEnd = new Map<number, number>();
  private readonly pages: number;
  readonly releases: number[] = [];
  childrenDone = 0;
  /** When the latest child's handler returned (performance.now()). */
  lastChild = 0;
  parentsStarted = 0;
  parentsDone = 0;
  badJoins = 0;
  /** Resolves with performance.now() at the expected parent's completion. */
  done = latch<number>();

  constructor(
    spec: FlowFanoutSpec,
    /** Parents to complete before `done` resolves (the warm-up's one, then the run's). */
    private expected: number,
  ) {
    this.pages = 2 * spec.childrenPerQueue;
  }

  child(flow: number, page: number): PageResult {
    this.childrenDone++;
    const now = performance.now();
    if ((this.lastChildEnd.get(flow) ?? 0) < now) this.lastChildEnd.set(flow, now);
    this.lastChild = now;
    return { page };
  }

  /** A parent's handler started; `results` are its children's results as its library hands them over. */
  parent(flow: number, results: ReadonlyArray<unknown>): { pages: number } {
    const now = performance.now();
    this.parentsStarted++;
    const last = this.lastChildEnd.get(flow);
    if (last !== undefined && flow >= 0) this.releases.push(now - last);
    const pages = new Set(results.map((r) => (r as PageResult | undefined)?.page));
    const whole = results.length === this.pages && pages.size === this.pages && [...pages].every((p) => typeof p === 'number' && p >= 0 && p < this.pages);
    if (!whole) this.badJoins++;
    return { pages: results.length };
  }

  parentCompleted(): void {
    if (++this.parentsDone === this.expected) this.done.resolve(performance.now());
  }

  /** Starts counting the run's parents anew (after the warm-up flow). */
  expect(parents: number): void {
    this.expected = parents;
    this.parentsDone = 0;
    this.childrenDone = 0;
    this.lastChild = 0;
    this.parentsStarted = 0;
    this.badJoins = 0;
    this.releases.length = 0;
    this.lastChildEnd.clear();
    this.done = latch<number>();
  }

  /** `promise`, or a rejection after `ms` saying where the run stood. */
  async within<T>(promise: Promise<T>, ms: number, impl: Impl): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const where = `${this.parentsDone} of ${this.expected} parents completed within ${ms} ms`;
        reject(new Error(`flow-fanout ${impl}: ${where} (${this.childrenDone} children completed, ${this.parentsStarted} parents started)`));
      }, ms);
    });
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** One implementation running: its consumers parked on the three queues, its producer ready. */
interface Side {
  /** Adds flow `flow`'s tree and resolves once the library has answered it. */
  add(flow: number): Promise<void>;
  /** Client round trips so far (echomq: requests through its counting transports), or undefined to count socket writes. */
  requests(): number | undefined;
  stop(): Promise<void>;
}

const pagesOf = (spec: FlowFanoutSpec, flow: number, half: 0 | 1): ChildPayload[] =>
  Array.from({ length: spec.childrenPerQueue }, (_, i) => ({ flow, page: half * spec.childrenPerQueue + i }));

/**
 * echomq: one `Flows` on a connection of its own adds each tree in one `flows.add` (its one round
 * trip); one parked `Consumer` per queue, concurrency `spec.concurrency` each, on a connection each.
 * A parent's handler reads `job.children`, which its claim brought.
 */
async function echoSide(ctx: BenchContext, spec: FlowFanoutSpec, names: Names, tracker: Tracker): Promise<Side> {
  const producer = new CountingTransport(IoredisTransport.connect(ctx.url));
  const flows = new Flows(producer);
  const transports: CountingTransport[] = [producer];
  const consumers: Array<Consumer<ChildPayload> | Consumer<ParentPayload>> = [];
  const onError = (error: unknown): void => console.error('flow-fanout echomq consumer error:', error);
  for (const name of [names.a, names.b]) {
    const { transport, queue } = echoQueue<ChildPayload>(ctx, name);
    transports.push(transport);
    await transport.ping();
    consumers.push(new Consumer(transport, queue, (job) => tracker.child(job.payload.flow, job.payload.page), { concurrency: spec.concurrency, hooks: { onError } }).start());
  }
  {
    const { transport, queue } = echoQueue<ParentPayload>(ctx, names.parent);
    transports.push(transport);
    await transport.ping();
    const handler = (job: Job<ParentPayload>): { pages: number } => {
      const children = job.children ?? [];
      return tracker.parent(job.payload.flow, children.map((c) => (c.state === 'completed' ? c.result : undefined)));
    };
    consumers.push(
      new Consumer(transport, queue, handler, {
        concurrency: spec.concurrency,
        hooks: { onError, onCompleted: () => tracker.parentCompleted() },
      }).start(),
    );
  }
  return {
    async add(flow) {
      const tree: FlowJob = {
        queue: names.parent,
        payload: { flow } satisfies ParentPayload,
        children: [
          ...pagesOf(spec, flow, 0).map((payload) => ({ queue: names.a, payload })),
          ...pagesOf(spec, flow, 1).map((payload) => ({ queue: names.b, payload })),
        ],
      };
      await flows.add(tree);
    },
    requests: () => transports.reduce((sum, t) => sum + t.requests, 0),
    async stop() {
      await Promise.all(consumers.map((c) => c.stop()));
      await Promise.all(transports.map((t) => t.close()));
    },
  };
}

/**
 * BullMQ: one `FlowProducer` adds each tree in one `add`; one Worker per queue, concurrency
 * `spec.concurrency` each. A parent's processor reads `job.getChildrenValues()` (one more round
 * trip: BullMQ does not hand the children's results over with the job).
 */
async function bullSide(ctx: BenchContext, spec: FlowFanoutSpec, names: Names, tracker: Tracker): Promise<Side> {
  const producer = new FlowProducer({ connection: bullConnection(ctx) });
  await producer.waitUntilReady();
  const workers = [
    bullWorker(ctx, names.a, async (job: BullJob<ChildPayload>) => tracker.child(job.data.flow, job.data.page), { concurrency: spec.concurrency }),
    bullWorker(ctx, names.b, async (job: BullJob<ChildPayload>) => tracker.child(job.data.flow, job.data.page), { concurrency: spec.concurrency }),
    bullWorker(
      ctx,
      names.parent,
      async (job: BullJob<ParentPayload>) => {
        const values = await job.getChildrenValues<PageResult>();
        return tracker.parent(job.data.flow, Object.values(values));
      },
      { concurrency: spec.concurrency },
    ),
  ];
  workers[2]!.on('completed', () => tracker.parentCompleted());
  for (const worker of workers) {
    worker.on('error', (error) => console.error('flow-fanout bullmq worker error:', error));
    await worker.waitUntilReady();
    void worker.run();
  }
  return {
    async add(flow) {
      await producer.add({
        name: 'parent',
        queueName: names.parent,
        data: { flow } satisfies ParentPayload,
        children: [
          ...pagesOf(spec, flow, 0).map((data) => ({ name: 'child', queueName: names.a, data })),
          ...pagesOf(spec, flow, 1).map((data) => ({ name: 'child', queueName: names.b, data })),
        ],
      });
    },
    requests: () => undefined,
    async stop() {
      await Promise.all(workers.map((w) => w.close()));
      await producer.close();
    },
  };
}

interface Names {
  readonly parent: string;
  readonly a: string;
  readonly b: string;
}

/**
 * Runs flow-fanout for one implementation. Consumers start first, parked on the empty queues; one
 * warm-up flow runs to its parent's completion (scripts loaded, queues registered: not measured);
 * then the measured window opens just before the first add and closes at the last parent's
 * completion, with `spec.inFlight` loops adding trees one after another meanwhile.
 */
export async function measureFlowFanout(ctx: BenchContext, impl: Impl, spec: FlowFanoutSpec): Promise<Figures> {
  const tag = benchQueueName('flow');
  const names: Names = { parent: `${tag}-parent`, a: `${tag}-a`, b: `${tag}-b` };
  const tracker = new Tracker(spec, 1);
  const side = impl === 'echomq' ? await echoSide(ctx, spec, names, tracker) : await bullSide(ctx, spec, names, tracker);
  try {
    await side.add(-1);
    await tracker.within(tracker.done.promise, spec.timeoutMs, impl);
    tracker.expect(spec.flows);

    const requests0 = side.requests();
    const meter = await startMeter(ctx);
    const t0 = performance.now();
    let next = 0;
    let addsDone = 0;
    const adder = async (): Promise<void> => {
      while (next < spec.flows) {
        await side.add(next++);
      }
      addsDone = Math.max(addsDone, performance.now());
    };
    const adding = Promise.all(Array.from({ length: Math.min(spec.inFlight, spec.flows) }, adder));
    const [t1] = await tracker.within(Promise.all([tracker.done.promise, adding]), spec.timeoutMs, impl);
    const m = await meter.stop();
    const requests1 = side.requests();
    const trips = requests0 === undefined || requests1 === undefined ? m.writes : requests1 - requests0;
    const jobs = spec.flows * (1 + 2 * spec.childrenPerQueue);
    return {
      flows: spec.flows,
      jobs,
      flows_per_s: round(spec.flows / ((t1 - t0) / 1000), 1),
      jobs_per_s: round(jobs / ((t1 - t0) / 1000), 0),
      adds_ms: round(addsDone - t0, 1),
      children_ms: round(tracker.lastChild - t0, 1),
      total_ms: round(t1 - t0, 1),
      ...redisCostPerJob(m, jobs),
      round_trips_per_job: round(trips / jobs, 3),
      release_p50_ms: round(quantile(tracker.releases, 0.5)),
      release_p95_ms: round(quantile(tracker.releases, 0.95)),
      release_max_ms: round(tracker.releases.length === 0 ? null : Math.max(...tracker.releases)),
      bad_joins: tracker.badJoins,
    };
  } finally {
    await side.stop();
  }
}

/**
 * `flow-fanout` (issue 18): 200 flows, each a parent in one queue waiting on 20 children, 10 in
 * each of two other queues, run end to end at concurrency 50 per queue, echomq beside BullMQ's
 * FlowProducer. Handlers do no work: a child returns `{page}`, a parent reads its children's
 * results (echomq `job.children`, BullMQ `job.getChildrenValues()`) and checks it has all 20.
 *
 * Figures: `flows_per_s` (and `jobs_per_s`, 21 jobs a flow) from just before the first add to
 * the last parent's completion, the adds included (`spec.inFlight` loops, each awaiting its add
 * before the next); along that window (ms from its start) `adds_ms` when the last add returned,
 * `children_ms` when the last child's handler returned, `total_ms` the last parent's completion; `commands_per_job` (INFO
 * commandstats delta over that window / jobs) and `round_trips_per_job` (echomq: requests
 * through its counting transports, producer and consumers; BullMQ: socket writes);
 * `release_*_ms`, per flow, from the return of its last child's handler to its parent's
 * handler's start (the child's settle, the release, the parent's claim); `bad_joins`, parents
 * that did not see 20 distinct results (0 unless something is broken).
 */
export const flowFanout: BenchCase = {
  name: 'flow-fanout',
  impls: ['echomq', 'bullmq'],
  run: (ctx, impl) => measureFlowFanout(ctx, impl, sized(ctx, { full: FLOW_FANOUT_FULL, quick: FLOW_FANOUT_QUICK, smoke: FLOW_FANOUT_SMOKE })),
};
