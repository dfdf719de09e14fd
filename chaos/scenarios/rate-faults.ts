import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import type { QueueEvent } from '../../src/events/events.js';
import { RateLimitedError } from '../../src/handler.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { startFaultProxy } from '../../src/node/bridge/fault-proxy.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import type { RateLimit } from '../../src/queue/rate-limits.js';
import { checkInvariants } from '../../test/invariants.js';
import { busiestWindow, StartsLogCopy, windowsOverLimit } from '../../test/rate-windows.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-rate';
/** The queue's own limit and two groups' (each period far above a poll of the starts logs, every 20 ms). */
const QUEUE_RATE: RateLimit = { limit: 30, periodMs: 400 };
const GROUP_RATES: Readonly<Record<string, RateLimit>> = { r1: { limit: 5, periodMs: 400 }, r2: { limit: 10, periodMs: 600 } };
/** Where job n goes: the two limited groups, an unlimited one, and the ungrouped lane. */
const LANES = ['r1', 'r2', 'free', null] as const;

interface Payload {
  readonly n: number;
  /** The first run throws RateLimitedError(holdMs): given back unspent, its group (or the ungrouped lane) held. */
  readonly holdMs: number;
}

/** One handler run: which runtime, the lease token, and whether it threw RateLimitedError. */
interface Run {
  readonly runtime: 'edge' | 'node';
  readonly token: number;
  readonly hold: boolean;
}

/**
 * Starts of an entry after the stream recorded a hold of it and before the hold's end: an
 * `active` event later in the stream than the entry's `held` (so its claim ran after the hold was
 * written) whose time is before `heldUntil`. An event's time (its entry id) is no earlier than its
 * claim's, so each one counted is a claim inside the hold.
 */
function startsWhileHeld(events: readonly QueueEvent[]): number {
  const heldUntil = new Map<string, number>();
  let count = 0;
  for (const e of events) {
    if (e.event === 'held') heldUntil.set(e.group ?? '*', Math.max(heldUntil.get(e.group ?? '*') ?? 0, e.heldUntil));
    else if (e.event === 'active' && e.time < (heldUntil.get(e.group ?? '*') ?? 0)) count++;
  }
  return count;
}

/**
 * Rate limits and holds under faults: the Worker's own code (createWorker on Node, its scheduled
 * events back to back) over @upstash/redis through the fault proxy in front of `emq bridge`
 * (answering 500 before a request runs, or dropping the reply after it ran), beside a Node
 * consumer straight to Redis (one job at a time, 20 ms each), drain a queue limited to 30 starts per 400 ms, with group r1 at 5
 * per 400 ms and r2 at 10 per 600 ms, an unlimited group and ungrouped jobs, enqueued in waves. One
 * job in eight throws RateLimitedError on its first run (held 50-300 ms). Then the faults stop and
 * the queue drains.
 *
 * The start times are the claims' own: the starts logs (`emq:{q}:starts[:<g>]`), copied every
 * 20 ms as the run goes by a process of its own (StartsLogCopy), the copy checked whole against every run's lease token
 * and against the `active` events. Promised (must be 0): `rate_limit_exceeded` (windows of a
 * limit's period holding more starts than the limit, the queue's or a group's),
 * `starts_while_held` (a claim of a held entry before its hold's end: see startsWhileHeld),
 * `starts_not_logged` (a run whose claim is missing from the copy of the queue's log, or of its
 * group's: the check would be blind to it), and every scenario's: jobs lost, runs no lapsed lease
 * explains (a run beyond the row's attempts that was not a RateLimitedError's, or a lease token
 * run twice), invariant violations, jobs left unfinished, results and events.
 */
