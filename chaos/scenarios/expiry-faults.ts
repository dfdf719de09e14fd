import type { EnqueueOptions } from '../../src/job.js';
import { seededRandom } from '../../src/node/bridge/fault-proxy.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { ChildConsumers, ConsumerKiller } from '../lib/child-consumer.js';
import { startDurableStack, untilAnswered } from '../lib/durable-stack.js';
import { accountForExpiries, type ExpiryPlan, type ExpiryRow } from '../lib/expiry-accounting.js';
import { EXPIRY_QUEUE, type ExpiryPayload, resultOf } from '../lib/expiry-jobs.js';
import { PauseCycles, pauseSpans } from '../lib/pauses.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** How long an add is sent again, after a failure, before the scenario gives up (and fails). */
const ADD_GIVE_UP_MS = 60_000;

/**
 * A job's expiry: none; `expireAfterMs` short (likely to pass in a pause or a backlog), medium, or
 * long (never passes in the run); or `expireAt` a moment from its first send.
 */
type ExpiryKind = 'none' | 'short' | 'medium' | 'long' | 'at';
/** How a job is added: straight through ioredis, through the edge path one at a time, or in a bulk through it. */
type Route = 'direct' | 'edge' | 'bulk';

/** A planned job. Its id is `JOB:x<n>`, but a bulk's, which its answer names. */
interface Planned {
  readonly n: number;
  readonly payload: ExpiryPayload;
  readonly group: string | undefined;
  readonly delayMs: number | undefined;
  readonly expiry: { readonly kind: ExpiryKind; readonly ms: number };
  readonly route: Route;
}

/**
 * Expiry under faults, in a queue paused and resumed: jobs with expiries of every length (a fifth
 * none; short ones, 100-1000 ms, that pass in a pause or a backlog; medium, 1-5 s; long, 60-300 s;
 * `expireAt` 0.2-4 s from their first send), a fifth delayed (0.2-3 s: some past their expiry,
 * some not), half in groups limited to 2 running each, a fifth failing their first attempt (their
 * retry, 400 ms later, often after the expiry), added straight through ioredis or through the
 * edge path (the core's Queue over UpstashTransport, through the fault proxy in front of `emq
 * bridge`: 500 before a request runs, the reply dropped after it ran, the connection reset), one
 * at a time with its id or in bulks of 3-6 with an idempotency key, each sent again until answered
 * (an add whose reply was lost runs again: answered a duplicate, or the first answer). Three Node consumer processes
 * (chaos/children/expiry-consumer.ts, a beat every 500 ms) run them, one SIGKILLed by its PID and
 * replaced every 800 ms, on a redis-server of the scenario's own (`appendonly yes`, `appendfsync
 * always`) SIGKILLed and started again on its files under load. Meanwhile the queue is paused
 * and resumed over and over (half the calls through the edge path), and so is one group at a
 * time (each in turn), independently. Every handler run logs its start (its process's clock and its claim's
 * server time) and end in a file (chaos/lib/run-log.ts).
 *
 * Promised (must be 0), from Redis (rows, the events stream, meta) and the run log
 * (chaos/lib/expiry-accounting.ts): every job completed or dead of its expiry, none lost, none
 * dead otherwise, none without an expiry expired; an expired job never ran (no run logged, no
 * claim it kept) and died at or after its expiry (`xa` <= `f`, its `dead` event too, its error
 * naming it); no job started (its first claim it kept) after its expiry by the server's clock,
 * judged by the events stream's order (a start the stream cannot place, by the run log's claim
 * time); no job due 2 s or more before a pause's resume (the queue's, or its group's) swept only
 * after the resume (the beats of a paused queue sweep); every job started in time whose first
 * attempt failed retried and completed; one `dead` event per expired job; meta `expired` counting
 * the expired jobs; every group's active count back to zero; the keyspace checker (with its
 * expiry rule), results and `completed` events.
 */
