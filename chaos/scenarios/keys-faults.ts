import type { EnqueueOptions } from '../../src/job.js';
import { seededRandom } from '../../src/node/bridge/fault-proxy.js';
import type { Queue } from '../../src/queue/queue.js';
import type { RateLimit } from '../../src/queue/rate-limits.js';
import { ChildConsumers, ConsumerKiller } from '../lib/child-consumer.js';
import { startDurableStack, untilAnswered } from '../lib/durable-stack.js';
import { accountForKeys, type KeysPlan, type KeysRow } from '../lib/keys-accounting.js';
import { KEYS_QUEUE, type KeysPayload, resultOf } from '../lib/keys-jobs.js';
import { KeySampler, rateText } from '../lib/keys-sampler.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** How long an add is sent again, after a failure, before the scenario gives up (and fails). */
const ADD_GIVE_UP_MS = 60_000;

/** The organisations' keys and their limits at the start: each job names one of them, or none. */
const ORGS: ReadonlyMap<string, number> = new Map([
  ['org:0', 2],
  ['org:1', 3],
  ['org:2', 4],
  ['org:3', 2],
  ['org:4', 3],
  ['org:5', 4],
]);
/** The plans' keys and their limits at the start. */
const PLANS: ReadonlyMap<string, number> = new Map([
  ['plan:free', 6],
  ['plan:pro', 10],
]);
/** A key no limit is ever set for: counted, never held back but by its rate. */
const UNLIMITED = 'tag:any';
/**
 * The keys with a rate limit (starts per window), each with its window, ms: fixed through the run
 * (only the limits change: a period made longer would count, in its first window, only the starts
 * the shorter one kept), and its limit at the start (null: none yet). Low enough to hold the jobs
 * back at this scenario's pace (some 30 claims a second over all keys).
 */
const RATED: ReadonlyMap<string, { readonly periodMs: number; readonly limit: number | null }> = new Map([
  [UNLIMITED, { periodMs: 1_000, limit: 10 }],
  ['plan:pro', { periodMs: 500, limit: 6 }],
  ['org:1', { periodMs: 750, limit: 4 }],
  ['org:4', { periodMs: 500, limit: null }],
]);
/** The limits a random rate change picks from, per rated key. */
const RATE_RANGES: ReadonlyMap<string, readonly [number, number]> = new Map([
  [UNLIMITED, [3, 30]],
  ['plan:pro', [2, 15]],
  ['org:1', [1, 6]],
  ['org:4', [1, 6]],
]);

/** How a job is added: straight through ioredis, or through the edge path. */
type Route = 'direct' | 'edge';

/** A planned job. Its id is `JOB:k<n>`. */
interface Planned {
  readonly n: number;
  readonly payload: KeysPayload;
  readonly group: string | undefined;
  readonly keys: readonly string[];
  readonly route: Route;
}

/** A limit change of the plan: when (ms into the enqueues), which key, to what (null: lifted). */
interface PlannedChange {
  readonly atMs: number;
  readonly key: string;
  readonly limit: number | null;
}

/** A rate change of the plan: when, which key, to what limit in the key's fixed period (null: lifted). */
interface PlannedRateChange {
  readonly atMs: number;
  readonly key: string;
  readonly limit: number | null;
}

