import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ChildOutcome } from '../../src/flows/flow.js';
import { type FlowJob, Flows } from '../../src/flows/flows.js';
import { UnrecoverableError } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { Consumer } from '../../src/node/consumer/index.js';
import type { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkFlowLinks } from '../flow-links.js';
import { queueName, sleep } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { type ReportingSuite, startReportingSuite } from './reporting-suite.js';
import { reportingWorkerEntry } from './worker-bundle.js';

const root = join(import.meta.dirname, '..', '..');
const BRIDGE_TOKEN = 'bridge-token-for-flow-tests';
const EMQ_TOKEN = 'worker-token-for-flow-tests';

/** A flow job's payload here: its index among its siblings, and whether its handler fails for good. */
interface Payload {
  readonly i: number;
  readonly fail?: boolean;
}

/** What every handler here returns, on either runtime: its queue and index, and how many children it saw. */
interface Result {
  readonly q: string;
  readonly i: number;
  readonly n: number;
}

/**
 * The Worker of this suite: `createWorker` (the shipped Worker's code) serving the queues its
 * `FLOW_QUEUES` binding names (comma-separated), each handler reporting its run (queue, id, token,
 * the children it saw) to `REPORT_URL` before it returns `{q, i, n}` (or throws
 * UnrecoverableError for a payload with `fail`), as the Node consumers' handlers do. Bundled as
 * wrangler deploys it (test/edge/rate-limits.test.ts does the same for its own); a scheduled
 * event ends only once its reports are sent.
 */
const ENTRY = reportingWorkerEntry(
  `
    const handlers = {};
    for (const q of env.FLOW_QUEUES.split(',')) {
      handlers[q] = async (job) => {
        await report({ runtime: 'edge', queue: q, id: job.id, token: job.token, children: job.children ?? null });
        if (job.payload.fail) throw new UnrecoverableError('fails on purpose');
        return { q, i: job.payload.i, n: job.children ? job.children.length : 0 };
      };
    }
    worker = createWorker({ handlers, log: () => {} });
`,
  `import { UnrecoverableError } from ${JSON.stringify(join(root, 'src', 'handler.ts'))};`,
);


/** A handler run, on either runtime: the children it saw (null for a job without). */
interface Run {
  readonly runtime: 'edge' | 'node';
  readonly queue: string;
  readonly id: string;
  readonly token: number;
  readonly children: ChildOutcome[] | null;
}

/**
 * Per job id (`queue|id`), the times (server ms, from the events streams) of its events by name; a
 * `released` event without a children count (a job given back unstarted) as `given-back`.
 */
type EventTimes = Map<string, Map<string, number[]>>;

/**
 * Flows across runtimes (docs/design.md, "Flows"): a parent and its children in different queues,
 * run by the Worker under miniflare (workerd, over @upstash/redis and the REST bridge) and by
 * Node consumers (ioredis) together. Whichever runtime settles a child relays its news to the
 * parent's queue; the parent is released once, after its last child, runs once, and sees every
 * child's result.
 */
