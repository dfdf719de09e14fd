import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { seededRandom } from '../../src/node/bridge/fault-proxy.js';
import { Queue } from '../../src/queue/queue.js';
import type { StepRecord } from '../../src/steps/steps.js';
import { checkFlowLinks } from '../../test/flow-links.js';
import { checkInvariants } from '../../test/invariants.js';
import { ChildConsumers, ConsumerKiller } from '../lib/child-consumer.js';
import { startDurableBridge, untilAnswered } from '../lib/durable-stack.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, readAllEvents } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';
import {
  COUNTED_STEPS,
  type StepExecution,
  type StepFailure,
  STEPS_EVENT,
  STEPS_KIDS,
  STEPS_QUEUE,
  type StepsPayload,
  stepsHandler,
  stepsKeys,
  stepsKidHandler,
} from '../lib/steps-jobs.js';

const QUEUES = [STEPS_QUEUE, STEPS_KIDS];
/** How long a sent event is kept for waits that begin after it: longer than any job takes to reach its wait. */
const KEEP_MS = 600_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A planned job: its payload, its id, and the event its pair is sent (pair m: jobs 2m and 2m + 1). */
interface Planned {
  readonly id: string;
  readonly payload: StepsPayload;
  /** The event its wait must take (`go-<m>`), or undefined: its wait must time out. */
  readonly eventId: string | undefined;
}

/** The data of pair m's event, the same on every send of it. */
const eventData = (m: number): { key: string; m: number } => ({ key: `k${m}`, m });

/**
 * Durable steps under faults: jobs written as steps (chaos/lib/steps-jobs.ts: `step.run` `a`, a
 * side effect counted by an INCR outside the queue's keyspace; a durable sleep of 50-400 ms; a
 * wait for an event matched by the job's key, with a timeout; for a third of them, an invoke of a
 * child in a second queue; then `step.run` `z`, counted too), run at once by the edge (the
 * Worker's code, `createWorker` on Node, its scheduled events back to back, through the fault
 * proxy in front of `emq bridge`: 500 before a request runs, the reply dropped after it ran, the
 * connection reset) and by Node consumers in three child processes (chaos/children/steps-consumer.ts),
 * one SIGKILLed by its PID and replaced every 800 ms (a child takes 1-2.5 s to start: killed
 * faster, they would hardly run), all on a redis-server of the
 * scenario's own (`appendonly yes`, `appendfsync always`) SIGKILLed and started again on its files
 * under load. Half of the pairs of jobs share a key and are sent their event, once each, at a
 * random moment up to 1.5 s after both are enqueued (before their waits begin, often: the send's
 * keep window must hand it to them), straight through ioredis or through the Worker's HTTP route
 * behind the faults, a failed send sent again with its id; the others' waits time out.
 *
 * Promised (must be 0), read from Redis, not from logs: every job completed (`jobs_lost`,
 * `not_finished`, `dead_unexpected`); a counted step's function ran more than once only when a run
 * of it was cut off before its result was recorded: its process was killed after it ran, or its
 * `step.run` threw in that run (the record's write lost or fenced: a fault, a restart, a lapsed
 * lease) (`reruns_unexplained`; `double_runs` is the extra runs, reported); no sleep over before
 * its due time, by its record (`finishedAt` against `until`), by the next step's start, by the
 * job's next `active` event, and no wait timed out before its timeout (`early_resumes`); every
 * event taken by both jobs of its pair and no other, once each, every run of a job seeing the one
 * event its wait recorded (`events_not_once`); every wait without an event timed out with null
 * (`waits_wrong`); every step record as the handler left it (`step_records_wrong`: `a`, `nap`,
 * `go`, `child`, `z` done, in order, an invoke's child completed with its result); the keyspace
 * checker on both queues, flow links (test/flow-links.ts), results and `completed` events.
 */
