import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { startFaultProxy, seededRandom } from '../../src/node/bridge/fault-proxy.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { createdWhileHeld, DedupeSampler, replacedAfterStart } from '../lib/dedupe-holders.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-dedupe';

/**
 * The key pool, by family: `u` held until its job finishes; `t` a ttl window (its own ttl, the
 * same on every add, so its jobs' creations must be that far apart); `d` debounce (replace with a
 * delay, until finished); `m` mixed (each add one of the three ways, so a replace moves a window
 * from one mode to the other).
 */
const KEYS = ['u0', 'u1', 'u2', 'u3', 't0', 't1', 't2', 't3', 'd0', 'd1', 'd2', 'd3', 'm0', 'm1'] as const;
const TTL_OF: Readonly<Record<string, number>> = { t0: 100, t1: 150, t2: 200, t3: 300 };

interface Payload {
  /** The enqueue request that gave the job this payload (its first, or its last replace). */
  readonly n: number;
  readonly key: string;
  /** Throws on every run: the job dies (its attempts used up), releasing its key. */
  readonly fail: boolean;
}

interface Dedupe {
  readonly key: string;
  readonly ttlMs?: number;
  readonly replace?: boolean;
}

/** One handler run: which runtime, the lease token, and the payload's request it ran. */
interface Run {
  readonly runtime: 'edge' | 'node';
  readonly token: number;
  readonly n: number;
}

/** Request n's body: its key and window, its delay for a debounce, one in twelve failing for good. */
function requestOf(n: number, rand: () => number): { body: Record<string, unknown>; key: string } {
  const key = KEYS[Math.floor(rand() * KEYS.length)]!;
  const fail = rand() < 1 / 12;
  const family = key[0] === 'm' ? (['u', 't', 'd'] as const)[Math.floor(rand() * 3)]! : key[0];
  const delayMs = 100 + Math.floor(rand() * 300);
  let dedupe: Dedupe = { key };
  const extra: Record<string, unknown> = {};
  if (family === 't') dedupe = { key, ttlMs: TTL_OF[key] ?? 100 + Math.floor(rand() * 200) };
  if (family === 'd') {
    dedupe = { key, replace: true, ...(key[0] === 'm' && rand() < 0.5 ? { ttlMs: 150 } : {}) };
    extra.delayMs = delayMs;
  }
  const payload: Payload = { n, key, fail };
  return { key, body: { payload, dedupe, ...extra, ...(fail ? { maxAttempts: 2, backoff: 20 } : {}) } };
}

/**
 * Deduplication under faults: producers enqueue through the Worker's own HTTP API
 * (`createWorker` on Node over @upstash/redis, through the fault proxy in front of `emq bridge`:
 * 500 before a request runs, the reply dropped after it ran, the connection reset), each request
 * with a key from a small pool (held until finished, a ttl window, a debounce: replace with a
 * delay, or mixed), retrying a failure with the same Idempotency-Key as a client would; the
 * Worker's scheduled drains (through the same faults) and a Node consumer straight to Redis run
 * the jobs, one in twelve failing for good. A sampler reads the keys and their rows in one script
 * every 50 ms. Then the faults stop and the queue drains.
 *
 * Promised (must be 0): `dedupe_keys_held_twice` (an unfinished job holding its key until finished
 * that its key does not name, sampled; or a job created while another of its key, every add of
 * which held until finished, was unfinished, from the events stream), `dedupe_keys_held_after_finish`
 * (a key without a TTL naming a finished or gone job, sampled, and once more after the drain),
 * `dedupe_windows_broken` (two jobs of a ttl key created less than its ttl apart, by their rows'
 * `c`; a key's TTL above its row's window), `replaced_after_start` (a `replaced` event after the
 * job's `active`, or a run whose payload is not the job's last), and every scenario's: jobs lost
 * (an id an enqueue answered with no row), one enqueue that made two jobs, runs no lapsed lease
 * explains, invariant violations at the end, unfinished jobs, results and events.
 */
