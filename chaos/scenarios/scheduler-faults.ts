import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { BeatSummary } from '../../src/serverless/bounded-beat.js';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { type InjectedFault, startFaultProxy } from '../../src/node/bridge/fault-proxy.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkSpec, firedBy, type SchedulerSpec, slotAfter, type StoredSpec } from '../../src/schedulers/schedulers.js';
import { checkInvariants } from '../../test/invariants.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-sched';
const RUNS = 'chaos:sched:runs';
/** A scheduled event's drain (ms), and the job timeout: it waits for due times until their difference. */
const EDGE_DEADLINE_MS = 2_000;
const EDGE_JOB_TIMEOUT_MS = 500;
/**
 * How long a runtime takes to fire a slot once it can, at most, on loopback on a busy machine: a
 * timer or a drain waking, a beat and a fire-schedulers call (a few ms unloaded).
 */
const FIRE_MS = 50;

/** The schedulers of the run: their specs, and the `n` of the jobs each fires (its result is n doubled). */
const SCHEDULERS: ReadonlyArray<{ id: string; spec: SchedulerSpec; n: number }> = [
  { id: 'every', spec: { every: 250 }, n: 1 },
  { id: 'cron', spec: { cron: '* * * * * *' }, n: 2 },
];

/** When a Node consumer could fire: from its first reply from Redis to its SIGKILL (ms, Infinity while it lives). */
interface Alive {
  readonly from: number;
  to: number;
}

/** One job row as read after the run. */
interface Row extends FinishedRow {
  readonly n: number;
  readonly attempts: number;
  /** When it was made (server ms): for a fired job, when its slot was fired. */
  readonly createdAt: number;
}

/** p-th percentile of sorted values (0 for none). */
const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/**
 * Schedulers under faults: an `every: 250` and a cron-with-seconds scheduler fired by whichever
 * runtime gets there first, the Worker's own code (createWorker, its scheduled events back to
 * back, each a 2 s drain) over @upstash/redis through a fault proxy in front of `emq bridge` (500s,
 * replies dropped after Redis ran them, stalls, resets), and a Node consumer in a child process
 * (straight to Redis) SIGKILLed by its PID and replaced every 1.5 s, now and then left down for
 * 2.5 s so the edge alone must fire. Then every runtime stops, the schedulers are read and
 * removed, the faults stop, and the fired jobs drain.
 *
 * Promised (must be 0): a slot fired twice (the scheduler's fired count above the jobs it fired,
 * or a job with two `added` events), a fired job whose id is off its scheduler's slot grid, a
 * fired job lost (no row, or not completed after the drain), two holders of one attempt, a run no
 * claim explains, invariant violations, results and events as in edge-faults. Reported: the
 * slots missed, and why. A slot is missed when the one before it fires late, at or after it: the
 * catch-up moves on to the first slot after the firing. So the slot before was overdue from its
 * time to the missed one's, and a miss is explained (`node_down_...`) when no runtime could fire
 * in that time: no Node consumer was up, and the edge was between scheduled events' drains or
 * held up by faults (see `couldFire` below); else it counts as `slots_missed_unexplained`.
 */
