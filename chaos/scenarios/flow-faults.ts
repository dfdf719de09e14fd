import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import type { QueueEvent } from '../../src/events/events.js';
import type { ChildOutcome, OnFailure } from '../../src/flows/flow.js';
import { type FlowJob, type FlowNode, Flows } from '../../src/flows/flows.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { startFaultProxy, seededRandom } from '../../src/node/bridge/fault-proxy.js';
import { JobStateError } from '../../src/errors.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkFlowLinks } from '../../test/flow-links.js';
import { checkInvariants } from '../../test/invariants.js';
import { ChildConsumers } from '../lib/child-consumer.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

/** The roots' queue, and the children's: middles go to the second, leaves to either. */
const ROOTS = 'chaos-flow-p';
const KIDS = ['chaos-flow-a', 'chaos-flow-b'] as const;
const QUEUES = [ROOTS, ...KIDS];
/** Where the Node consumer processes record their runs, and what each parent run saw of its children. */
const RUNS = 'chaos:flow:runs';
const SEEN = 'chaos:flow:seen';
/** The failing children the scenario reprocessed (`<queue>|<id>`): from then on their runs succeed. */
const RETRIED = 'chaos:flow:retried';
const POLICIES: readonly OnFailure[] = ['fail-parent', 'ignore', 'remove', 'wait'];

interface Payload {
  readonly n: number;
  /** Throws on every run (until reprocessed, under `wait`): with 2 attempts, the job dies and its parent reads it by its policy. */
  readonly fail?: boolean;
  /** How long a run takes, ms. */
  readonly ms: number;
}

/** A node of a planned flow: its queue and id (as Flows derives it), whether it fails, its policy, its children. */
interface Planned {
  readonly queue: string;
  readonly id: string;
  readonly fail: boolean;
  /** What its parent makes of its death (the root's is unused). */
  readonly policy: OnFailure;
  readonly children: Planned[];
}

/** One handler run, on either runtime; a parent's run with what it saw of its children. */
interface Run {
  readonly runtime: 'edge' | 'node';
  readonly queue: string;
  readonly id: string;
  readonly token: number;
  readonly children?: readonly ChildOutcome[];
}

/** A job row as read after the run. */
interface Row {
  readonly state: string;
  readonly attempts: number;
  readonly error: string | undefined;
  readonly result: string | undefined;
}

/**
 * Flow n: a root in ROOTS with 2-5 children, a quarter of them middles (in KIDS[1], with 2-3
 * leaves of their own), the rest leaves in either child queue; each non-root node with a random
 * policy (`wait` a leaf's only), one leaf in eight failing for good (2 attempts). Ids as Flows gives them (`JOB:f<n>`,
 * `.<index>` per level), so the plan knows every id before the write.
 */
function plan(n: number, rand: () => number): Planned {
  const leaf = (id: string, queue: string): Planned => ({ queue, id, fail: rand() < 1 / 8, policy: POLICIES[Math.floor(rand() * POLICIES.length)]!, children: [] });
  const rootId = `JOB:f${n}`;
  const children: Planned[] = [];
  const k = 2 + Math.floor(rand() * 4);
  for (let i = 0; i < k; i++) {
    const id = `${rootId}.${i}`;
    if (rand() < 0.25) {
      const m = 2 + Math.floor(rand() * 2);
      const leaves = Array.from({ length: m }, (_, j) => leaf(`${id}.${j}`, KIDS[Math.floor(rand() * 2)]!));
      // a middle never waits (`wait`): one its own child failed would hold its root for good
      children.push({ queue: KIDS[1], id, fail: false, policy: POLICIES[Math.floor(rand() * (POLICIES.length - 1))]!, children: leaves });
    } else {
      children.push(leaf(id, KIDS[Math.floor(rand() * 2)]!));
    }
  }
  return { queue: ROOTS, id: rootId, fail: false, policy: 'fail-parent', children };
}

/** The tree Flows.add takes for a plan: failing jobs get 2 attempts, the others 10 (so a fault rarely uses them up). */
function treeOf(node: Planned, n: number, rand: () => number, root = true): FlowJob<Payload> {
  const payload: Payload = { n, ms: 5 + Math.floor(rand() * 20), ...(node.fail ? { fail: true } : {}) };
  return {
    queue: node.queue,
    payload,
    ...(root ? { id: node.id.slice('JOB:'.length) } : { onFailure: node.policy }),
    maxAttempts: node.fail ? 2 : 10,
    backoff: 20,
    ...(node.children.length > 0 ? { children: node.children.map((c) => treeOf(c, n, rand, false)) } : {}),
  };
}