export const rateFaults: Scenario = {
  name: 'rate-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 320 : 2_000;
    const rate = ctx.quick ? 0.1 : 0.15;
    const started = performance.now();
    const token = randomBytes(8).toString('hex');
    const raw = new Redis(ctx.redisUrl);
    const direct = IoredisTransport.connect(ctx.redisUrl);
    const queue = new Queue<Payload>(direct, QUEUE, { keepCompletedMs: -1 });
    const bridge = await startBridge({ redisUrl: ctx.redisUrl, token });
    const proxy = await startFaultProxy({ target: bridge.url, faults: { error500: rate, dropReply: rate }, seed: ctx.seed });
    const runs = new Map<string, Run[]>();
    // the Node consumer runs one job at a time, 20 ms each, so most of the work goes through the
    // faults: the edge's drains take whatever headroom it leaves
    const handle = (runtime: Run['runtime']) => async (job: { id: string; token: number; payload: Payload }) => {
      const mine = runs.get(job.id) ?? [];
      runs.set(job.id, mine);
      const hold = job.payload.holdMs > 0 && !mine.some((r) => r.hold);
      mine.push({ runtime, token: job.token, hold });
      if (runtime === 'node') await new Promise((resolve) => setTimeout(resolve, 20));
      if (hold) throw new RateLimitedError(job.payload.holdMs);
      return { n: job.payload.n * 2 };
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
    const worker = createWorker({ handlers: { [QUEUE]: handle('edge') }, queueOptions: { keepCompletedMs: -1 }, log: () => {} });
    let edgeEvents = 0;
    let edgeEventsFailed = 0;
    const scheduled = async (): Promise<void> => {
      edgeEvents++;
      await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, { waitUntil: () => {} }).catch(() => void edgeEventsFailed++);
    };
    const node = new Consumer<Payload>(IoredisTransport.connect(ctx.redisUrl), QUEUE, handle('node'), {
      concurrency: 1,
      prefetch: 0,
      leaseMs: 2_000,
      beatMs: 500,
      log: false,
      ownsTransport: true,
    });
    const logs = new StartsLogCopy(ctx.redisUrl, QUEUE, ['!', ...Object.keys(GROUP_RATES)]);
    let edgeOn = false;
    let edge: Promise<void> = Promise.resolve();
    try {
      const old = await raw.keys(`emq:{${QUEUE}}:*`);
      if (old.length > 0) await raw.del(...old);
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      await queue.setRateLimit(QUEUE_RATE);
      for (const [group, r] of Object.entries(GROUP_RATES)) await queue.setGroupRateLimit(group, r);
      await logs.start();
      node.start();

      // the edge drains back to back while the jobs arrive in five waves, 400 ms apart
      edgeOn = true;
      edge = (async () => {
        while (edgeOn) await scheduled();
      })();
      const ids = new Map<string, number>();
      const wave = Math.ceil(jobs / 5);
      for (let first = 0; first < jobs; first += wave) {
        const added = await queue.addBulk(
          Array.from({ length: Math.min(wave, jobs - first) }, (_, i) => {
            const n = first + i;
            const lane = LANES[n % LANES.length];
            return { payload: { n, holdMs: n % 8 === 5 ? 50 + ((n * 37) % 251) : 0 }, ...(lane ? { group: lane } : {}), maxAttempts: 10, backoff: 50 };
          }),
        );
        added.forEach((a, i) => ids.set(a.id, first + i));
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      const counts = async () => (await queue.stats()).counts;
      const drainUntil = performance.now() + (ctx.quick ? 40_000 : 240_000);
      let c = await counts();
      while (c.pending + c.scheduled + c.active > 0 && performance.now() < drainUntil) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        c = await counts();
      }
      // without faults, to the end
      proxy.setFaults({});
      for (let i = 0; i < 100 && c.pending + c.scheduled + c.active > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        c = await counts();
      }
      edgeOn = false;
      await edge;
      await node.stop();
      await logs.stop();

      // every row, and what the runs say
      const prefix = `emq:{${QUEUE}}:job:`;
      const rows: Array<{ id: string; n: number; state: string; attempts: number; result: string | undefined }> = [];
      for (const key of await raw.keys(`${prefix}*`)) {
        const [d, s, a, r] = await raw.hmget(key, 'd', 's', 'a', 'r');
        rows.push({ id: key.slice(prefix.length), n: (JSON.parse(d ?? '{}') as Payload).n, state: s ?? '', attempts: Number(a ?? 0), result: r ?? undefined });
      }
      const rowIds = new Set(rows.map((row) => row.id));
      const lost = [...ids.keys()].filter((id) => !rowIds.has(id)).length;
      const perN = new Map<number, number>();
      for (const row of rows) perN.set(row.n, (perN.get(row.n) ?? 0) + 1);
      const duplicates = [...perN.values()].reduce((sum, k) => sum + (k - 1), 0);
      const allRuns = [...runs.values()].flat();
      const tokensRunTwice = allRuns.length - new Set(allRuns.map((r) => r.token)).size;
      // a RateLimitedError's run is given back unspent; every other run is a claim the row counted
      const beyondAttempts = rows.filter((row) => (runs.get(row.id) ?? []).filter((r) => !r.hold).length > row.attempts).length;
      const reruns = [...runs.values()].filter((list) => list.filter((r) => !r.hold).length > 1).length;

      // the bound, on the claims' own times; the copy whole: every run's claim in it, as many starts as `active` events
      const events = await readAllEvents(queue as Queue<unknown>);
      const actives = events.filter((e) => e.event === 'active');
      const groupOf = new Map(rows.map((row) => [row.id, LANES[row.n % LANES.length]]));
      let notLogged = 0;
      for (const [id, list] of runs) {
        const group = groupOf.get(id);
        for (const r of list) {
          if (!logs.tokens('!').has(r.token)) notLogged++;
          else if (group && group in GROUP_RATES && !logs.tokens(group).has(r.token)) notLogged++;
        }
      }
      const logged = logs.tokens('!').size;
      const entries: Array<[string, RateLimit]> = [['!', QUEUE_RATE], ...Object.entries(GROUP_RATES)];
      let exceeded = 0;
      // the most starts any window held, per limit (at most the limit)
      const busiest: Record<string, number> = {};
      for (const [entry, r] of entries) {
        exceeded += windowsOverLimit(logs.times(entry), r).length;
        busiest[entry === '!' ? 'queue' : entry] = busiestWindow(logs.times(entry), r.periodMs);
      }
      const held = events.filter((e) => e.event === 'held').length;
      const violations = await checkInvariants(raw, QUEUE);
      const nOf = new Map(rows.map((row) => [row.id, row.n]));
      const checked = await checkResultsAndEvents(queue as Queue<unknown>, rows, (id) => ({ n: nOf.get(id)! * 2 }), await eventsStreamTrimmed(raw, QUEUE));
      const byRuntime = { edge: allRuns.filter((r) => r.runtime === 'edge').length, node: allRuns.filter((r) => r.runtime === 'node').length };
      return {
        scenario: 'rate-faults',
        jobs,
        faults: `the edge through ${Math.round(rate * 100)}% each of 500 and dropped reply; a Node consumer straight to Redis; queue ${QUEUE_RATE.limit} per ${QUEUE_RATE.periodMs} ms, r1 5 per 400 ms, r2 10 per 600 ms; one job in eight throws RateLimitedError once`,
        injected: { ...proxy.counts() },
        edge_events: edgeEvents,
        edge_events_failed: edgeEventsFailed,
        runs: byRuntime,
        rate_limited_errors: allRuns.filter((r) => r.hold).length,
        held_events: held,
        starts_logged: logged,
        active_events: actives.length,
        starts_log_copy_longest_gap_ms: Math.round(logs.longestGapMs),
        busiest_windows: busiest,
        rate_limit_exceeded: exceeded,
        starts_while_held: startsWhileHeld(events),
        // a start the copy missed, or one more or fewer than the `active` events: the check is blind there
        starts_not_logged: notLogged + Math.abs(logged - actives.length) + logs.failures,
        jobs_lost: lost,
        duplicate_jobs: duplicates,
        completed: c.completed,
        dead: c.dead,
        not_finished: c.pending + c.scheduled + c.active,
        ran_more_than_once: reruns,
        reruns_unexplained: tokensRunTwice + beyondAttempts,
        invariant_violations: violations.length,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      edgeOn = false;
      await edge;
      await node.stop();
      await logs.stop();
      raw.disconnect();
      await direct.close();
      await proxy.close();
      await bridge.close();
    }
  },
};