export const schedulerFaults: Scenario = {
  name: 'scheduler-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const faultMs = ctx.quick ? 12_000 : 120_000;
    const rate = ctx.quick ? 0.05 : 0.1;
    const stallMs = ctx.quick ? 500 : 1_000;
    const started = performance.now();
    const token = randomBytes(8).toString('hex');
    const raw = new Redis(ctx.redisUrl);
    const direct = IoredisTransport.connect(ctx.redisUrl);
    const queue = new Queue<{ n: number; ms: number }>(direct, QUEUE, { keepCompletedMs: -1 });
    const injected: InjectedFault[] = [];
    const bridge = await startBridge({ redisUrl: ctx.redisUrl, token });
    const proxy = await startFaultProxy({
      target: bridge.url,
      faults: { error500: rate, dropReply: rate, stall: rate, reset: rate },
      stallMs,
      seed: ctx.seed,
      onFault: (fault) => void injected.push(fault),
    });

    // the edge: the Worker's own code on Node, its runs recorded by (job, lease token)
    const edgeRuns = new Map<string, number>();
    let edgeFired = 0;
    let eventsFailed = 0;
    const worker = createWorker({
      handlers: {
        [QUEUE]: async (job: { id: string; token: number; payload: { n: number; ms: number } }) => {
          const key = `${job.id}|${job.token}`;
          edgeRuns.set(key, (edgeRuns.get(key) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, job.payload.ms));
          return { n: job.payload.n * 2 };
        },
      },
      queueOptions: { keepCompletedMs: -1 },
      log: (entry) => {
        if (entry.msg === 'scheduled beat failed') eventsFailed++;
        if (entry.msg !== 'scheduled beat') return;
        for (const s of entry.summaries as Array<BeatSummary | { acknowledgedLater: unknown }>) if ('fired' in s) edgeFired += s.fired;
      },
    });
    const env: WorkerEnv = {
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: token,
      EMQ_TOKEN: 'chaos',
      EMQ_DRAIN_ON_ENQUEUE_MS: '0',
      EMQ_BEAT_DEADLINE_MS: String(EDGE_DEADLINE_MS),
      EMQ_JOB_TIMEOUT_MS: String(EDGE_JOB_TIMEOUT_MS),
      EMQ_LEASE_MARGIN_MS: '1000',
      EMQ_REAP_EVERY_MS: '500',
    };
    const waitUntil = { waitUntil: () => {} };
    let edgeEvents = 0;
    const eventLog: Array<{ start: number; end: number }> = [];
    let edgeOn = false;
    /** Scheduled events back to back while edgeOn: a cron of the drain's period. */
    const edgeLoop = async (): Promise<void> => {
      while (edgeOn) {
        edgeEvents++;
        const t0 = Date.now();
        await worker.scheduled({ cron: '* * * * *', scheduledTime: t0 }, env, waitUntil).catch(() => eventsFailed++);
        eventLog.push({ start: t0, end: Date.now() });
        // an event that found nothing to wait for ends at once: the next comes 100 ms after its start
        const left = t0 + 100 - Date.now();
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      }
    };

    // Node: one consumer in a child process at a time (chaos/children/consumer.ts)
    const alive: Alive[] = [];
    const children = new Map<ChildProcess, Alive | undefined>();
    let kills = 0;
    let outages = 0;
    const spawnConsumer = async (): Promise<void> => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'children', 'consumer.ts'), ctx.redisUrl, QUEUE, RUNS], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.set(child, undefined);
      child.on('exit', () => children.delete(child));
      // it can fire from its first reply on, which it says on stderr ("connected to ...")
      child.stderr!.on('data', (chunk: Buffer) => {
        if (!chunk.toString().includes('connected to') || children.get(child) || !children.has(child)) return;
        const span = { from: Date.now(), to: Infinity };
        alive.push(span);
        children.set(child, span);
      });
      await new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()));
    };
    const killConsumers = (): void => {
      for (const [child, span] of children) {
        if (child.pid === undefined) continue;
        process.kill(child.pid, 'SIGKILL');
        if (span) span.to = Date.now();
        children.delete(child);
      }
    };

    const stats = async () => (await queue.stats()).counts;
    try {
      const old = await raw.keys(`emq:{${QUEUE}}:*`);
      if (old.length > 0) await raw.del(...old);
      await raw.del(RUNS);
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });

      // both runtimes beating before the first slot
      edgeOn = true;
      const edge = edgeLoop();
      await spawnConsumer();
      const anchors = new Map<string, number>();
      for (const s of SCHEDULERS) {
        const { nextRunAt } = await queue.upsertScheduler(s.id, s.spec, { payload: { n: s.n, ms: 20 }, maxAttempts: 20, backoff: 50 });
        anchors.set(s.id, nextRunAt!);
      }

      // a Node consumer killed and replaced every 1.5 s; every fourth time it stays down 2.5 s
      const faultsEnd = performance.now() + faultMs;
      while (performance.now() < faultsEnd) {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        killConsumers();
        if (++kills % 4 === 0) {
          outages++;
          await new Promise((resolve) => setTimeout(resolve, 2_500));
        }
        if (performance.now() < faultsEnd) await spawnConsumer();
      }

      // every runtime stops: what the schedulers fired is final
      killConsumers();
      edgeOn = false;
      await edge;
      const records = new Map((await queue.listSchedulers()).map((r) => [r.id, r]));
      const metaFired = Number(await raw.hget(`emq:{${QUEUE}}:meta`, 'fired'));
      const violationsAtStop = await checkInvariants(raw, QUEUE);
      const firedByEdge = edgeFired;
      for (const s of SCHEDULERS) await queue.removeScheduler(s.id);

      // the fired jobs drain without faults, on both runtimes
      proxy.setFaults({});
      await spawnConsumer();
      edgeOn = true;
      const draining = edgeLoop();
      const drainUntil = performance.now() + 30_000;
      let counts = await stats();
      while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < drainUntil) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        counts = await stats();
      }
      edgeOn = false;
      await draining;
      killConsumers();

      // every row, and what the runs say
      const prefix = `emq:{${QUEUE}}:job:`;
      const rows: Row[] = [];
      for (const key of await raw.keys(`${prefix}*`)) {
        const [d, s, a, r, c] = await raw.hmget(key, 'd', 's', 'a', 'r', 'c');
        rows.push({ id: key.slice(prefix.length), n: (JSON.parse(d ?? '{}') as { n: number }).n, state: s ?? '', attempts: Number(a ?? 0), result: r ?? undefined, createdAt: Number(c) });
      }
      const runs = new Map<string, number>(edgeRuns);
      for (const [key, count] of Object.entries(await raw.hgetall(RUNS))) runs.set(key, (runs.get(key) ?? 0) + Number(count));
      const runsPerJob = new Map<string, number>();
      for (const [key, count] of runs) runsPerJob.set(key.split('|')[0]!, (runsPerJob.get(key.split('|')[0]!) ?? 0) + count);
      const twoHolders = [...runs.values()].filter((count) => count > 1).length;
      // a run without a claim of its own: more runs than the row counts attempts
      const runsWithoutClaim = rows.filter((row) => (runsPerJob.get(row.id) ?? 0) > row.attempts).length;
      const added = new Map<string, number>();
      for (const e of await readAllEvents(queue as Queue<unknown>)) if (e.event === 'added') added.set(e.jobId, (added.get(e.jobId) ?? 0) + 1);

      // Could a runtime fire between `from` and `to`, for FIRE_MS of that time? Node: a consumer
      // was alive and had had its first reply. The edge: a scheduled event's drain was awake (from
      // the event's start to its last start, the deadline less the job timeout, after which it
      // waits for no due time; less 50 ms, its estimate of a due time being a round trip off) and
      // no fault held it up: a fault holds the edge from FIRE_MS before its request reached the
      // proxy (it may be a firing's second call) for a stall's length, or for a 500, a reset or a
      // dropped reply the client's retry and the round's own (25, 100 and 400 ms apart: 525 ms).
      const faultSpans = injected.map((f) => ({ from: f.at - FIRE_MS, to: f.at + (f.kind === 'stall' ? stallMs : 525) }));
      const awake = eventLog.map((e) => ({ from: e.start, to: Math.min(e.end, e.start + EDGE_DEADLINE_MS - EDGE_JOB_TIMEOUT_MS - 50) }));
      const overlap = (a: { from: number; to: number }, from: number, to: number): number => Math.min(to, a.to) - Math.max(from, a.from);
      const couldFire = (from: number, to: number): 'node_up' | 'edge_awake_no_fault' | 'node_down_edge_faulted' | 'node_down_edge_between_events' => {
        if (alive.some((span) => overlap(span, from, to) >= FIRE_MS)) return 'node_up';
        const awakeIn = awake.filter((span) => overlap(span, from, to) >= FIRE_MS);
        if (awakeIn.length === 0) return 'node_down_edge_between_events';
        // what of the edge's awake time in [from, to] no fault covers
        let free = awakeIn.map((span) => ({ from: Math.max(from, span.from), to: Math.min(to, span.to) }));
        for (const fault of faultSpans) {
          free = free.flatMap((i) =>
            fault.to < i.from || fault.from > i.to ? [i] : [{ from: i.from, to: fault.from }, { from: fault.to, to: i.to }].filter((j) => j.from < j.to),
          );
        }
        return free.some((i) => i.to - i.from >= FIRE_MS) ? 'edge_awake_no_fault' : 'node_down_edge_faulted';
      };
      let firedTwice = 0;
      let offGrid = 0;
      let lost = 0;
      let missed = 0;
      let missedExplained = 0;
      const missedWhy: Record<string, number> = {};
      const lateness: number[] = [];
      let catchUps = 0;
      const perScheduler: Record<string, number> = {};
      for (const s of SCHEDULERS) {
        const spec: StoredSpec = checkSpec(s.spec);
        const anchor = spec.every !== undefined ? anchors.get(s.id)! : -1;
        const fired = rows.filter((row) => firedBy(row.id)?.id === s.id);
        const slots = fired.map((row) => firedBy(row.id)!.slot).sort((a, b) => a - b);
        const createdAt = new Map(fired.map((row) => [firedBy(row.id)!.slot, row.createdAt]));
        const completed = new Set(fired.filter((row) => row.state === 'completed').map((row) => row.id));
        // every job it fired: the rows, and the ids its `added` events name (a row could be gone)
        const firedIds = new Set([...fired.map((row) => row.id), ...[...added.keys()].filter((id) => firedBy(id)?.id === s.id)]);
        perScheduler[s.id] = firedIds.size;
        // a slot fired twice: a second `added` for its job, or the count above the jobs fired
        for (const id of firedIds) firedTwice += Math.max(0, (added.get(id) ?? 0) - 1);
        firedTwice += Math.max(0, (records.get(s.id)?.fired ?? 0) - firedIds.size);
        for (const id of firedIds) {
          if (!completed.has(id)) lost++;
          const slot = firedBy(id)!.slot;
          if (slotAfter(spec, anchor, slot - 1) !== slot) offGrid++;
          if (createdAt.has(slot)) lateness.push(createdAt.get(slot)! - slot);
        }
        // the grid from the first slot to the last one fired: a slot on it not fired was missed
        const first = anchors.get(s.id)!;
        let previous = first;
        for (let slot: number | null = first; slot !== null && slot <= (slots.at(-1) ?? -1); slot = slotAfter(spec, anchor, slot)) {
          if (createdAt.has(slot)) {
            previous = slot;
            if (createdAt.get(slot)! >= slotAfter(spec, anchor, slot)!) catchUps++;
            continue;
          }
          missed++;
          // the slot before it was overdue from its time to this one's
          const why = couldFire(previous, slot);
          missedWhy[why] = (missedWhy[why] ?? 0) + 1;
          if (why.startsWith('node_down')) missedExplained++;
        }
      }
      lateness.sort((a, b) => a - b);
      // a job no scheduler fired is off every grid
      offGrid += rows.filter((row) => !firedBy(row.id)).length;
      const totalFired = [...records.values()].reduce((sum, r) => sum + r.fired, 0);
      const nOf = new Map(rows.map((row) => [row.id, row.n]));
      const checked = await checkResultsAndEvents(
        queue as Queue<unknown>,
        rows,
        (id) => ({ n: nOf.get(id)! * 2 }),
        await eventsStreamTrimmed(raw, QUEUE),
      );
      const violations = [...violationsAtStop, ...(await checkInvariants(raw, QUEUE))];
      return {
        scenario: 'scheduler-faults',
        jobs: rows.length,
        faults: `every: 250 and cron each second for ${faultMs / 1000} s; the edge through ${Math.round(rate * 100)}% each of 500, dropped reply, ${stallMs} ms stall, reset; the Node consumer SIGKILLed every 1.5 s (${kills} kills; after ${outages} of them it stayed down 2.5 s)`,
        injected: { ...proxy.counts() },
        slots_fired: totalFired,
        fired_by: { edge: firedByEdge, node: totalFired - firedByEdge },
        fired_per_scheduler: perScheduler,
        meta_fired: metaFired,
        edge_events: edgeEvents,
        edge_events_failed: eventsFailed,
        slots_fired_twice: firedTwice + Math.max(0, metaFired - totalFired),
        job_ids_off_grid: offGrid,
        fired_jobs_lost: lost,
        slots_missed: missed,
        slots_missed_explained: missedExplained,
        slots_missed_unexplained: missed - missedExplained,
        slots_missed_why: missedWhy,
        catch_up_firings: catchUps,
        firing_lateness_ms: { p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: lateness.at(-1) ?? 0 },
        completed: counts.completed,
        dead: counts.dead,
        not_finished: counts.pending + counts.scheduled + counts.active,
        ran_more_than_once: [...runsPerJob.values()].filter((c) => c > 1).length,
        reruns_unexplained: twoHolders + runsWithoutClaim,
        invariant_violations: violations.length,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      edgeOn = false;
      killConsumers();
      raw.disconnect();
      await direct.close();
      await proxy.close();
      await bridge.close();
    }
  },
};