const flat = (node: Planned): Planned[] => [node, ...node.children.flatMap(flat)];
const statesOf = (node: FlowNode): string[] => [node.state, ...node.children.flatMap(statesOf)];

/**
 * Flows under faults: trees of jobs over three queues (roots in one, their children in two
 * others, some of them parents of their own leaves), written with `Flows` over @upstash/redis
 * through the fault proxy in front of `emq bridge` (500 before a request runs, the reply dropped
 * after it ran, the connection reset), each write sent again on a failure with the same tree (and
 * one flow in five sent again after its answer): a tree sent again is duplicates, never a second
 * tree. The jobs run on the Worker's own code (`createWorker` on Node, its scheduled events back
 * to back, through the same faults) and on Node consumers in three child processes
 * (chaos/children/flow-consumer.ts, one Consumer per queue), one of them SIGKILLed by its PID
 * and replaced every few hundred ms: a kill between a child's complete and the relay of its news
 * leaves the news in the outbox, which a beat relays once it is 5 s old. One leaf in eight fails
 * for good, its parent reading it by its policy (fail-parent, ignore, remove, wait: the scenario
 * reprocesses a dead `wait` child through the faults, and its runs then succeed). Then the kills and
 * the faults stop and the queues drain.
 *
 * Promised (must be 0): `parents_run_early` (a parent run that saw a child unfinished, or missed
 * one it waits for, or whose `active` event is before a child's `completed` or `dead`),
 * `parents_run_twice` (a parent released more than once, or run more often than its claims, or
 * twice under one lease token), `parents_never_released` (a parent no child failed that is not
 * completed at the end, with no release, or a dead one never released), `parents_never_failed` (a
 * parent a `fail-parent` child's death should have failed that is not dead by it at the end, or
 * that ran after it), `children_lost` (a child of a written flow with no row, or not finished, at
 * the end), `flow_link_violations` (test/flow-links.ts over the three queues), and every
 * scenario's: jobs lost, a second tree (a row no plan names, a job created twice, a flow sent
 * again answered other than duplicates: `duplicate_jobs`), runs no lapsed lease explains,
 * invariant violations, unfinished jobs, results (a row's, and each child's as its parent saw it)
 * and events.
 */