export const expiryFaults: Scenario = {
  name: 'expiry-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 400 : 2_000;
    const everyMs = ctx.quick ? 15 : 20;
    const groups = Array.from({ length: ctx.quick ? 4 : 6 }, (_, i) => `g${i}`);
    const restarts = ctx.quick ? 1 : 3;
    const killEveryMs = 800;
    const rate = ctx.quick ? 0.08 : 0.12;
    const started = performance.now();
    const stack = await startDurableStack<ExpiryPayload>(ctx, { queue: EXPIRY_QUEUE, tempPrefix: 'echomq-expiry-', faultRate: rate });
    const { raw, queue, edge, proxy, log } = stack;

    // Node: consumer processes, one killed and replaced every killEveryMs
    const consumers = new ChildConsumers('expiry-consumer.ts', [stack.redis.url, log.path]);
    const killer = new ConsumerKiller(consumers, killEveryMs);
    const { killedAt } = killer;
    // the pauses: the queue's, and one group's at a time
    const pauseRand = seededRandom(ctx.seed + 1_000);
    const pausedGroup = (k: number): string => groups[k % groups.length]!;
    const queuePauses = new PauseCycles({
      pause: (k) => (k % 2 === 1 ? edge : queue).pause(),
      resume: (k) => (k % 2 === 1 ? edge : queue).resume(),
      runMs: ctx.quick ? [600, 1_500] : [1_000, 3_000],
      // most pauses long enough for jobs due 2 s before their resume (PAUSE_SWEEP_MARGIN_MS)
      pausedMs: ctx.quick ? [2_000, 3_500] : [1_500, 4_500],
      rand: pauseRand,
    });
    const groupPauses = new PauseCycles({
      pause: (k) => queue.pauseGroup(pausedGroup(k)),
      resume: (k) => queue.resumeGroup(pausedGroup(k)),
      runMs: [500, 1_500],
      pausedMs: [1_500, 3_500],
      rand: pauseRand,
    });

    try {
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      for (const g of groups) await queue.setGroupLimit(g, 2);

      // the plan, from the seed: jobs, and how they go in (single adds, bulks)
      const rand = seededRandom(ctx.seed);
      const between = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const plans: Planned[] = [];
      const batches: Planned[][] = [];
      while (plans.length < jobs) {
        const r = rand();
        const route: Route = r < 0.45 ? 'direct' : r < 0.85 ? 'edge' : 'bulk';
        const size = route === 'bulk' ? Math.min(between(3, 6), jobs - plans.length) : 1;
        const batch: Planned[] = [];
        for (let i = 0; i < size; i++) {
          const n = plans.length;
          const e = rand();
          const kind: ExpiryKind = e < 0.2 ? 'none' : e < 0.5 ? 'short' : e < 0.7 ? 'medium' : e < 0.85 ? 'long' : 'at';
          const ms = { none: 0, short: between(100, 1_000), medium: between(1_000, 5_000), long: between(60_000, 300_000), at: between(200, 4_000) }[kind];
          const plan: Planned = {
            n,
            payload: { n, workMs: between(20, 250), ...(rand() < 0.2 ? { failOnce: true } : {}) },
            group: rand() < 0.5 ? groups[Math.floor(rand() * groups.length)] : undefined,
            delayMs: rand() < 0.2 ? between(200, 3_000) : undefined,
            expiry: { kind, ms },
            route,
          };
          plans.push(plan);
          batch.push(plan);
        }
        batches.push(batch);
      }

      // each add sent again until answered (Redis restarts meanwhile): with its id, or a bulk with
      // its idempotency key; an expireAt fixed at the first send
      const ids = new Map<number, string>();
      const acknowledged = new Set<string>();
      let addRetries = 0;
      let duplicates = 0;
      const optionsOf = (plan: Planned, firstSentAt: number): EnqueueOptions => ({
        ...(plan.group ? { group: plan.group } : {}),
        ...(plan.delayMs ? { delayMs: plan.delayMs } : {}),
        ...(plan.expiry.kind === 'at' ? { expireAt: firstSentAt + plan.expiry.ms } : plan.expiry.kind !== 'none' ? { expireAfterMs: plan.expiry.ms } : {}),
        maxAttempts: 25,
        backoff: 400,
      });
      const send = async (batch: Planned[], b: number): Promise<void> => {
        const firstSentAt = Date.now();
        const [first] = batch;
        await untilAnswered(
          async () => {
            if (first!.route === 'bulk') {
              const answers = await edge.addBulk(
                batch.map((p) => ({ payload: p.payload, ...optionsOf(p, firstSentAt) })),
                { idempotencyKey: `expiry-${ctx.seed}-${b}` },
              );
              answers.forEach((a, i) => ids.set(batch[i]!.n, a.id));
              duplicates += answers.filter((a) => a.state === 'duplicate').length;
            } else {
              const a = await (first!.route === 'edge' ? edge : queue).add(first!.payload, { id: `x${first!.n}`, ...optionsOf(first!, firstSentAt) });
              ids.set(first!.n, a.id);
              if (a.state === 'duplicate') duplicates++;
            }
          },
          () => addRetries++,
          firstSentAt + ADD_GIVE_UP_MS,
        );
        for (const p of batch) acknowledged.add(ids.get(p.n)!);
      };

      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      killer.start();
      queuePauses.start();
      groupPauses.start();

      // the producer: a batch at a time; Redis restarted meanwhile
      const produce = (async () => {
        for (const [b, batch] of batches.entries()) {
          await send(batch, b);
          await sleep(everyMs * batch.length);
        }
      })();
      const restartTimes = await stack.restartRedis(restarts, jobs * everyMs);
      await produce;
      await queuePauses.stop();
      await groupPauses.stop();

      // the kills go on a while, then stop; the queue drains
      await sleep(ctx.quick ? 2_000 : 8_000);
      await killer.stop();
      await stack.drain(ctx.quick ? 30_000 : 90_000);
      consumers.killAll();

      // every row, event and run
      const prefix = `emq:{${EXPIRY_QUEUE}}:job:`;
      const rows = new Map<string, ExpiryRow & { result: string | undefined }>();
      for (const key of await raw.keys(`${prefix}*`)) {
        const [s, e, xa, f, r] = await raw.hmget(key, 's', 'e', 'xa', 'f', 'r');
        rows.set(key.slice(prefix.length), {
          state: s ?? '',
          error: e ?? undefined,
          expireAt: xa === null ? undefined : Number(xa),
          finishedAt: f === null ? undefined : Number(f),
          result: r ?? undefined,
        });
      }
      const events = await readAllEvents(queue as Queue<unknown>);
      const spans = pauseSpans(events, Date.now());
      const { records, torn } = log.read();
      const expiryPlans: ExpiryPlan[] = plans.flatMap((p) => {
        const id = ids.get(p.n);
        return id === undefined ? [] : [{ id, expires: p.expiry.kind !== 'none', failOnce: p.payload.failOnce === true, group: p.group }];
      });
      const { counts: accounted, why } = accountForExpiries(expiryPlans, acknowledged, rows, events, records, spans);
      const expiredMeta = Number((await raw.hget(`emq:{${EXPIRY_QUEUE}}:meta`, 'expired')) ?? 0);
      const expiredRows = [...rows.values()].filter((r) => r.state === 'dead' && (r.error ?? '').startsWith('EMQEXPIRED')).length;

      const groupCounts = await raw.hgetall(`emq:{${EXPIRY_QUEUE}}:gactive`);
      const groupCountsLeft = Object.values(groupCounts).reduce((sum, v) => sum + Math.abs(Number(v)), 0);
      const violations = await checkInvariants(raw, EXPIRY_QUEUE);
      if (process.env.EXPIRY_VERBOSE) console.log([...why, ...violations].slice(0, 60).join('\n'));
      const nOf = new Map([...ids].map(([n, id]) => [id, n]));
      const finished: FinishedRow[] = [...rows].map(([id, row]) => ({ id, state: row.state, result: row.result }));
      const checked = await checkResultsAndEvents(queue as Queue<unknown>, finished, (id) => resultOf(nOf.get(id) ?? -1), await eventsStreamTrimmed(raw, EXPIRY_QUEUE));
      const byKind = (kind: ExpiryKind) => plans.filter((p) => p.expiry.kind === kind);
      return {
        scenario: 'expiry-faults',
        jobs: plans.length,
        faults: `adds through the edge (UpstashTransport over emq bridge) through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset, and straight through ioredis; the queue paused ${queuePauses.cycles} times and one group at a time ${groupPauses.cycles} times; three Node consumer processes, one SIGKILLed every ${killEveryMs} ms (${killedAt.size} kills); redis-server SIGKILLed and restarted ${restartTimes.length} time(s), appendfsync always`,
        injected: { ...proxy.counts() },
        kills: killedAt.size,
        restarts: restartTimes.length,
        pauses: queuePauses.cycles,
        group_pauses: groupPauses.cycles,
        paused_ms: {
          queue: spans.filter((s) => s.group === undefined).reduce((sum, s) => sum + s.to - s.from, 0),
          groups: spans.filter((s) => s.group !== undefined).reduce((sum, s) => sum + s.to - s.from, 0),
        },
        pause_retries: queuePauses.retries + groupPauses.retries,
        acknowledged: acknowledged.size,
        add_retries: addRetries,
        duplicate_answers: duplicates,
        routes: { direct: plans.filter((p) => p.route === 'direct').length, edge: plans.filter((p) => p.route === 'edge').length, bulk: plans.filter((p) => p.route === 'bulk').length },
        expiries: { none: byKind('none').length, short: byKind('short').length, medium: byKind('medium').length, long: byKind('long').length, at: byKind('at').length },
        grouped: plans.filter((p) => p.group).length,
        delayed: plans.filter((p) => p.delayMs).length,
        fail_once: plans.filter((p) => p.payload.failOnce).length,
        ...accounted,
        expired_meta: expiredMeta,
        expired_count_wrong: Math.abs(expiredMeta - expiredRows),
        run_log_torn_lines: torn,
        duplicate_jobs: [...rows.keys()].filter((id) => !nOf.has(id)).length,
        expiring_index_left: await raw.zcard(`emq:{${EXPIRY_QUEUE}}:expiring`),
        group_counts_left: groupCountsLeft,
        invariant_violations: violations.length,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await killer.stop();
      await queuePauses.stop().catch(() => {});
      await groupPauses.stop().catch(() => {});
      consumers.killAll();
      await stack.close();
    }
  },
};
