import { JobNotFoundError, JobStateError } from '../../src/errors.js';
import { seededRandom } from '../../src/node/bridge/fault-proxy.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { accountForCancels, type CancelRow, type CancelSent, HEAR_WITHIN_MS, type JobPlan } from '../lib/cancel-accounting.js';
import { CANCEL_QUEUE, type CancelPayload, ON_ABORT, resultOf } from '../lib/cancel-jobs.js';
import { ChildConsumers, ConsumerKiller } from '../lib/child-consumer.js';
import { startDurableStack, untilAnswered } from '../lib/durable-stack.js';
import { Freezes } from '../lib/freezes.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow, readAllEvents } from '../lib/results-events.js';
import type { RunEnd, RunStart } from '../lib/run-log.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** The group the bulk cancel (`cancelJobs`) takes its jobs from, all delayed past the run's end. */
const BULK_GROUP = 'gb';
const BULK_REASON = 'chaos:bulk';
/** How long a cancel is sent again, after a failure, before its sender gives up on it. */
const CANCEL_GIVE_UP_MS = 30_000;

/** When a target's cancel is sent: soon after its enqueue, once it is seen running, or at a random later moment. */
type When = 'soon' | 'running' | 'late';

/** A planned job: its id, payload and options, and its cancel if it is a target. */
interface Planned {
  readonly id: string;
  readonly n: number;
  readonly payload: CancelPayload;
  readonly group: string | undefined;
  readonly delayMs: number | undefined;
  readonly target?: { readonly when: When; readonly afterMs: number; readonly repeat: boolean };
}

/**
 * Cancel under faults: jobs (half in groups limited to 2 running each, a fifth delayed, some that
 * fail their first attempt or take a durable sleep first, some running long) run by three Node
 * consumer processes (chaos/children/cancel-consumer.ts), one SIGKILLed by its PID and replaced
 * every 800 ms, on a redis-server of the scenario's own (`appendonly yes`, `appendfsync always`)
 * SIGKILLed and started again on its files under load. Meanwhile a random two-fifths of the jobs
 * are cancelled (`queue.cancel`, each with a reason of its own) through the edge path: a Queue
 * over UpstashTransport, through the fault proxy in front of `emq bridge` (500 before a request
 * runs, the reply dropped after it ran, the connection reset), each cancel sent again until
 * answered (so a cancel often runs twice), some a moment after their enqueue (pending or
 * scheduled: delayed, in a retry's backoff, asleep at a step), most once they are seen running, the
 * rest at a random later moment (found running, still waiting, or finished); a seventh of them
 * sent once more after their answer. A group of jobs delayed past the run's end is cancelled in
 * bulk (`cancelJobs({ state: 'scheduled', group })`) through the same path. A few long jobs (2 in
 * quick mode, 5 in full) are cancelled while their holder is cut off: once one runs, its process
 * is frozen (SIGSTOP) and every subscriber connection cut (`CLIENT KILL TYPE pubsub`: the notice
 * is lost to it), the cancel sent, and the holder thawed once the reaper has ended the job
 * cancelled (its lease lapsed): its run must then be told, at its next renewal. Every handler run logs
 * its start and end in a file (chaos/lib/run-log.ts) and stops at once when its signal aborts;
 * told of a cancel, it then throws the reason, returns as if done, fails for good, throws
 * RateLimitedError or suspends at a sleep (each settle must end the job cancelled).
 *
 * Promised (must be 0), read from Redis and the run log (chaos/lib/cancel-accounting.ts): every
 * job completed or cancelled, none lost or dead; every job whose cancel was answered `cancelled`
 * or `cancelling` ends cancelled, a `finished` answer only for a job completed before it; no job
 * the cancel found unfinished (a `cancelling` or `cancelled` event) claimed or completed after it,
 * and no handler run started after the cancel's answer came back but the run of the claim the
 * cancel found running; no job cancelled that no cancel was sent for, or with another's reason;
 * one `cancelled` event per cancelled job; a run the cancel found told within HEAR_WITHIN_MS of
 * its process's running time (a frozen holder's too, once thawed);
 * onCancelled only for cancelled jobs; every group's active count back to zero; the keyspace
 * checker (with its cancel rule), results and `completed` events.
 */