/**
 * Concurrency keys under faults: jobs in many groups (a third of them limited to 2 or 3 running, a
 * fifth of the jobs ungrouped), each naming 1-2 keys (one of six organisations limited to 2-4
 * running each, one of two plans limited to 6 and 10, a key never limited; in either order), a
 * tenth failing their first attempt, one in thirty failing for good (dead by design), one in
 * sixteen running 1.5-3 s (several 1 s leases, renewed), added straight through ioredis or
 * through the edge path (the core's Queue over UpstashTransport, through the fault proxy in front
 * of `emq bridge`: 500 before a request runs, the reply dropped after it ran, the connection
 * reset), each sent again with its id until answered. Three Node consumer processes
 * (chaos/children/keys-consumer.ts, 8 slots, a beat every 500 ms) run them, one SIGKILLed by its
 * PID and replaced every 800 ms through the enqueues and the backlog they leave (its runs' leases
 * lapse, the reaper ends them and gives their keys' slots back), on a redis-server of the scenario's own (`appendonly yes`, `appendfsync always`)
 * SIGKILLed and started again on its files under load. Meanwhile the keys' limits are raised,
 * lowered (below the jobs running, to 0), lifted and set again at random moments, each change
 * recorded with its times (chaos/lib/keys-sampler.ts), and put back once the enqueues end. Beside
 * them four keys have (or get) a rate limit, each in a window of its own kept through the run
 * (RATED: the unlimited key 10 starts a second, plan:pro 6 per 500 ms, org:1 4 per 750 ms, org:4
 * none at first), changed at random moments too (raised, lowered, lifted, set again from none:
 * org:4 set, the unlimited key lifted and set again, plan:pro lowered to 2 and raised to 15) and put
 * back once the enqueues end (org:4 lifted), so jobs parked by a rate drain through the beats'
 * readmits. Every handler run logs its start and end in a file (chaos/lib/run-log.ts).
 *
 * Sampled as it runs (chaos/lib/keys-sampler.ts): `keyLimits()` every 50 ms, held to the limit in
 * force (a key lowered below its running jobs may only drain), its limit the last one set; the
 * keyspace checker every 0.5-1 s, or less often as its snapshot grows (its rule (t): each key's
 * count its running jobs). Promised (must
 * be 0), from those samples, Redis (rows, the whole events stream) and the run log
 * (chaos/lib/keys-accounting.ts): no sample over the limit in force (`key_limit_exceeded`) or
 * reading a limit not set (`key_limits_wrong`); no checker violation, sampled or at the end; no
 * claim with its key at its limit in the stream's replay, which ends at zero
 * (`key_claims_over_limit`, `key_events_unbalanced`); at no instant more handler runs of a key
 * whose lease was live than the limit at the latest of their claims (`key_runs_over_limit`: a
 * killed consumer's run is cut at its kill, a run the reaper ended is not a holder from then on);
 * no two holders of one job (`reruns_unexplained`); no claim of a key whose window of its period
 * already held its rate's starts, the stream replayed with its `key-rate` events and each
 * `active`'s time (a start counted only when surely in the window, its event allowed 2 ms past its
 * claim's clock; a claim put over that way looked at again with the claims' own times the run log
 * has: `key_starts_over_rate`), and no sample reading a rate not the last one set, or a key
 * throttled with no rate (`key_limits_wrong`); every job completed, or dead where it failed
 * for good by design, none lost; at the end, every key's running and parked counts 0 and no
 * `kactive` entry or key wait left (`key_slots_left`), every group's active count 0; results and
 * `completed` events.
 *
 * A mutant to check the rate judge: `KEYS_MUTANT=rate npm run chaos -- --quick --scenario
 * keys-faults` runs consumers whose scripts ignore the keys' rates (chaos/children/keys-consumer.ts).
 */