export const dedupeFaults: Scenario = {
  name: 'dedupe-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const requests = ctx.quick ? 400 : 3_000;
    const rate = ctx.quick ? 0.1 : 0.15;
    const started = performance.now();
    const token = randomBytes(8).toString('hex');
    const raw = new Redis(ctx.redisUrl);
    const direct = IoredisTransport.connect(ctx.redisUrl);
    const queue = new Queue<Payload>(direct, QUEUE, { keepCompletedMs: -1 });
    const bridge = await startBridge({ redisUrl: ctx.redisUrl, token });
    const proxy = await startFaultProxy({ target: bridge.url, faults: { error500: rate, dropReply: rate, reset: rate / 3 }, seed: ctx.seed });
    const runs = new Map<string, Run[]>();
    // the Node consumer runs one job at a time, 50 ms each, so the edge's drains take a share of the work
    const handle = (runtime: Run['runtime']) => async (job: { id: string; token: number; payload: Payload }) => {
      const mine = runs.get(job.id) ?? [];
      runs.set(job.id, mine);
      mine.push({ runtime, token: job.token, n: job.payload.n });
      if (runtime === 'node') await new Promise((resolve) => setTimeout(resolve, 50));
      if (job.payload.fail) throw new Error('fails on purpose');
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
    const ctxWait = { waitUntil: () => {} };
    let edgeEvents = 0;
    let edgeEventsFailed = 0;
    const scheduled = async (): Promise<void> => {
      edgeEvents++;
      await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctxWait).catch(() => void edgeEventsFailed++);
    };
    const node = new Consumer<Payload>(IoredisTransport.connect(ctx.redisUrl), QUEUE, handle('node'), {
      concurrency: 1,
      leaseMs: 2_000,
      beatMs: 500,
      log: false,
      ownsTransport: true,
    });
    const sampler = new DedupeSampler(raw, `emq:{${QUEUE}}:`);
    let edgeOn = false;
    let edge: Promise<void> = Promise.resolve();
    try {
      const old = await raw.keys(`emq:{${QUEUE}}:*`);
      if (old.length > 0) await raw.del(...old);
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      sampler.start();
      node.start();
      edgeOn = true;
      edge = (async () => {
        while (edgeOn) await scheduled();
      })();

      // clients send one request at a time, 0-40 ms apart, each retried with its own key until answered
      const rand = seededRandom(ctx.seed);
      const answers = new Map<number, { key: string; id: string; state: string }>();
      const states: Record<string, number> = {};
      let gaveUp = 0;
      let clientRetries = 0;
      const enqueue = async (n: number): Promise<void> => {
        const { key, body } = requestOf(n, rand);
        for (let attempt = 0; attempt < 10; attempt++) {
          if (attempt > 0) clientRetries++;
          try {
            const res = await worker.fetch(
              new Request(`http://edge/v1/queues/${QUEUE}/jobs`, {
                method: 'POST',
                headers: { Authorization: 'Bearer chaos', 'Content-Type': 'application/json', 'Idempotency-Key': `dd-${ctx.seed}-${n}` },
                body: JSON.stringify(body),
              }),
              env,
              ctxWait,
            );
            if (res.status === 201 || res.status === 200) {
              const answer = (await res.json()) as { id: string; state: string };
              answers.set(n, { key, ...answer });
              states[answer.state] = (states[answer.state] ?? 0) + 1;
              return;
            }
          } catch {
            // a client sees a failure: it sends the request again with the same key
          }
        }
        gaveUp++;
      };
      const clients = ctx.quick ? 4 : 8;
      let next = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < requests) {
            await enqueue(next++);
            await new Promise((resolve) => setTimeout(resolve, Math.floor(rand() * 40)));
          }
        }),
      );

      // drain under faults, then without them
      const counts = async () => (await queue.stats()).counts;
      const drainUntil = performance.now() + (ctx.quick ? 20_000 : 90_000);
      let c = await counts();
      while (c.pending + c.scheduled + c.active > 0 && performance.now() < drainUntil) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        c = await counts();
      }
      proxy.setFaults({});
      for (let i = 0; i < 100 && c.pending + c.scheduled + c.active > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        c = await counts();
      }
      edgeOn = false;
      await edge;
      await node.stop();
      await sampler.stop();
      // the drained queue, once more: no key without a TTL may be left
      await sampler.sample();

      // every row, and what the runs say
      const prefix = `emq:{${QUEUE}}:job:`;
      const rows: Array<{ id: string; payload: Payload; state: string; attempts: number; created: number; result: string | undefined }> = [];
      for (const key of await raw.keys(`${prefix}*`)) {
        const [d, s, a, cr, r] = await raw.hmget(key, 'd', 's', 'a', 'c', 'r');
        rows.push({ id: key.slice(prefix.length), payload: JSON.parse(d ?? '{}') as Payload, state: s ?? '', attempts: Number(a ?? 0), created: Number(cr ?? 0), result: r ?? undefined });
      }
      const rowOf = new Map(rows.map((row) => [row.id, row]));
      const answered = new Set([...answers.values()].map((a) => a.id));
      const lost = [...answered].filter((id) => !rowOf.has(id)).length;
      // a row's payload names the request that made it or last replaced it: two rows naming one request are one enqueue made twice
      const perN = new Map<number, number>();
      for (const row of rows) perN.set(row.payload.n, (perN.get(row.payload.n) ?? 0) + 1);
      const duplicates = [...perN.values()].reduce((sum, k) => sum + (k - 1), 0);
      const created = [...answers.values()].filter((a) => a.state === 'pending' || a.state === 'scheduled');
      const allRuns = [...runs.values()].flat();
      const tokensRunTwice = allRuns.length - new Set(allRuns.map((r) => r.token)).size;
      const beyondAttempts = rows.filter((row) => (runs.get(row.id)?.length ?? 0) > row.attempts).length;
      const reruns = rows.filter((row) => (runs.get(row.id)?.length ?? 0) > 1 && !row.payload.fail).length;

      const events = await readAllEvents(queue as Queue<unknown>);
      const keyOf = (id: string): string | undefined => rowOf.get(id)?.payload.key;
      const heldTwice = new Set([...sampler.heldTwice, ...createdWhileHeld(events, keyOf, (key) => key[0] === 'u' || key[0] === 'd')]);
      // a run on a payload other than the row's last: the row was replaced after that run began
      const ranStale = rows.filter((row) => (runs.get(row.id) ?? []).some((r) => r.n !== row.payload.n)).map((row) => row.id);
      const replacedStarted = new Set([...replacedAfterStart(events), ...ranStale]);
      // the ttl keys' windows: each job of one created at least its ttl after the one before
      let windowsBroken = sampler.windowsTooLong.size;
      let closest = Number.POSITIVE_INFINITY;
      for (const [key, ttl] of Object.entries(TTL_OF)) {
        const times = rows.filter((row) => row.payload.key === key).map((row) => row.created).sort((a, b) => a - b);
        for (let i = 1; i < times.length; i++) {
          const gap = times[i]! - times[i - 1]!;
          closest = Math.min(closest, gap - ttl);
          if (gap < ttl) windowsBroken++;
        }
      }
      const violations = await checkInvariants(raw, QUEUE);
      const checked = await checkResultsAndEvents(
        queue as Queue<unknown>,
        rows.map((row) => ({ id: row.id, state: row.state, result: row.result })),
        (id) => ({ n: rowOf.get(id)!.payload.n * 2 }),
        await eventsStreamTrimmed(raw, QUEUE),
      );
      return {
        scenario: 'dedupe-faults',
        requests,
        faults: `the edge (API and drains) through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset; a Node consumer straight to Redis; 14 keys: held until finished, ttl 100-300 ms, debounce (replace, 100-400 ms delay), mixed; one request in twelve fails for good`,
        injected: { ...proxy.counts() },
        client_retries: clientRetries,
        enqueue_gave_up: gaveUp,
        answers: states,
        jobs: rows.length,
        replaced_events: events.filter((e) => e.event === 'replaced').length,
        rows_no_answer_names: rows.filter((row) => !answered.has(row.id)).length,
        edge_events: edgeEvents,
        edge_events_failed: edgeEventsFailed,
        runs: { edge: allRuns.filter((r) => r.runtime === 'edge').length, node: allRuns.filter((r) => r.runtime === 'node').length },
        samples: sampler.samples,
        sample_failures: sampler.failures,
        ttl_gap_over_window_min_ms: Number.isFinite(closest) ? closest : -1,
        dedupe_keys_held_twice: heldTwice.size,
        dedupe_keys_held_after_finish: sampler.heldAfterFinish.size,
        dedupe_windows_broken: windowsBroken,
        replaced_after_start: replacedStarted.size,
        jobs_lost: lost,
        duplicate_jobs: duplicates,
        created_answers: created.length,
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
      await sampler.stop();
      raw.disconnect();
      await direct.close();
      await proxy.close();
      await bridge.close();
    }
  },
};