export const stepsFaults: Scenario = {
  name: 'steps-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const pairs = ctx.quick ? 150 : 600;
    const pairEveryMs = ctx.quick ? 150 : 100;
    const restarts = ctx.quick ? 1 : 3;
    const killEveryMs = 800;
    // one restart in quick mode, three in full, spread over the enqueues
    const rate = ctx.quick ? 0.08 : 0.12;
    const started = performance.now();
    const stack = await startDurableBridge(ctx, rate);
    const { raw, direct, token, proxy } = stack;
    const queue = new Queue<StepsPayload>(direct, STEPS_QUEUE, { keepCompletedMs: -1 });
    const kids = new Queue<{ n: number }>(direct, STEPS_KIDS, { keepCompletedMs: -1 });

    // the edge: the Worker's code over the proxy, its side effects and notes straight to Redis
    const edgeFailures: StepFailure[] = [];
    const env: WorkerEnv = {
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: token,
      EMQ_TOKEN: 'chaos',
      EMQ_DRAIN_ON_ENQUEUE_MS: '0',
      EMQ_BEAT_DEADLINE_MS: '2000',
      EMQ_JOB_TIMEOUT_MS: '1000',
      EMQ_LEASE_MARGIN_MS: '1000',
      EMQ_REAP_EVERY_MS: '500',
    };
    const worker = createWorker({
      handlers: { [STEPS_QUEUE]: stepsHandler(raw, 'edge', (f) => void edgeFailures.push(f)), [STEPS_KIDS]: stepsKidHandler },
      queueOptions: { keepCompletedMs: -1 },
      log: () => {},
    });
    let edgeEvents = 0;
    let edgeEventsFailed = 0;
    let edgeOn = false;
    let edge: Promise<void> = Promise.resolve();

    // Node: consumer processes, one killed and replaced every killEveryMs
    const consumers = new ChildConsumers('steps-consumer.ts', [stack.redis.url]);
    // kept by the runs' `by`: `node:<pid>`
    const killer = new ConsumerKiller<string>(consumers, killEveryMs, { keyOf: (pid) => `node:${pid}` });
    const { killedAt } = killer;

    try {
      for (const q of [queue, kids]) await q.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      edgeOn = true;
      // two scheduled events at a time, as two cron triggers' invocations overlap
      edge = Promise.all(
        [0, 1].map(async () => {
          while (edgeOn) {
            edgeEvents++;
            await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, { waitUntil: () => {} }).catch(() => void edgeEventsFailed++);
          }
        }),
      ).then(() => {});
      killer.start();

      // the plan, from the seed: pair m's two jobs share key k<m> and get event go-<m> when sent
      const rand = seededRandom(ctx.seed);
      const plans: Planned[] = [];
      const sendAfter: Array<number | undefined> = [];
      for (let m = 0; m < pairs; m++) {
        const send = rand() < 0.5;
        sendAfter.push(send ? Math.floor(rand() * 1_500) : undefined);
        for (const n of [2 * m, 2 * m + 1]) {
          plans.push({
            id: `JOB:s${n}`,
            eventId: send ? `go-${m}` : undefined,
            payload: {
              n,
              key: send ? `k${m}` : `q${n}`,
              sleepMs: 50 + Math.floor(rand() * 351),
              timeoutMs: send ? 120_000 : 300 + Math.floor(rand() * 1_200),
              invoke: rand() < 1 / 3,
              workMs: 5 + Math.floor(rand() * 46),
            },
          });
        }
      }

      // the sends: straight through ioredis or through the Worker's HTTP route behind the faults,
      // each sent again with its id until it is answered
      let sendRetries = 0;
      let sendsGaveUp = 0;
      let resumedAtSend = 0;
      const sendEvent = async (m: number): Promise<void> => {
        const viaEdge = m % 2 === 1;
        for (let attempt = 0; attempt < 40; attempt++) {
          if (attempt > 0) {
            sendRetries++;
            await sleep(100);
          }
          try {
            if (viaEdge) {
              const res = await worker.fetch(
                new Request(`http://edge/v1/queues/${STEPS_QUEUE}/events/${STEPS_EVENT}`, {
                  method: 'POST',
                  headers: { Authorization: 'Bearer chaos', 'Content-Type': 'application/json' },
                  body: JSON.stringify({ data: eventData(m), id: `go-${m}`, keepMs: KEEP_MS }),
                }),
                env,
                { waitUntil: () => {} },
              );
              if (res.status !== 200) continue;
              resumedAtSend += ((await res.json()) as { resumed: number }).resumed;
            } else {
              resumedAtSend += (await queue.sendEvent(STEPS_EVENT, eventData(m), { id: `go-${m}`, keepMs: KEEP_MS })).resumed;
            }
            return;
          } catch {
            // a failed send: sent again with its id
          }
        }
        sendsGaveUp++;
      };

      // the producer: a pair at a time, each add sent again with its id until answered; Redis
      // restarted meanwhile
      const acknowledged = new Set<string>();
      let addRetries = 0;
      const sends: Array<Promise<void>> = [];
      const produce = (async () => {
        for (let m = 0; m < pairs; m++) {
          for (const plan of plans.slice(2 * m, 2 * m + 2)) {
            await untilAnswered(() => queue.add(plan.payload, { id: plan.id, maxAttempts: 10, backoff: 20 }), () => addRetries++);
            acknowledged.add(plan.id);
          }
          const after = sendAfter[m];
          if (after !== undefined) sends.push(sleep(after).then(() => sendEvent(m)));
          await sleep(pairEveryMs);
        }
      })();
      const restartTimes = await stack.restartRedis(restarts, pairs * pairEveryMs);
      await produce;
      await Promise.all(sends);

      // the kills go on a while, then stop; the faults stop once both queues are settled or time
      // is up, and the queues drain
      const settled = async (): Promise<boolean> => {
        for (const q of [queue, kids]) {
          const c = (await q.stats()).counts;
          if (c.pending + c.scheduled + c.active + c.waiting + c.awaiting > 0) return false;
          if ((await raw.zcard(`emq:{${q.name}}:outbox`)) > 0) return false;
        }
        return true;
      };
      await sleep(ctx.quick ? 3_000 : 15_000);
      await killer.stop();
      const drainUntil = performance.now() + (ctx.quick ? 20_000 : 60_000);
      while (!(await settled()) && performance.now() < drainUntil) await sleep(200);
      proxy.setFaults({});
      const cleanUntil = performance.now() + 30_000;
      while (!(await settled()) && performance.now() < cleanUntil) await sleep(200);
      edgeOn = false;
      await edge;
      consumers.killAll();

      // every row, step record, side effect and event, from Redis
      const rowsOf = async (name: string): Promise<Map<string, { state: string; result: string | undefined }>> => {
        const prefix = `emq:{${name}}:job:`;
        const rows = new Map<string, { state: string; result: string | undefined }>();
        for (const key of await raw.keys(`${prefix}*`)) {
          const [s, r] = await raw.hmget(key, 's', 'r');
          rows.set(key.slice(prefix.length), { state: s ?? '', result: r ?? undefined });
        }
        return rows;
      };
      const rows = await rowsOf(STEPS_QUEUE);
      const kidRows = await rowsOf(STEPS_KIDS);
      const nodeFailures = (await raw.lrange(stepsKeys.failures, 0, -1)).map((f) => JSON.parse(f) as StepFailure);
      const failed = new Set([...edgeFailures, ...nodeFailures].map((f) => `${f.id}|${f.step}|${f.token}|${f.by}`));
      /** Per job, the times of its `active` events. */
      const actives = new Map<string, number[]>();
      for (const e of await readAllEvents(queue as Queue<unknown>)) {
        if (e.event === 'active') actives.set(e.jobId, [...(actives.get(e.jobId) ?? []), e.time]);
      }

      let jobsLost = 0;
      let notFinished = 0;
      let dead = 0;
      let doubleRuns = 0;
      const doubleRunsBy = { kill: 0, record_not_written: 0 };
      let unexplained = 0;
      let earlySleeps = 0;
      let earlyTimeouts = 0;
      let eventsNotOnce = 0;
      let waitsWrong = 0;
      let recordsWrong = 0;
      let waitsTimedOut = 0;
      let invoked = 0;
      const executions = { edge: 0, node: 0 };
      const sleepLag: number[] = [];
      /** Why each broken count was counted, printed with STEPS_VERBOSE=1. */
      const why: string[] = [];
      const takers = new Map<string, string[]>();
      const expected = new Map<string, unknown>();
      for (const plan of plans) {
        const { id, payload } = plan;
        if (!acknowledged.has(id)) continue;
        const row = rows.get(id);
        if (!row) {
          jobsLost++;
          why.push(`lost ${id}`);
          continue;
        }
        if (row.state === 'dead') dead++;
        else if (row.state !== 'completed') notFinished++;
        if (row.state !== 'completed') why.push(`${id} ${row.state}`);
        const steps = (await queue.getJob(id))?.steps ?? [];
        const byName = new Map<string, StepRecord>(steps.map((s) => [s.name, s]));
        const want = ['a', 'nap', 'go', ...(payload.invoke ? ['child'] : []), 'z'];
        const done = row.state === 'completed';
        if (done && (steps.map((s) => s.name).join() !== want.join() || steps.some((s, i) => s.index !== i + 1))) {
          recordsWrong++;
          why.push(`${id} steps ${steps.map((s) => `${s.index}:${s.name}`).join(',')}`);
        }

        // the counted steps: each run of the function but the last was cut off before its record
        for (const name of COUNTED_STEPS) {
          const count = Number((await raw.get(stepsKeys.count(id, name))) ?? 0);
          const runs = (await raw.lrange(stepsKeys.runs(id, name), 0, -1)).map((r) => JSON.parse(r) as StepExecution).sort((a, b) => a.at - b.at);
          for (const run of runs) executions[run.by === 'edge' ? 'edge' : 'node']++;
          const record = byName.get(name);
          if (done && (record?.state !== 'done' || count < 1 || runs.length !== count || JSON.stringify(record.result) !== JSON.stringify({ n: payload.n, step: name }))) {
            recordsWrong++;
            why.push(`${id} step ${name}: ${JSON.stringify(record)}, ${count} side effects, ${runs.length} runs listed`);
          }
          doubleRuns += Math.max(0, count - 1);
          for (const [i, run] of runs.slice(0, -1).entries()) {
            const kill = killedAt.get(run.by);
            if (kill !== undefined && kill >= run.at && kill <= runs[i + 1]!.at) doubleRunsBy.kill++;
            else if (failed.has(`${id}|${name}|${run.token}|${run.by}`)) doubleRunsBy.record_not_written++;
            else {
              unexplained++;
              why.push(`${id} step ${name} ran again: ${runs.map((r) => `${r.by}#${r.token}@${r.at}`).join(', ')}, kill ${kill}`);
            }
          }
        }

        // the sleep: over at or after its due time, by its record, the next step and the next claim
        const nap = byName.get('nap');
        const go = byName.get('go');
        if (nap?.until !== undefined && nap.finishedAt !== undefined && nap.startedAt !== undefined) {
          const claims = (actives.get(id) ?? []).filter((t) => t >= nap.startedAt!);
          const early = nap.finishedAt < nap.until || (go?.startedAt !== undefined && go.startedAt < nap.until) || (claims.length > 0 && claims[0]! < nap.until);
          if (early) {
            earlySleeps++;
            why.push(`${id} woke early: ${JSON.stringify(nap)}, next step at ${go?.startedAt}, next claim at ${claims[0]}`);
          }
          sleepLag.push(nap.finishedAt - nap.until);
        } else if (done) {
          recordsWrong++;
          why.push(`${id} nap: ${JSON.stringify(nap)}`);
        }

        // the wait: the pair's event, taken once, or a timeout with null; every run saw the same
        const seen = (await raw.lrange(stepsKeys.seen(id), 0, -1)).map((s) => (JSON.parse(s) as { got: unknown }).got);
        const got = plan.eventId === undefined ? null : eventData(Math.floor(payload.n / 2));
        if (go?.eventId !== undefined) takers.set(go.eventId, [...(takers.get(go.eventId) ?? []), id]);
        if (seen.some((s) => JSON.stringify(s) !== JSON.stringify(got))) {
          if (plan.eventId === undefined) waitsWrong++;
          else eventsNotOnce++;
          why.push(`${id} runs saw ${JSON.stringify(seen)}, want ${JSON.stringify(got)}`);
        }
        if (plan.eventId === undefined) {
          if (go?.state === 'timed-out') waitsTimedOut++;
          if (done && (go?.state !== 'timed-out' || go.result !== undefined || go.eventId !== undefined)) {
            waitsWrong++;
            why.push(`${id} wait without an event: ${JSON.stringify(go)}`);
          }
          if (go?.until !== undefined && go.finishedAt !== undefined && go.finishedAt < go.until) {
            earlyTimeouts++;
            why.push(`${id} timed out early: ${JSON.stringify(go)}`);
          }
        } else if (done && (go?.state !== 'done' || go.eventId !== plan.eventId || JSON.stringify(go.result) !== JSON.stringify(got))) {
          eventsNotOnce++;
          why.push(`${id} wait for ${plan.eventId}: ${JSON.stringify(go)}`);
        }

        // the invoke: its child completed, with its result
        let child: unknown = null;
        if (payload.invoke) {
          invoked++;
          const record = byName.get('child');
          const kid = record?.child ? kidRows.get(record.child.id) : undefined;
          child = { n: payload.n * 10 };
          if (done && (record?.state !== 'done' || kid?.state !== 'completed' || kid.result !== JSON.stringify(child))) {
            recordsWrong++;
            why.push(`${id} child: ${JSON.stringify(record)}, its row ${JSON.stringify(kid)}`);
          }
        }
        expected.set(id, { n: payload.n, got, child });
      }
      // each event's takers: the two jobs of its pair, no other
      for (const [m, after] of sendAfter.entries()) {
        if (after === undefined) continue;
        const took = (takers.get(`go-${m}`) ?? []).sort();
        if (took.join() !== [`JOB:s${2 * m}`, `JOB:s${2 * m + 1}`].join()) {
          eventsNotOnce++;
          why.push(`go-${m} taken by ${took.join(',') || 'nobody'}`);
        }
      }
      for (const eventId of takers.keys()) if (!/^go-\d+$/.test(eventId)) eventsNotOnce++;
      const kidsDead = [...kidRows.values()].filter((r) => r.state === 'dead').length;
      const kidsNotFinished = [...kidRows.values()].filter((r) => r.state !== 'completed' && r.state !== 'dead').length;
      const planned = new Set(plans.map((p) => p.id));

      let violations = 0;
      const checked = { results_wrong: 0, completed_events_not_once: 0, events_out_of_order: 0, events: 0, events_stream_trimmed: 0 };
      for (const [q, rowsHere, want] of [
        [queue, rows, (id: string) => expected.get(id)],
        [kids, kidRows, (id: string) => ({ n: Number(/^JOB:s(\d+)\./.exec(id)?.[1]) * 10 })],
      ] as const) {
        violations += (await checkInvariants(raw, q.name)).length;
        const mine = [...rowsHere].map(([id, row]) => ({ id, ...row }));
        const c = await checkResultsAndEvents(q as Queue<unknown>, mine, want, await eventsStreamTrimmed(raw, q.name));
        for (const k of Object.keys(checked) as Array<keyof typeof checked>) checked[k] += c[k];
      }
      const links = await checkFlowLinks(raw, QUEUES);
      if (process.env.STEPS_VERBOSE) console.log([...why, ...links].slice(0, 60).join('\n'));
      sleepLag.sort((a, b) => a - b);
      const sent = sendAfter.filter((s) => s !== undefined).length;
      return {
        scenario: 'steps-faults',
        jobs: plans.length,
        faults: `the edge through ${Math.round(rate * 100)}% each of 500 and dropped reply, ${Math.round((rate / 3) * 100)}% reset; three Node consumer processes, one SIGKILLed every ${killEveryMs} ms (${killedAt.size} kills); redis-server SIGKILLed and restarted ${restartTimes.length} time(s), appendfsync always`,
        injected: { ...proxy.counts() },
        kills: killedAt.size,
        restarts: restartTimes.length,
        acknowledged: acknowledged.size,
        add_retries: addRetries,
        completed: [...rows.values()].filter((r) => r.state === 'completed').length,
        dead,
        invoked,
        children: kidRows.size,
        events_sent: sent,
        send_retries: sendRetries,
        sends_gave_up: sendsGaveUp,
        // a wait that began before its event was resumed by the send; one that began after took it from the keep window
        waits_resumed_by_send: resumedAtSend,
        waits_took_kept_event: 2 * sent - resumedAtSend,
        waits_timed_out: waitsTimedOut,
        step_executions: executions,
        double_runs: doubleRuns,
        double_runs_by: doubleRunsBy,
        step_failures_noted: failed.size,
        sleep_lag_ms: sleepLag.length > 0 ? { median: sleepLag[sleepLag.length >> 1]!, p99: sleepLag[Math.floor(sleepLag.length * 0.99)]!, max: sleepLag.at(-1)! } : {},
        edge_events: edgeEvents,
        edge_events_failed: edgeEventsFailed,
        jobs_lost: jobsLost,
        duplicate_jobs: [...rows.keys()].filter((id) => !planned.has(id)).length,
        not_finished: notFinished + kidsNotFinished,
        dead_unexpected: dead + kidsDead,
        reruns_unexplained: unexplained,
        early_resumes: earlySleeps + earlyTimeouts,
        events_not_once: eventsNotOnce,
        waits_wrong: waitsWrong,
        step_records_wrong: recordsWrong,
        flow_link_violations: links.length,
        invariant_violations: violations,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      await killer.stop();
      edgeOn = false;
      await edge;
      consumers.killAll();
      await stack.close();
    }
  },
};