export const flowFaults: Scenario = {
  name: 'flow-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const flows = ctx.quick ? 40 : 300;
    const rate = ctx.quick ? 0.1 : 0.15;
    const killEveryMs = ctx.quick ? 600 : 400;
    const started = performance.now();
    const token = randomBytes(8).toString('hex');
    const raw = new Redis(ctx.redisUrl);
    const direct = IoredisTransport.connect(ctx.redisUrl);
    const queues = new Map(QUEUES.map((name) => [name, new Queue<Payload>(direct, name, { keepCompletedMs: -1 })]));
    const bridge = await startBridge({ redisUrl: ctx.redisUrl, token });
    const proxy = await startFaultProxy({ target: bridge.url, faults: { error500: rate, dropReply: rate, reset: rate / 3 }, seed: ctx.seed });
    const writer = new Flows(UpstashTransport.connect({ url: proxy.url, token }));

    // the edge: the Worker's code, every queue, through the faults
    const edgeRuns: Run[] = [];
    const handle = (queue: string) => async (job: { id: string; token: number; payload: Payload; children?: ChildOutcome[] }) => {
      edgeRuns.push({ runtime: 'edge', queue, id: job.id, token: job.token, ...(job.children ? { children: job.children } : {}) });
      await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
      if (job.payload.fail && !(await raw.sismember(RETRIED, `${queue}|${job.id}`))) throw new Error('chaos: fails on purpose');
      return { id: job.id };
    };
    const env: WorkerEnv = {
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: token,
      EMQ_TOKEN: 'chaos',
      EMQ_DRAIN_ON_ENQUEUE_MS: '0',
      EMQ_BEAT_DEADLINE_MS: '2000',
      EMQ_JOB_TIMEOUT_MS: '500',
      EMQ_LEASE_MARGIN_MS: '1000',
      EMQ_REAP_EVERY_MS: '500',
    };
    const worker = createWorker({ handlers: Object.fromEntries(QUEUES.map((q) => [q, handle(q)])), queueOptions: { keepCompletedMs: -1 }, log: () => {} });
    let edgeEvents = 0;
    let edgeEventsFailed = 0;
    let edgeOn = false;
    let edge: Promise<void> = Promise.resolve();

    // Node: consumer processes, one killed and replaced every killEveryMs
    const consumers = new ChildConsumers('flow-consumer.ts', [ctx.redisUrl, RUNS, SEEN, RETRIED, ...QUEUES]);
    // the `wait` children's reprocess, sent by a client through the faults
    const retrier = new Map<string, Queue<Payload>>(KIDS.map((name) => [name, new Queue<Payload>(UpstashTransport.connect({ url: proxy.url, token }), name)]));
    let retrying = false;
    let retries: Promise<void> = Promise.resolve();
    let waitRetried = 0;
    let waitReprocessSent = 0;
    let kills = 0;
    let killing = false;
    let killer: Promise<void> = Promise.resolve();

    try {
      for (const name of QUEUES) {
        const old = await raw.keys(`emq:{${name}}:*`);
        if (old.length > 0) await raw.del(...old);
        await queues.get(name)!.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      }
      await raw.del(RUNS, SEEN, RETRIED);
      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      edgeOn = true;
      edge = (async () => {
        while (edgeOn) {
          edgeEvents++;
          await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, { waitUntil: () => {} }).catch(() => void edgeEventsFailed++);
        }
      })();
      killing = true;
      killer = (async () => {
        while (killing) {
          await new Promise((resolve) => setTimeout(resolve, killEveryMs));
          const victim = [...consumers.live][Math.floor(Math.random() * consumers.live.size)];
          if (!killing || victim?.pid === undefined) continue;
          process.kill(victim.pid, 'SIGKILL');
          kills++;
          void consumers.spawn();
        }
      })();

      // the flows, planned from the seed; clients write them one at a time, 0-50 ms apart, a
      // failed write sent again (the same tree), and one in five sent again after its answer
      const rand = seededRandom(ctx.seed);
      const plans = Array.from({ length: flows }, (_, n) => plan(n, rand));
      const trees = plans.map((p, n) => treeOf(p, n, rand));
      // a `wait` child dead for good is reprocessed (once marked, its runs succeed); a reprocess
      // whose reply was lost is sent again: the second finds the job no longer dead, harmlessly
      const waiting = plans.flatMap(flat).filter((node) => node.fail && node.policy === 'wait');
      const marked = new Set<string>();
      retrying = true;
      retries = (async () => {
        while (retrying) {
          await new Promise((resolve) => setTimeout(resolve, 300));
          for (const node of waiting) {
            const key = `${node.queue}|${node.id}`;
            if (marked.has(key) || (await queues.get(node.queue)!.getJob(node.id))?.state !== 'dead') continue;
            await raw.sadd(RETRIED, key);
            for (let attempt = 0; attempt < 10; attempt++) {
              waitReprocessSent++;
              try {
                await retrier.get(node.queue)!.reprocess(node.id);
                break;
              } catch (error) {
                if (error instanceof JobStateError) break;
              }
            }
            if ((await queues.get(node.queue)!.getJob(node.id))?.state !== 'dead') {
              marked.add(key);
              waitRetried++;
            }
          }
        }
      })();
      const answered = new Set<number>();
      let gaveUp = 0;
      let writeRetries = 0;
      let duplicatesAfterFault = 0;
      let resent = 0;
      let resentNotDuplicate = 0;
      const write = async (n: number): Promise<FlowNode | undefined> => {
        for (let attempt = 0; attempt < 10; attempt++) {
          if (attempt > 0) writeRetries++;
          try {
            const node = await writer.add(trees[n]!);
            if (attempt > 0 && statesOf(node).includes('duplicate')) duplicatesAfterFault++;
            return node;
          } catch {
            // a failed write: the client sends the same tree again
          }
        }
        return undefined;
      };
      const resends: Array<Promise<void>> = [];
      const clients = ctx.quick ? 4 : 8;
      let next = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < flows) {
            const n = next++;
            if (await write(n)) answered.add(n);
            else gaveUp++;
            if (n % 5 === 4) {
              const delay = 200 + Math.floor(rand() * 1300);
              resends.push(
                (async () => {
                  await new Promise((resolve) => setTimeout(resolve, delay));
                  const again = await write(n);
                  if (!again) return;
                  resent++;
                  if (statesOf(again).some((s) => s !== 'duplicate')) resentNotDuplicate++;
                })(),
              );
            }
            await new Promise((resolve) => setTimeout(resolve, Math.floor(rand() * 50)));
          }
        }),
      );
      await Promise.all(resends);

      // the kills go on a while after the writes, then stop; the faults stop once the roots are
      // settled or time is up, and the queues drain
      const plansWritten = plans.filter((_, n) => answered.has(n));
      const settled = async (): Promise<boolean> => {
        for (const q of queues.values()) {
          const c = (await q.stats()).counts;
          if (c.pending + c.scheduled + c.active + c.waiting > 0) return false;
          if ((await raw.zcard(`emq:{${q.name}}:outbox`)) > 0) return false;
        }
        return true;
      };
      await new Promise((resolve) => setTimeout(resolve, ctx.quick ? 3_000 : 20_000));
      killing = false;
      await killer;
      const drainUntil = performance.now() + (ctx.quick ? 15_000 : 60_000);
      while (!(await settled()) && performance.now() < drainUntil) await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.setFaults({});
      const cleanUntil = performance.now() + 30_000;
      while (!(await settled()) && performance.now() < cleanUntil) await new Promise((resolve) => setTimeout(resolve, 200));
      retrying = false;
      await retries;
      edgeOn = false;
      await edge;
      consumers.killAll();

      // every row, every run, every event
      const rows = new Map<string, Row>();
      for (const name of QUEUES) {
        const prefix = `emq:{${name}}:job:`;
        for (const key of await raw.keys(`${prefix}*`)) {
          const [s, a, e, r] = await raw.hmget(key, 's', 'a', 'e', 'r');
          rows.set(`${name}|${key.slice(prefix.length)}`, { state: s ?? '', attempts: Number(a ?? 0), error: e ?? undefined, result: r ?? undefined });
        }
      }
      const runs: Run[] = [...edgeRuns];
      const nodeRuns = await raw.hgetall(RUNS);
      const seen = await raw.hgetall(SEEN);
      let tokensRunTwice = 0;
      for (const [field, count] of Object.entries(nodeRuns)) {
        const [queue, id, t] = field.split('|') as [string, string, string];
        if (Number(count) > 1) tokensRunTwice += Number(count) - 1;
        const saw = seen[field];
        runs.push({ runtime: 'node', queue, id, token: Number(t), ...(saw ? { children: JSON.parse(saw) as ChildOutcome[] } : {}) });
      }
      const runsOf = new Map<string, Run[]>();
      for (const r of runs) runsOf.set(`${r.queue}|${r.id}`, [...(runsOf.get(`${r.queue}|${r.id}`) ?? []), r]);
      const tokens = new Set<string>();
      for (const r of runs) {
        const key = `${r.queue}|${r.id}|${r.token}`;
        if (tokens.has(key)) tokensRunTwice++;
        tokens.add(key);
      }
      const events = new Map<string, QueueEvent[]>();
      for (const q of queues.values()) events.set(q.name, await readAllEvents(q as Queue<unknown>));
      /** Per job, its events' times by name. */
      const times = new Map<string, Map<string, number[]>>();
      for (const [name, list] of events) {
        for (const e of list) {
          if (!('jobId' in e)) continue;
          const key = `${name}|${e.jobId}`;
          let byName = times.get(key);
          if (!byName) times.set(key, (byName = new Map()));
          // `released` names two things: a flow parent's release (with its children's count) and a job given back unstarted
          const event = e.event === 'released' && e.children === undefined ? 'given-back' : e.event;
          byName.set(event, [...(byName.get(event) ?? []), e.time]);
        }
      }
      const timesOf = (node: Planned, event: string): number[] => times.get(`${node.queue}|${node.id}`)?.get(event) ?? [];

      // the flows' promises, node by node
      const planned = new Set<string>();
      let jobsLost = 0;
      let childrenLost = 0;
      let early = 0;
      let twice = 0;
      let neverReleased = 0;
      let neverFailed = 0;
      let seenWrong = 0;
      let deadByFaults = 0;
      let deadAfterRuns = 0;
      const outcomes = { parents: 0, completed: 0, failedByChild: 0, failedLeaves: { 'fail-parent': 0, ignore: 0, remove: 0, wait: 0 } as Record<OnFailure, number> };
      /** `wait` children planned to fail that were not reprocessed and completed by the end. */
      let waitLeftUnfinished = 0;
      const lags: number[] = [];
      /** Why each broken count was counted, printed with FLOW_VERBOSE=1. */
      const why: string[] = [];
      for (const root of plansWritten) {
        for (const node of flat(root)) {
          const key = `${node.queue}|${node.id}`;
          planned.add(key);
          const row = rows.get(key);
          if (!row) jobsLost++;
          if (node !== root && (!row || (row.state !== 'completed' && row.state !== 'dead'))) {
            childrenLost++;
            why.push(`child lost ${key}: ${row ? row.state : 'no row'}`);
          }
          if (row?.state === 'dead' && !node.fail && node.children.length === 0) deadByFaults++;
          if (row?.state === 'dead' && node.fail) outcomes.failedLeaves[node.policy]++;
          if (node.fail && node.policy === 'wait' && row?.state !== 'completed') {
            waitLeftUnfinished++;
            why.push(`wait child not retried to completion ${key}: ${row?.state ?? 'no row'}`);
          }
          if (node.children.length === 0) continue;

          // a parent: what its children's ends allow, and what happened
          outcomes.parents++;
          const stateOf = (c: Planned): string => rows.get(`${c.queue}|${c.id}`)?.state ?? '';
          const failedBy = node.children.filter((c) => stateOf(c) === 'dead' && c.policy === 'fail-parent');
          const finishedAt = node.children.map((c) => Math.max(-1, ...timesOf(c, 'completed'), ...timesOf(c, 'dead')));
          const lastChild = Math.max(...finishedAt);
          const active = timesOf(node, 'active');
          const released = timesOf(node, 'released');
          const parentRuns = runsOf.get(key) ?? [];
          const expected = node.children
            .filter((c) => !(stateOf(c) === 'dead' && c.policy === 'remove'))
            .map((c) => ({ id: c.id, state: stateOf(c) === 'completed' ? 'completed' : 'failed' }))
            .sort((a, b) => (a.id < b.id ? -1 : 1));
          const ranEarly =
            active.some((t) => t < lastChild) ||
            parentRuns.some((r) => {
              const saw = [...(r.children ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
              if (saw.some((c) => c.state === 'unfinished')) return true;
              if (saw.length !== expected.length || saw.some((c, i) => c.id !== expected[i]!.id)) return true;
              // the same children, finished: their outcomes as the rows have them
              if (saw.some((c, i) => c.state !== expected[i]!.state || (c.state === 'completed' && JSON.stringify(c.result) !== JSON.stringify({ id: c.id })))) seenWrong++;
              return false;
            });
          if (ranEarly) {
            early++;
            why.push(`early ${key}: active at ${active.join(',')}, children finished at ${finishedAt.join(',')}, saw ${parentRuns.map((r) => JSON.stringify(r.children?.map((c) => c.state))).join(' ')}`);
          }
          if (released.length > 1 || parentRuns.length > (row?.attempts ?? 0)) {
            twice++;
            why.push(`twice ${key}: released ${released.length}x at ${released.join(',')}, ${parentRuns.length} runs (${parentRuns.map((r) => `${r.runtime}#${r.token}`).join(',')}), attempts ${row?.attempts}, children at ${finishedAt.join(',')}`);
          }
          if (failedBy.length > 0) {
            outcomes.failedByChild++;
            if (row?.state !== 'dead' || !row.error?.startsWith('child ') || (parentRuns.length > 0 && !ranEarly)) {
              neverFailed++;
              why.push(`never failed ${key}: ${row?.state ?? 'no row'} (${row?.error ?? ''}), ${parentRuns.length} runs, failed by ${failedBy.map((c) => c.id).join(',')}`);
            }
          } else {
            if (released.length === 0 || (row?.state !== 'completed' && row?.state !== 'dead')) {
              neverReleased++;
              why.push(`never released ${key}: ${row?.state ?? 'no row'}, released ${released.length}x, children ${node.children.map((c) => `${c.id}:${stateOf(c)}/${c.policy}`).join(',')}`);
            }
            else if (row.state === 'dead') deadAfterRuns++;
            else outcomes.completed++;
            if (released[0] !== undefined && lastChild >= 0) lags.push(released[0] - lastChild);
          }
        }
      }
      const extraRows = [...rows.keys()].filter((key) => !planned.has(key)).length;
      let createdTwice = 0;
      for (const byName of times.values()) {
        const created = (byName.get('added')?.length ?? 0) + (byName.get('waiting')?.length ?? 0) + (byName.get('scheduled')?.length ?? 0);
        if (created > 1) createdTwice++;
      }
      const beyondAttempts = [...rows].filter(([key, row]) => (runsOf.get(key)?.length ?? 0) > row.attempts).length;
      const notFinished = [...rows.values()].filter((row) => row.state !== 'completed' && row.state !== 'dead').length;

      let violations = 0;
      const checked = { results_wrong: seenWrong, completed_events_not_once: 0, events_out_of_order: 0, events: 0, events_stream_trimmed: 0 };
      for (const q of queues.values()) {
        violations += (await checkInvariants(raw, q.name)).length;
        const mine = [...rows].filter(([key]) => key.startsWith(`${q.name}|`)).map(([key, row]) => ({ id: key.slice(q.name.length + 1), state: row.state, result: row.result }));
        const c = await checkResultsAndEvents(q as Queue<unknown>, mine, (id) => ({ id }), await eventsStreamTrimmed(raw, q.name));
        for (const k of Object.keys(checked) as Array<keyof typeof checked>) checked[k] += c[k];
      }
      const links = await checkFlowLinks(raw, QUEUES);
      if (process.env.FLOW_VERBOSE) console.log([...why, ...links].slice(0, 40).join('\n'));
      lags.sort((a, b) => a - b);
      const outboxLeft = (await Promise.all(QUEUES.map((q) => raw.zcard(`emq:{${q}}:outbox`)))).reduce((a, b) => a + b, 0);
      return {
        scenario: 'flow-faults',
        flows,
        faults: `flows written and run by the edge through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset; three Node consumer processes, one SIGKILLed every ${killEveryMs} ms (${kills} kills); one leaf in eight fails for good, policies fail-parent, ignore, remove, wait (a dead wait child reprocessed through the faults)`,
        injected: { ...proxy.counts() },
        write_retries: writeRetries,
        writes_gave_up: gaveUp,
        duplicates_after_fault: duplicatesAfterFault,
        resent,
        jobs: rows.size,
        parents: outcomes.parents,
        parents_completed: outcomes.completed,
        parents_failed_by_child: outcomes.failedByChild,
        parents_dead_after_runs: deadAfterRuns,
        leaves_failed: outcomes.failedLeaves,
        wait_children_reprocessed: waitRetried,
        wait_reprocess_requests: waitReprocessSent,
        wait_children_unfinished: waitLeftUnfinished,
        dead_by_faults: deadByFaults,
        release_lag_ms: lags.length > 0 ? { median: lags[lags.length >> 1]!, p99: lags[Math.floor(lags.length * 0.99)]!, max: lags.at(-1)!, over_4s: lags.filter((l) => l >= 4_000).length } : {},
        edge_events: edgeEvents,
        edge_events_failed: edgeEventsFailed,
        runs: { edge: runs.filter((r) => r.runtime === 'edge').length, node: runs.filter((r) => r.runtime === 'node').length },
        outbox_left: outboxLeft,
        parents_run_early: early,
        parents_run_twice: twice,
        parents_never_released: neverReleased,
        parents_never_failed: neverFailed,
        children_lost: childrenLost,
        flow_link_violations: links.length,
        jobs_lost: jobsLost,
        duplicate_jobs: extraRows + createdTwice + resentNotDuplicate,
        not_finished: notFinished,
        reruns_unexplained: tokensRunTwice + beyondAttempts,
        invariant_violations: violations,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      retrying = false;
      await retries;
      killing = false;
      await killer;
      edgeOn = false;
      await edge;
      consumers.killAll();
      raw.disconnect();
      await direct.close();
      await writer.transport.close();
      for (const q of retrier.values()) await q.transport.close();
      await proxy.close();
      await bridge.close();
    }
  },
};