export const cancelFaults: Scenario = {
  name: 'cancel-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 300 : 2_000;
    const everyMs = ctx.quick ? 15 : 20;
    const bulkJobs = ctx.quick ? 20 : 60;
    const frozenJobs = ctx.quick ? 2 : 5;
    const frozenWorkMs = ctx.quick ? 6_000 : 8_000;
    const groups = Array.from({ length: ctx.quick ? 4 : 6 }, (_, i) => `g${i}`);
    const restarts = ctx.quick ? 1 : 3;
    const killEveryMs = 800;
    const rate = ctx.quick ? 0.08 : 0.12;
    const started = performance.now();
    const stack = await startDurableStack<CancelPayload>(ctx, { queue: CANCEL_QUEUE, tempPrefix: 'echomq-cancel-', faultRate: rate });
    const { raw, queue, edge, proxy, log } = stack;

    // Node: consumer processes, one killed and replaced every killEveryMs (a frozen holder spared)
    const consumers = new ChildConsumers('cancel-consumer.ts', [stack.redis.url, log.path]);
    const freezes = new Freezes();
    const killer = new ConsumerKiller(consumers, killEveryMs, { spare: (pid) => freezes.spared(pid) });
    const { killedAt } = killer;

    try {
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      for (const g of groups) await queue.setGroupLimit(g, 2);

      // the plan, from the seed
      const rand = seededRandom(ctx.seed);
      const between = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const plans: Planned[] = [];
      for (let n = 0; n < jobs; n++) {
        const group = rand() < 0.5 ? groups[Math.floor(rand() * groups.length)] : undefined;
        const delayMs = rand() < 0.2 ? between(300, 3_000) : undefined;
        const payload: CancelPayload = {
          n,
          workMs: rand() < 0.15 ? between(800, 2_000) : between(50, 400),
          onAbort: ON_ABORT[Math.floor(rand() * ON_ABORT.length)]!,
          ...(rand() < 0.1 ? { failOnce: true } : {}),
          ...(rand() < 0.1 ? { napMs: between(200, 800) } : {}),
        };
        let target: Planned['target'];
        if (rand() < 0.4) {
          const w = rand();
          const when: When = w < 0.3 ? 'soon' : w < 0.75 ? 'running' : 'late';
          target = { when, afterMs: when === 'soon' ? between(0, 300) : when === 'running' ? between(0, 150) : between(0, 4_000), repeat: rand() < 1 / 7 };
        }
        plans.push({ id: `JOB:c${n}`, n, payload, group, delayMs, ...(target ? { target } : {}) });
      }
      const bulk: Planned[] = Array.from({ length: bulkJobs }, (_, i) => ({
        id: `JOB:b${i}`,
        n: jobs + i,
        payload: { n: jobs + i, workMs: 50, onAbort: 'throw' },
        group: BULK_GROUP,
        // past the run's end: they stay scheduled until the bulk cancel
        delayMs: 600_000,
      }));
      // long runs whose holders are frozen past their lease while they are cancelled
      const frozen: Planned[] = Array.from({ length: frozenJobs }, (_, i) => ({
        id: `JOB:f${i}`,
        n: jobs + bulkJobs + i,
        payload: { n: jobs + bulkJobs + i, workMs: frozenWorkMs, onAbort: 'throw' },
        group: undefined,
        delayMs: undefined,
      }));

      // each add sent again with its id until answered (Redis restarts meanwhile)
      const acknowledged = new Set<string>();
      let addRetries = 0;
      const add = async (plan: Planned): Promise<void> => {
        await untilAnswered(
          () =>
            queue.add(plan.payload, {
              id: plan.id,
              ...(plan.group ? { group: plan.group } : {}),
              ...(plan.delayMs ? { delayMs: plan.delayMs } : {}),
              maxAttempts: 25,
              backoff: 300,
            }),
          () => addRetries++,
        );
        acknowledged.add(plan.id);
      };
      for (const plan of bulk) await add(plan);

      // a cancel through the edge, sent again after a failure until answered
      const sendCancel = async (id: string, reason: string): Promise<CancelSent> => {
        const sentAt = Date.now();
        let tries = 0;
        while (Date.now() - sentAt < CANCEL_GIVE_UP_MS) {
          tries++;
          try {
            const { state } = await edge.cancel(id, { reason });
            return { answer: state, sentAt, answeredAt: Date.now(), tries };
          } catch (error) {
            if (error instanceof JobStateError) return { answer: 'finished', sentAt, answeredAt: Date.now(), tries };
            if (error instanceof JobNotFoundError) return { answer: 'missing', sentAt, answeredAt: Date.now(), tries };
            await sleep(100);
          }
        }
        return { answer: 'unanswered', sentAt, answeredAt: Date.now(), tries };
      };
      /** Whether a job's row says it runs (or has finished, or time is up): a 'running' target's moment. */
      const seenRunning = async (id: string): Promise<void> => {
        const until = Date.now() + 30_000;
        while (Date.now() < until) {
          try {
            const s = await raw.hget(`emq:{${CANCEL_QUEUE}}:job:${id}`, 's');
            if (s === 'active' || s === 'completed' || s === 'cancelled' || s === 'dead') return;
          } catch {
            // Redis restarting: look again
          }
          await sleep(30);
        }
      };
      const cancels = new Map<string, { cancel: CancelSent; repeat?: CancelSent }>();
      const cancelLater = async (plan: Planned): Promise<void> => {
        const target = plan.target!;
        if (target.when === 'running') await seenRunning(plan.id);
        await sleep(target.afterMs);
        const reason = `chaos:${plan.n}`;
        const cancel = await sendCancel(plan.id, reason);
        cancels.set(plan.id, { cancel });
        if (target.repeat && cancel.answer !== 'unanswered') cancels.set(plan.id, { cancel, repeat: await sendCancel(plan.id, reason) });
      };

      /**
       * A frozen holder: once the job runs (its start logged, no end, in a live process), its
       * process is frozen (SIGSTOP) and every subscriber connection cut (`CLIENT KILL TYPE pubsub`:
       * the cancel's notice is lost to it, the others subscribe again at once), the job is
       * cancelled through the edge, and the holder stays frozen until the reaper has ended the job
       * cancelled (its lease lapsed) or 8 s passed; thawed, its run must be told at its next
       * renewal. Kept from kills until that run's end is logged.
       */
      const freezeOutcomes: Array<{ id: string; pid: number; reaped: boolean; told: string | undefined }> = [];
      const runOf = (id: string): { start: RunStart | undefined; end: RunEnd | undefined } => {
        const records = log.read().records;
        const start = records.filter((r): r is RunStart => r.k === 's' && r.id === id).at(-1);
        const end = start && records.find((r): r is RunEnd => r.k === 'e' && r.id === id && r.token === start.token && r.pid === start.pid);
        return { start, end };
      };
      const freezeHolder = async (plan: Planned): Promise<void> => {
        const reason = `chaos:${plan.n}`;
        const until = Date.now() + 30_000;
        while (Date.now() < until) {
          await sleep(50);
          const { start, end } = runOf(plan.id);
          const holder = start && !end ? [...consumers.live].find((c) => c.pid === start.pid) : undefined;
          if (!start || !holder || freezes.spared(start.pid) || killedAt.has(start.pid)) continue;
          const pid = start.pid;
          let reaped = false;
          let cancel: CancelSent | undefined;
          try {
            await freezes.during(pid, async () => {
              await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => {});
              cancel = await sendCancel(plan.id, reason);
              const by = Date.now() + 8_000;
              while (!reaped && Date.now() < by) {
                reaped = (await raw.hget(`emq:{${CANCEL_QUEUE}}:job:${plan.id}`, 's').catch(() => null)) === 'cancelled';
                if (!reaped) await sleep(50);
              }
            });
          } catch {
            continue; // it exited before the freeze
          }
          if (cancel) cancels.set(plan.id, { cancel });
          // its run's end, seen before the run is judged: kept from kills until then
          const ended = await freezes.guard(
            pid,
            (async () => {
              const endBy = Date.now() + frozenWorkMs + 5_000;
              for (;;) {
                const run = runOf(plan.id);
                if (run.end || Date.now() > endBy || !consumers.live.has(holder)) return run.start?.token === start.token ? run.end : undefined;
                await sleep(100);
              }
            })(),
          );
          freezeOutcomes.push({ id: plan.id, pid, reaped, told: ended?.abortedBy });
          return;
        }
      };

      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      killer.start();

      // the producer: a job at a time, its cancel (if a target) on its way once it is acknowledged;
      // the bulk cancel half-way; Redis restarted meanwhile
      const sent: Array<Promise<void>> = [];
      // the frozen holders' jobs, spread over the enqueues
      const freezeAt = new Map(frozen.map((f, k) => [Math.floor((jobs * (k + 1)) / (frozenJobs + 1)), f]));
      let bulkCancel: { cancelled: number; cancelling: number; tries: number; answeredAt: number | undefined } = { cancelled: 0, cancelling: 0, tries: 0, answeredAt: undefined };
      const produce = (async () => {
        for (const [i, plan] of plans.entries()) {
          await add(plan);
          if (plan.target) sent.push(cancelLater(plan));
          const f = freezeAt.get(i);
          if (f) {
            await add(f);
            sent.push(freezeHolder(f));
          }
          if (i === Math.floor(jobs / 2)) {
            sent.push(
              (async () => {
                const first = Date.now();
                while (Date.now() - first < CANCEL_GIVE_UP_MS) {
                  bulkCancel.tries++;
                  try {
                    const done = await edge.cancelJobs({ state: 'scheduled', group: BULK_GROUP, reason: BULK_REASON });
                    bulkCancel = { ...bulkCancel, ...done, answeredAt: Date.now() };
                    return;
                  } catch {
                    await sleep(100);
                  }
                }
              })(),
            );
          }
          await sleep(everyMs);
        }
      })();
      const restartTimes = await stack.restartRedis(restarts, jobs * everyMs);
      await produce;
      await Promise.all(sent);

      // the kills go on a while, then stop; the queue drains
      await sleep(ctx.quick ? 2_000 : 8_000);
      await killer.stop();
      await stack.drain(ctx.quick ? 30_000 : 90_000);
      consumers.killAll();

      // every row, event and run
      const prefix = `emq:{${CANCEL_QUEUE}}:job:`;
      const rows = new Map<string, CancelRow & { result: string | undefined }>();
      for (const key of await raw.keys(`${prefix}*`)) {
        const [s, cx, r] = await raw.hmget(key, 's', 'cx', 'r');
        rows.set(key.slice(prefix.length), { state: s ?? '', reason: cx ?? undefined, result: r ?? undefined });
      }
      const events = await readAllEvents(queue as Queue<unknown>);
      const { records, torn } = log.read();
      const jobPlans: JobPlan[] = [
        ...plans.map((p) => ({ id: p.id, reason: `chaos:${p.n}`, ...(cancels.get(p.id) ?? {}) })),
        ...bulk.map((p) => ({ id: p.id, reason: BULK_REASON, ...(bulkCancel.tries > 0 ? { bulk: { answeredAt: bulkCancel.answeredAt } } : {}) })),
        ...frozen.map((p) => ({ id: p.id, reason: `chaos:${p.n}`, ...(cancels.get(p.id) ?? {}) })),
      ];
      if (process.env.CANCEL_VERBOSE) for (const f of freezeOutcomes) console.log(`frozen holder ${f.pid} of ${f.id}: ${f.reaped ? 'reaped' : 'not reaped'} while frozen, ${f.told ? `told (${f.told})` : 'never told'}`);
      const accounted = accountForCancels(jobPlans, acknowledged, rows, events, records, killedAt, freezes);

      const groupCounts = await raw.hgetall(`emq:{${CANCEL_QUEUE}}:gactive`);
      const groupCountsLeft = Object.values(groupCounts).reduce((sum, v) => sum + Math.abs(Number(v)), 0);
      const violations = await checkInvariants(raw, CANCEL_QUEUE);
      if (process.env.CANCEL_VERBOSE && violations.length > 0) console.log(violations.slice(0, 40).join('\n'));
      const nOf = new Map([...plans, ...bulk, ...frozen].map((p) => [p.id, p.n]));
      const finished: FinishedRow[] = [...rows].map(([id, row]) => ({ id, state: row.state, result: row.result }));
      const checked = await checkResultsAndEvents(queue as Queue<unknown>, finished, (id) => resultOf(nOf.get(id) ?? -1), await eventsStreamTrimmed(raw, CANCEL_QUEUE));
      const planned = new Set(nOf.keys());
      const targets = plans.filter((p) => p.target);
      return {
        scenario: 'cancel-faults',
        jobs: plans.length + bulk.length + frozen.length,
        faults: `cancels through the edge (UpstashTransport over emq bridge) through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset; three Node consumer processes, one SIGKILLed every ${killEveryMs} ms (${killedAt.size} kills), ${freezes.count} frozen (SIGSTOP) past their lease while their job was cancelled, every subscriber connection cut then; redis-server SIGKILLed and restarted ${restartTimes.length} time(s), appendfsync always`,
        injected: { ...proxy.counts() },
        kills: killedAt.size,
        restarts: restartTimes.length,
        acknowledged: acknowledged.size,
        add_retries: addRetries,
        grouped: plans.filter((p) => p.group).length,
        delayed: plans.filter((p) => p.delayMs).length,
        targets: targets.length,
        targets_by_when: Object.fromEntries((['soon', 'running', 'late'] as const).map((w) => [w, targets.filter((p) => p.target?.when === w).length])),
        cancels_sent: cancels.size,
        repeats_sent: [...cancels.values()].filter((c) => c.repeat).length,
        bulk_jobs: bulk.length,
        // its answer counts what its last run did: a run whose reply was lost took the jobs first
        bulk_cancel: {
          cancelled: bulkCancel.cancelled,
          cancelling: bulkCancel.cancelling,
          tries: bulkCancel.tries,
          answered: bulkCancel.answeredAt === undefined ? 0 : 1,
          ended_cancelled: bulk.filter((p) => rows.get(p.id)?.state === 'cancelled').length,
        },
        frozen_holders: {
          jobs: frozen.length,
          frozen: freezes.count,
          reaped_while_frozen: freezeOutcomes.filter((f) => f.reaped).length,
          told_after_thaw: freezeOutcomes.filter((f) => f.told !== undefined).length,
        },
        hear_within_ms: HEAR_WITHIN_MS,
        ...accounted,
        run_log_torn_lines: torn,
        duplicate_jobs: [...rows.keys()].filter((id) => !planned.has(id)).length,
        group_counts_left: groupCountsLeft,
        invariant_violations: violations.length,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await killer.stop();
      consumers.killAll();
      await stack.close();
    }
  },
};