export const keysFaults: Scenario = {
  name: 'keys-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 600 : 3_000;
    const everyMs = 12;
    const groups = Array.from({ length: ctx.quick ? 8 : 16 }, (_, i) => `g${i}`);
    const groupLimits = new Map(groups.filter((_, i) => i % 3 === 0).map((g, i) => [g, 2 + (i % 2)]));
    const restarts = ctx.quick ? 1 : 3;
    const killEveryMs = 800;
    const rate = ctx.quick ? 0.08 : 0.12;
    const limitChanges = ctx.quick ? 8 : 20;
    const rateChanges = ctx.quick ? 8 : 16;
    const started = performance.now();
    const startedAt = Date.now();
    const stack = await startDurableStack<KeysPayload>(ctx, { queue: KEYS_QUEUE, tempPrefix: 'echomq-keys-', faultRate: rate });
    const { raw, queue, edge, proxy, log } = stack;
    const initial = new Map<string, number | null>([...ORGS, ...PLANS]);
    const rateOf = (key: string, limit: number | null): RateLimit | null => (limit === null ? null : { limit, periodMs: RATED.get(key)!.periodMs });
    const initialRates = new Map([...RATED].map(([key, r]) => [key, rateOf(key, r.limit)]));
    const sampler = new KeySampler(queue as Queue<unknown>, raw, KEYS_QUEUE, initial, 50, ctx.quick ? 500 : 1_000, 30_000, initialRates);

    // Node: consumer processes, one killed and replaced every killEveryMs
    const consumers = new ChildConsumers('keys-consumer.ts', [stack.redis.url, log.path]);
    const killer = new ConsumerKiller(consumers, killEveryMs);
    const { killedAt } = killer;
    let changing: Promise<void> = Promise.resolve();
    let rating: Promise<void> = Promise.resolve();

    try {
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      for (const [g, limit] of groupLimits) await queue.setGroupLimit(g, limit);
      for (const [key, limit] of initial) await queue.setKeyLimit(key, limit);
      for (const [key, rate] of initialRates) if (rate) await queue.setKeyRateLimit(key, rate);

      // the plan, from the seed
      const rand = seededRandom(ctx.seed);
      const between = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const pick = <T>(from: readonly T[]): T => from[Math.floor(rand() * from.length)]!;
      const orgs = [...ORGS.keys()];
      const plans = [...PLANS.keys()];
      const planned: Planned[] = [];
      for (let n = 0; n < jobs; n++) {
        const k = rand();
        const org = pick(orgs);
        const plan = pick(plans);
        const keys = k < 0.35 ? [org] : k < 0.6 ? [org, plan] : k < 0.7 ? [plan, org] : k < 0.8 ? [plan] : k < 0.93 ? [org, UNLIMITED] : [UNLIMITED];
        const r = rand();
        planned.push({
          n,
          payload: {
            n,
            workMs: rand() < 1 / 16 ? between(1_500, 3_000) : between(20, 300),
            ...(r < 0.1 ? { failOnce: true } : r < 0.1 + 1 / 30 ? { failForGood: true } : {}),
          },
          group: rand() < 0.8 ? pick(groups) : undefined,
          keys,
          route: rand() < 0.5 ? 'direct' : 'edge',
        });
      }
      const produceMs = jobs * everyMs;
      // at random moments, random keys to random limits; and in every run an organisation shut
      // (0) a while then opened, another lowered to 1, and plan:pro lifted a while
      const at = (lo: number, hi: number): number => Math.floor(produceMs * (lo + rand() * (hi - lo)));
      const [shut, lowered] = [pick(orgs), pick(orgs)];
      const changes: PlannedChange[] = [
        ...Array.from({ length: limitChanges - 5 }, () => {
          const key = pick([...orgs, ...plans]);
          const limit = key.startsWith('org:') ? between(0, 6) : key === 'plan:free' ? between(1, 8) : rand() < 0.25 ? null : between(2, 12);
          return { atMs: at(0, 0.9), key, limit };
        }),
        { atMs: at(0.2, 0.3), key: shut, limit: 0 },
        { atMs: at(0.45, 0.55), key: shut, limit: ORGS.get(shut)! + 1 },
        { atMs: at(0.3, 0.4), key: lowered, limit: 1 },
        { atMs: at(0.1, 0.2), key: 'plan:pro', limit: null },
        { atMs: at(0.6, 0.7), key: 'plan:pro', limit: 4 },
      ].sort((a, b) => a.atMs - b.atMs);
      // the rates (drawn after the rest of the plan, which they leave as it was): at random
      // moments, random rated keys to random limits or lifted; and in every run org:4 given one,
      // the unlimited key's lifted a while and set again (a new log), plan:pro's lowered to 2 and
      // raised to 15
      const ratedKeys = [...RATED.keys()];
      const rateChangesPlanned: PlannedRateChange[] = [
        ...Array.from({ length: rateChanges - 5 }, () => {
          const key = pick(ratedKeys);
          const [lo, hi] = RATE_RANGES.get(key)!;
          return { atMs: at(0, 0.9), key, limit: rand() < 0.2 ? null : between(lo, hi) };
        }),
        { atMs: at(0.15, 0.25), key: 'org:4', limit: 3 },
        { atMs: at(0.25, 0.35), key: UNLIMITED, limit: null },
        { atMs: at(0.5, 0.6), key: UNLIMITED, limit: between(3, 6) },
        { atMs: at(0.3, 0.4), key: 'plan:pro', limit: 2 },
        { atMs: at(0.65, 0.75), key: 'plan:pro', limit: 15 },
      ].sort((a, b) => a.atMs - b.atMs);

      // each add sent again with its id until answered (Redis restarts meanwhile)
      const ids = new Map<number, string>();
      const acknowledged = new Set<string>();
      let addRetries = 0;
      let duplicates = 0;
      const optionsOf = (plan: Planned): EnqueueOptions => ({
        id: `k${plan.n}`,
        ...(plan.group ? { group: plan.group } : {}),
        keys: plan.keys,
        maxAttempts: 40,
        backoff: 300,
      });
      const send = async (plan: Planned): Promise<void> => {
        const a = await untilAnswered(() => (plan.route === 'edge' ? edge : queue).add(plan.payload, optionsOf(plan)), () => addRetries++, Date.now() + ADD_GIVE_UP_MS);
        ids.set(plan.n, a.id);
        if (a.state === 'duplicate') duplicates++;
        acknowledged.add(a.id);
      };

      sampler.start();
      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      killer.start();

      // the producers: job n sent everyMs * n into the enqueues (up to 6 in flight, so a slow
      // answer or a retry does not hold the others back); the limits changed meanwhile; Redis
      // restarted meanwhile
      const produceFrom = Date.now();
      let nextJob = 0;
      const produce = Promise.all(
        Array.from({ length: 6 }, async () => {
          for (let i = nextJob++; i < planned.length; i = nextJob++) {
            await sleep(Math.max(0, produceFrom + i * everyMs - Date.now()));
            await send(planned[i]!);
          }
        }),
      );
      changing = (async () => {
        for (const change of changes) {
          await sleep(Math.max(0, produceFrom + change.atMs - Date.now()));
          await sampler.setLimit(change.key, change.limit);
        }
      })();
      rating = (async () => {
        for (const change of rateChangesPlanned) {
          await sleep(Math.max(0, produceFrom + change.atMs - Date.now()));
          await sampler.setRate(change.key, rateOf(change.key, change.limit));
        }
      })();
      const restartTimes = await stack.restartRedis(restarts, produceMs);
      await produce;
      await changing;
      await rating;
      const producedS = Math.round((performance.now() - started) / 100) / 10;
      // the limits put back, so every job can finish
      for (const [key, limit] of initial) if (sampler.limitOf(key) !== limit) await sampler.setLimit(key, limit);
      // and the rates (org:4's lifted): jobs parked by a rate drain through the beats' readmits
      for (const [key, rate] of initialRates) if (rateText(sampler.rateOf(key)) !== rateText(rate)) await sampler.setRate(key, rate);

      // the kills go on through the backlog (most runs come after the enqueues: the keys' limits
      // hold them back) until a twentieth of the jobs is left, or a while; then the queue drains
      const killsUntil = performance.now() + (ctx.quick ? 10_000 : 60_000);
      while (performance.now() < killsUntil && (await stack.unfinished()) > jobs / 20) await sleep(200);
      await killer.stop();
      await stack.drain(ctx.quick ? 30_000 : 120_000);
      await sampler.stop();
      consumers.killAll();
      const drainedS = Math.round((performance.now() - started) / 100) / 10;

      // the end: every key back to zero, nothing parked, the checker once more
      const last = await sampler.sample();
      const kactiveLeft = await raw.hlen(`emq:{${KEYS_QUEUE}}:kactive`);
      const waitsLeft = (await raw.keys(`emq:{${KEYS_QUEUE}}:kwait:*`)).length;
      const slotsLeft = last.reduce((sum, k) => sum + k.running + k.parked, 0) + kactiveLeft + waitsLeft;
      const finalViolations = await sampler.check();
      // keys still throttled by their rate (nothing parked on them: a beat would only take them off)
      const keyThrottlesLeft = (await raw.zrange(`emq:{${KEYS_QUEUE}}:throttled`, '0', '-1')).filter((e) => e.startsWith('#')).length;

      // every row, event and run
      const prefix = `emq:{${KEYS_QUEUE}}:job:`;
      const rows = new Map<string, KeysRow & { result: string | undefined }>();
      for (const key of await raw.keys(`${prefix}*`)) {
        const [s, e, r] = await raw.hmget(key, 's', 'e', 'r');
        rows.set(key.slice(prefix.length), { state: s ?? '', error: e ?? undefined, result: r ?? undefined });
      }
      const events = await readAllEvents(queue as Queue<unknown>);
      const { records, torn } = log.read();
      const keysPlans: KeysPlan[] = planned.flatMap((p) => {
        const id = ids.get(p.n);
        return id === undefined ? [] : [{ id, keys: p.keys, failForGood: p.payload.failForGood === true }];
      });
      const { counts: accounted, why } = accountForKeys(keysPlans, acknowledged, rows, events, records, killedAt);
      const groupCounts = await raw.hgetall(`emq:{${KEYS_QUEUE}}:gactive`);
      const groupCountsLeft = Object.values(groupCounts).reduce((sum, v) => sum + Math.abs(Number(v)), 0);
      if (process.env.KEYS_VERBOSE) {
        console.log(
          [...sampler.overLimit.slice(0, 20), ...sampler.limitsWrong.slice(0, 20), ...[...sampler.violations].slice(0, 40), ...why.slice(0, 80), ...last.map((k) => `end ${JSON.stringify(k)}`)].join('\n'),
        );
      }
      const nOf = new Map([...ids].map(([n, id]) => [id, n]));
      const finished: FinishedRow[] = [...rows].map(([id, row]) => ({ id, state: row.state, result: row.result }));
      const checked = await checkResultsAndEvents(queue as Queue<unknown>, finished, (id) => resultOf(nOf.get(id) ?? -1), await eventsStreamTrimmed(raw, KEYS_QUEUE));
      const keyCount = (k: string) => planned.filter((p) => p.keys.includes(k)).length;
      const answered = sampler.changes.filter((c) => c.answeredAt !== undefined);
      const ratesAnswered = sampler.rateChanges.filter((c) => c.answeredAt !== undefined);
      return {
        scenario: 'keys-faults',
        jobs: planned.length,
        faults: `adds through the edge (UpstashTransport over emq bridge) through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset, and straight through ioredis; key limits changed ${limitChanges} times at random (raised, lowered, to 0, lifted) and put back; key rates (${[...RATED].map(([k, r]) => `${k} ${r.limit ?? '-'}/${r.periodMs} ms`).join(', ')}) changed ${rateChanges} times at random (raised, lowered, lifted, set again) and put back; three Node consumer processes, one SIGKILLed every ${killEveryMs} ms (${killedAt.size} kills); redis-server SIGKILLed and restarted ${restartTimes.length} time(s), appendfsync always`,
        injected: { ...proxy.counts() },
        kills: killedAt.size,
        restarts: restartTimes.length,
        acknowledged: acknowledged.size,
        add_retries: addRetries,
        duplicate_answers: duplicates,
        routes: { direct: planned.filter((p) => p.route === 'direct').length, edge: planned.filter((p) => p.route === 'edge').length },
        groups: groups.length,
        group_limits: groupLimits.size,
        grouped: planned.filter((p) => p.group).length,
        two_keys: planned.filter((p) => p.keys.length === 2).length,
        jobs_by_key: Object.fromEntries([...orgs, ...plans, UNLIMITED].map((k) => [k, keyCount(k)])),
        long: planned.filter((p) => p.payload.workMs >= 1_500).length,
        fail_once: planned.filter((p) => p.payload.failOnce).length,
        fail_for_good: planned.filter((p) => p.payload.failForGood).length,
        limit_changes: sampler.changes.length,
        limit_changes_unanswered: sampler.changes.length - answered.length,
        limit_change_tries: sampler.changes.reduce((sum, c) => sum + c.tries, 0),
        readmitted_by_changes: answered.reduce((sum, c) => sum + (c.readmitted ?? 0), 0),
        limit_changes_to_zero: sampler.changes.filter((c) => c.to === 0).length,
        // each change: its key, from and to (- for none), when it was answered (s into the run), and the parked jobs it readmitted
        limit_changes_made: sampler.changes
          .map((c) => `${c.key} ${c.from ?? '-'}>${c.to ?? '-'} at ${c.answeredAt === undefined ? 'unanswered' : `${((c.answeredAt - startedAt) / 1_000).toFixed(1)} s`}${c.readmitted ? ` +${c.readmitted}` : ''}`)
          .join('; '),
        limit_changes_lifted: sampler.changes.filter((c) => c.to === null).length,
        rate_changes: sampler.rateChanges.length,
        rate_changes_unanswered: sampler.rateChanges.length - ratesAnswered.length,
        readmitted_by_rate_changes: ratesAnswered.reduce((sum, c) => sum + (c.readmitted ?? 0), 0),
        // each rate change: its key, from and to (limit/period, - for none), when answered, and the parked jobs it readmitted
        rate_changes_made: sampler.rateChanges
          .map((c) => `${c.key} ${c.from ? rateText(c.from) : '-'}>${c.to ? rateText(c.to) : '-'} at ${c.answeredAt === undefined ? 'unanswered' : `${((c.answeredAt - startedAt) / 1_000).toFixed(1)} s`}${c.readmitted ? ` +${c.readmitted}` : ''}`)
          .join('; '),
        rate_throttled_samples: sampler.throttledSamples,
        key_throttles_left: keyThrottlesLeft,
        samples: sampler.samples,
        sample_failures: sampler.failures,
        samples_above_lowered_limit: sampler.aboveLowered,
        most_running: sampler.maxRunning,
        most_parked: sampler.maxParked,
        checker_runs: sampler.checks,
        checker_failures: sampler.checkFailures,
        checker_max_ms: { snapshot: sampler.snapshotMaxMs, look: sampler.findMaxMs },
        checker_total_s: Math.round(sampler.checkMs / 100) / 10,
        ...accounted,
        run_log_torn_lines: torn,
        duplicate_jobs: [...rows.keys()].filter((id) => !nOf.has(id)).length,
        key_limit_exceeded: sampler.overLimit.length,
        key_limits_wrong: sampler.limitsWrong.length,
        key_slots_left: slotsLeft,
        group_counts_left: groupCountsLeft,
        // distinct, over every sample and the end's check
        invariant_violations: sampler.violations.size,
        // the first few, so a broken run says what broke
        invariant_violation_examples: [...sampler.violations].slice(0, 5).join(' | '),
        invariant_violations_at_end: finalViolations.length,
        ...checked,
        produced_at_s: producedS,
        drained_at_s: drainedS,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await killer.stop();
      await changing.catch(() => {});
      await rating.catch(() => {});
      await sampler.stop().catch(() => {});
      consumers.killAll();
      await stack.close();
    }
  },
};