describe('flows on the Worker and on Node', () => {
  let suite: ReportingSuite;
  let raw: Redis;
  let transport: IoredisTransport;
  const runs: Run[] = [];
  const made: string[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    const onReport = (body: unknown): void => void runs.push(body as Run);
    suite = await startReportingSuite({ entry: ENTRY, name: 'echomq-flow-test', redisUrl: inject('redisUrl'), bridgeToken: BRIDGE_TOKEN, emqToken: EMQ_TOKEN, onReport });
    ({ raw, transport } = suite);
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    for (const name of made.splice(0)) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
  });
  afterAll(async () => {
    await suite?.close();
  });

  const queue = (label: string): Queue<Payload> => {
    const name = queueName(label);
    made.push(name);
    return new Queue<Payload>(transport, name);
  };

  /** The Worker serving `queues`, in a miniflare of its own; answers one scheduled event's trigger. */
  async function startWorker(queues: ReadonlyArray<Queue<Payload>>, env: Record<string, string> = {}): Promise<() => Promise<unknown>> {
    const { mf } = await suite.startWorker({
      FLOW_QUEUES: queues.map((q) => q.name).join(','),
      EMQ_BEAT_DEADLINE_MS: '2000',
      EMQ_JOB_TIMEOUT_MS: '1000',
      EMQ_DRAIN_ON_ENQUEUE_MS: '0',
      ...env,
    });
    cleanups.push(() => mf.dispose());
    const worker = await mf.getWorker();
    return () => worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
  }

  /** A Node consumer of `q`, started; each child run takes `ms`. Stopped after the test. */
  function consume(q: Queue<Payload>, ms = 0): void {
    const consumer = Consumer.connect<Payload>(
      inject('redisUrl'),
      q.name,
      async (job: Job<Payload>): Promise<Result> => {
        runs.push({ runtime: 'node', queue: q.name, id: job.id, token: job.token, children: job.children ?? null });
        if (ms > 0) await sleep(ms);
        if (job.payload.fail) throw new UnrecoverableError('fails on purpose');
        return { q: q.name, i: job.payload.i, n: job.children?.length ?? 0 };
      },
      { concurrency: 1, prefetch: 0, leaseMs: 30_000, beatMs: 500, log: false },
    ).start();
    cleanups.push(() => consumer.stop(1_000));
  }

  /** Runs scheduled events back to back (and the Node consumers meanwhile) until `done` or 40 s. */
  async function runUntil(scheduled: (() => Promise<unknown>) | undefined, done: () => Promise<boolean>): Promise<number> {
    const t0 = performance.now();
    while (!(await done()) && performance.now() - t0 < 40_000) {
      if (scheduled) await scheduled();
      else await sleep(50);
    }
    return performance.now() - t0;
  }

  /** The events of `queues`' streams, by job and name, with their server times. */
  async function eventTimes(queues: ReadonlyArray<Queue<Payload>>): Promise<EventTimes> {
    const out: EventTimes = new Map();
    for (const q of queues) {
      for (let after = '0'; ; ) {
        const page = await q.readEvents({ after, limit: 1000 });
        for (const e of page.events) {
          if (!('jobId' in e)) continue;
          const key = `${q.name}|${e.jobId}`;
          let byName = out.get(key);
          if (!byName) out.set(key, (byName = new Map()));
          // `released` names two things: a flow parent's release (with its children's count) and a job given back unstarted
          const event = e.event === 'released' && e.children === undefined ? 'given-back' : e.event;
          byName.set(event, [...(byName.get(event) ?? []), e.time]);
        }
        if (page.next === after) break;
        after = page.next;
      }
    }
    return out;
  }

  const runsOf = (q: Queue<Payload>, id: string): Run[] => runs.filter((r) => r.queue === q.name && r.id === id);
  const byId = (a: ChildOutcome, b: ChildOutcome): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  it('a parent with 100 children over three queues, run by two runtimes at once, is released once after its last child and sees every result', async () => {
    const parents = queue('flow-p');
    const kids = [queue('flow-a'), queue('flow-b'), queue('flow-c')];
    const all = [parents, ...kids];
    const scheduled = await startWorker(all);
    await scheduled(); // the isolate loads its scripts first
    for (const q of all) consume(q, 25);

    const tree: FlowJob<Payload> = {
      queue: parents.name,
      id: 'big',
      payload: { i: 0 },
      children: Array.from({ length: 100 }, (_, i) => ({ queue: kids[i % 3]!.name, payload: { i } })),
    };
    const written = await new Flows(transport).add(tree);
    expect(written.state).toBe('waiting');
    const tookMs = await runUntil(scheduled, async () => (await parents.getJob('big'))?.state === 'completed');

    // the parent ran once, and saw every child completed with its handler's result
    const parentRuns = runsOf(parents, 'JOB:big');
    expect(parentRuns).toHaveLength(1);
    const expected = written.children.map((c, i): ChildOutcome => ({ queue: c.queue, id: c.id, state: 'completed', result: { q: c.queue, i, n: 0 } }));
    expect([...(parentRuns[0]!.children ?? [])].sort(byId)).toEqual([...expected].sort(byId));
    expect(await parents.getJob('big')).toMatchObject({ state: 'completed', result: { q: parents.name, i: 0, n: 100 } });

    // each child ran once, some on each runtime
    const childRuns = runs.filter((r) => r.queue !== parents.name && kids.some((k) => k.name === r.queue));
    const perChild = new Map<string, number>();
    for (const r of childRuns) perChild.set(`${r.queue}|${r.id}`, (perChild.get(`${r.queue}|${r.id}`) ?? 0) + 1);
    expect(perChild.size).toBe(100);
    expect([...perChild.values()].every((n) => n === 1)).toBe(true);
    const byRuntime = { edge: childRuns.filter((r) => r.runtime === 'edge').length, node: childRuns.filter((r) => r.runtime === 'node').length };
    expect(byRuntime.edge).toBeGreaterThan(0);
    expect(byRuntime.node).toBeGreaterThan(0);

    // by the server's clock: released once, after the last child completed; claimed after that
    const times = await eventTimes(all);
    const parentEvents = times.get(`${parents.name}|JOB:big`)!;
    expect(parentEvents.get('released')).toHaveLength(1);
    expect(parentEvents.get('active')).toHaveLength(1);
    const lastChild = Math.max(...written.children.map((c) => times.get(`${c.queue}|${c.id}`)!.get('completed')![0]!));
    expect(parentEvents.get('released')![0]!).toBeGreaterThanOrEqual(lastChild);
    expect(parentEvents.get('active')![0]!).toBeGreaterThanOrEqual(parentEvents.get('released')![0]!);

    expect(await checkFlowLinks(raw, all.map((q) => q.name))).toEqual([]);
    for (const q of all) expect(await checkInvariants(raw, q.name)).toEqual([]);
    const parentRuntime = parentRuns[0]!.runtime;
    console.log(
      `edge + node flow: 100 children over 3 queues in ${Math.round(tookMs)} ms; children run ${JSON.stringify(byRuntime)}, the parent on ${parentRuntime}; ` +
        `released ${parentEvents.get('released')![0]! - lastChild} ms after the last child completed, claimed ${parentEvents.get('active')![0]! - parentEvents.get('released')![0]!} ms after its release`,
    );
  }, 90_000);

  it('the Worker alone: a parent released by its children on the Worker runs in the same scheduled event', async () => {
    const parents = queue('flow-ep');
    const kids = queue('flow-ek');
    // drains after an enqueue (and so after a release) on, as deployed; no Node consumer at all
    const scheduled = await startWorker([parents, kids], { EMQ_DRAIN_ON_ENQUEUE_MS: '5000' });
    await scheduled(); // the isolate loads its scripts first
    await new Flows(transport).add({
      queue: parents.name,
      id: 'edge-only',
      payload: { i: 0 },
      children: Array.from({ length: 10 }, (_, i) => ({ queue: kids.name, payload: { i } })),
    });
    // one event: the parents' drain finds nothing and ends; the children's drain completes them,
    // and the release it relays starts a drain of the parents' queue, which the event awaits
    await scheduled();
    expect(await parents.getJob('edge-only')).toMatchObject({ state: 'completed', result: { q: parents.name, i: 0, n: 10 } });
    expect(runsOf(parents, 'JOB:edge-only').map((r) => r.runtime)).toEqual(['edge']);
    expect(await checkFlowLinks(raw, [parents.name, kids.name])).toEqual([]);
  }, 60_000);

  it('nests three deep across the runtimes: Node leaves release Worker middles, whose completion releases a Node root', async () => {
    // Node serves the root's queue and one leaf queue, the Worker the middles' and the other leaves'
    const nodeRoot = queue('flow-nr');
    const nodeLeaves = queue('flow-nl');
    const edgeMiddles = queue('flow-em');
    const edgeLeaves = queue('flow-el');
    const all = [nodeRoot, nodeLeaves, edgeMiddles, edgeLeaves];
    const scheduled = await startWorker([edgeMiddles, edgeLeaves]);
    await scheduled();
    consume(nodeRoot);
    consume(nodeLeaves);

    const leaves = (m: number): Array<FlowJob<Payload>> =>
      Array.from({ length: 6 }, (_, i) => ({ queue: (i % 2 === 0 ? nodeLeaves : edgeLeaves).name, payload: { i: m * 10 + i } }));
    const written = await new Flows(transport).add({
      queue: nodeRoot.name,
      id: 'deep',
      payload: { i: 0 },
      children: [
        { queue: edgeMiddles.name, payload: { i: 1 }, children: leaves(1) },
        { queue: edgeMiddles.name, payload: { i: 2 }, children: leaves(2) },
        { queue: nodeLeaves.name, payload: { i: 3 } },
      ],
    });
    expect(written.children.map((c) => c.state)).toEqual(['waiting', 'waiting', 'pending']);
    await runUntil(scheduled, async () => (await nodeRoot.getJob('deep'))?.state === 'completed');

    // the root on Node, once, with its children's results: the middles' (6 children each, run on the Worker) and a leaf's
    const rootRuns = runsOf(nodeRoot, 'JOB:deep');
    expect(rootRuns.map((r) => r.runtime)).toEqual(['node']);
    expect(rootRuns[0]!.children).toEqual([
      { queue: edgeMiddles.name, id: 'JOB:deep.0', state: 'completed', result: { q: edgeMiddles.name, i: 1, n: 6 } },
      { queue: edgeMiddles.name, id: 'JOB:deep.1', state: 'completed', result: { q: edgeMiddles.name, i: 2, n: 6 } },
      { queue: nodeLeaves.name, id: 'JOB:deep.2', state: 'completed', result: { q: nodeLeaves.name, i: 3, n: 0 } },
    ]);
    // each middle on the Worker, once, with its six leaves' results from both runtimes
    const times = await eventTimes(all);
    for (const [m, middle] of written.children.slice(0, 2).entries()) {
      const middleRuns = runsOf(edgeMiddles, middle.id);
      expect(middleRuns.map((r) => r.runtime)).toEqual(['edge']);
      expect(middleRuns[0]!.children).toEqual(
        middle.children.map((leaf, i) => ({ queue: leaf.queue, id: leaf.id, state: 'completed', result: { q: leaf.queue, i: (m + 1) * 10 + i, n: 0 } })),
      );
      const leafRuntimes = middle.children.map((leaf) => runs.filter((r) => r.queue === leaf.queue && r.id === leaf.id).map((r) => r.runtime));
      expect(leafRuntimes).toEqual(middle.children.map((_, i) => [i % 2 === 0 ? 'node' : 'edge']));
      const lastLeaf = Math.max(...middle.children.map((leaf) => times.get(`${leaf.queue}|${leaf.id}`)!.get('completed')![0]!));
      const own = times.get(`${edgeMiddles.name}|${middle.id}`)!;
      expect(own.get('released')).toHaveLength(1);
      expect(own.get('released')![0]!).toBeGreaterThanOrEqual(lastLeaf);
    }
    const rootEvents = times.get(`${nodeRoot.name}|JOB:deep`)!;
    expect(rootEvents.get('released')).toHaveLength(1);
    expect(rootEvents.get('active')).toHaveLength(1);
    const lastMiddle = Math.max(...written.children.map((c) => times.get(`${c.queue}|${c.id}`)!.get('completed')![0]!));
    expect(rootEvents.get('released')![0]!).toBeGreaterThanOrEqual(lastMiddle);

    expect(await checkFlowLinks(raw, all.map((q) => q.name))).toEqual([]);
    for (const q of all) expect(await checkInvariants(raw, q.name)).toEqual([]);
  }, 90_000);

  it('a fail-parent child dying on the Worker sends its Node parent to dead, which never runs', async () => {
    const nodeParents = queue('flow-np');
    const nodeKids = queue('flow-nk');
    const edgeKids = queue('flow-ek');
    const all = [nodeParents, nodeKids, edgeKids];
    const scheduled = await startWorker([edgeKids]);
    await scheduled();
    consume(nodeParents);
    consume(nodeKids);

    const written = await new Flows(transport).add({
      queue: nodeParents.name,
      id: 'doomed',
      payload: { i: 0 },
      children: [
        { queue: nodeKids.name, payload: { i: 1 } },
        { queue: edgeKids.name, payload: { i: 2, fail: true } },
        { queue: edgeKids.name, payload: { i: 3 } },
        { queue: nodeKids.name, payload: { i: 4 } },
      ],
    });
    const dying = written.children[1]!;
    const finished = async (): Promise<boolean> => {
      const states = await Promise.all(written.children.map((c) => new Queue(transport, c.queue).getJob(c.id).then((j) => j?.state)));
      return states.every((s) => s === 'completed' || s === 'dead') && (await nodeParents.getJob('doomed'))?.state === 'dead';
    };
    await runUntil(scheduled, finished);
    // a beat or two more of the parent's consumer: it must not run
    await sleep(1_200);

    expect(await edgeKids.getJob(dying.id)).toMatchObject({ state: 'dead', error: expect.stringContaining('fails on purpose') });
    expect(runsOf(edgeKids, dying.id).map((r) => r.runtime)).toEqual(['edge']);
    expect(await nodeParents.getJob('doomed')).toMatchObject({
      state: 'dead',
      error: expect.stringMatching(new RegExp(`^child ${dying.id.replace('.', '\\.')} of queue ${edgeKids.name} failed: .*fails on purpose`)),
    });
    expect(runsOf(nodeParents, 'JOB:doomed')).toEqual([]);
    const times = await eventTimes(all);
    const parentEvents = times.get(`${nodeParents.name}|JOB:doomed`)!;
    expect(parentEvents.get('dead')).toHaveLength(1);
    expect(parentEvents.get('released')).toBeUndefined();
    expect(parentEvents.get('active')).toBeUndefined();
    expect(parentEvents.get('dead')![0]!).toBeGreaterThanOrEqual(times.get(`${edgeKids.name}|${dying.id}`)!.get('dead')![0]!);

    expect(await checkFlowLinks(raw, all.map((q) => q.name))).toEqual([]);
    for (const q of all) expect(await checkInvariants(raw, q.name)).toEqual([]);
  }, 90_000);
});
