import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { type FaultKind, type InjectedFault, startFaultProxy } from '../../src/node/bridge/fault-proxy.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';


/** Every string in a REST reply, base64-decoded as well (the client asks for base64 strings), joined. */
function replyText(reply: string): string {
  const texts: string[] = [reply];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(Buffer.from(value, 'base64').toString());
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  try {
    walk(JSON.parse(reply));
  } catch {
    // not JSON: the raw text is all there is
  }
  return texts.join('\n');
}

/**
 * Why each job that ran more than once did: the kind of the first fault, after its first run, that
 * hit a request naming the job (a settle or a beat for it in its request, a claim answering it in
 * its reply): what came after is the recovery. `no_fault_names_it` when none did (a lease that
 * lapsed under a slow beat with no fault of its own).
 */
function rerunsByFault(runs: ReadonlyMap<string, readonly number[]>, faults: readonly InjectedFault[]): Record<string, number> {
  const texts = faults
    .map((fault) => ({ kind: fault.kind, at: fault.at, text: `${fault.request}\n${fault.reply ? replyText(fault.reply) : ''}` }))
    .sort((a, b) => a.at - b.at);
  const out: Record<string, number> = {};
  for (const [id, times] of runs) {
    if (times.length < 2) continue;
    // the id whole: JOB:12 is not named by a request for JOB:121
    const named = new RegExp(`${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`);
    const cause = texts.find((t) => t.at >= times[0]! && t.at <= times.at(-1)! && named.test(t.text));
    const why: FaultKind | 'no_fault_names_it' = cause?.kind ?? 'no_fault_names_it';
    out[why] = (out[why] ?? 0) + 1;
  }
  return out;
}

/**
 * The edge path over a faulty network: the Worker's own code (its API and its scheduled drains,
 * `createWorker`) run on Node over @upstash/redis, through a fault proxy in front of `emq bridge`
 * that answers 500, drops replies after Redis ran the request, stalls, or resets, each on a share
 * of the requests. Clients enqueue through the API one at a time, retrying a failure with the
 * same Idempotency-Key; scheduled events drain until every job is completed or dead. Then the
 * faults stop, the queue drains, and every job is accounted for: a completed one holds the result
 * its handler returned (its n doubled), and the events stream has its one `completed`, after its
 * last `active`.
 *
 * `edge-faults` runs the jobs from scheduled events alone (no drain after an enqueue);
 * `edge-drain-faults` lets each enqueue start its short drain as a deployed Worker does, its first
 * beat riding in the enqueue's own request (and a completion held for a request riding with it),
 * so a fault on an enqueue's request also hits the claim and acknowledgements it carried.
 */
export const edgeFaults: Scenario = edgeScenario('edge-faults', 0);
export const edgeDrainFaults: Scenario = edgeScenario('edge-drain-faults', 2_000);

function edgeScenario(name: string, drainOnEnqueueMs: number): Scenario {
  const QUEUE = `chaos-${name.replace(/-faults$/, '')}`;
  return {
    name,
    async run(ctx: ScenarioContext): Promise<ScenarioResult> {
      const jobs = ctx.quick ? 200 : 2_000;
      const rate = ctx.quick ? 0.05 : 0.1;
      const started = performance.now();
      const token = randomBytes(8).toString('hex');
      const raw = new Redis(ctx.redisUrl);
      const direct = IoredisTransport.connect(ctx.redisUrl);
      const queue = new Queue(direct, QUEUE);
      const injected: InjectedFault[] = [];
      const bridge = await startBridge({ redisUrl: ctx.redisUrl, token });
      const proxy = await startFaultProxy({
        target: bridge.url,
        faults: { error500: rate, dropReply: rate, stall: rate, reset: rate },
        stallMs: ctx.quick ? 500 : 3_000,
        seed: ctx.seed,
        onFault: (fault) => void injected.push(fault),
      });
      /** When the handler ran each job id (`Date.now()` per run). */
      const runs = new Map<string, number[]>();
      const env: WorkerEnv = {
        UPSTASH_REDIS_REST_URL: proxy.url,
        UPSTASH_REDIS_REST_TOKEN: token,
        EMQ_TOKEN: 'chaos',
        EMQ_DRAIN_ON_ENQUEUE_MS: String(drainOnEnqueueMs),
        EMQ_BEAT_DEADLINE_MS: '3000',
        EMQ_JOB_TIMEOUT_MS: '500',
        EMQ_LEASE_MARGIN_MS: '1000',
        EMQ_REAP_EVERY_MS: '500',
      };
      const worker = createWorker({
        handlers: {
          // the result is the payload's n doubled, so the check after the run knows what each row holds
          [QUEUE]: (job: { id: string; payload: { n: number } }) => {
            runs.set(job.id, [...(runs.get(job.id) ?? []), Date.now()]);
            return { n: job.payload.n * 2 };
          },
        },
        log: () => {},
      });
      // the drains after enqueues, awaited before the scheduled events take over
      const drains: Array<Promise<unknown>> = [];
      const ctxWait = { waitUntil: (p: Promise<unknown>) => void drains.push(p) };
      const scheduled = () => worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctxWait).catch(() => {});
      try {
        const old = await raw.keys(`emq:{${QUEUE}}:*`);
        if (old.length > 0) await raw.del(...old);
        // a cap far above the run's entries: the stream keeps every event, checked after the run
        await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
        // clients enqueue one job at a time (several clients at once); a client retries a failed
        // request with the same key
        let acknowledged = 0;
        let gaveUp = 0;
        let clientRetries = 0;
        const enqueue = async (n: number): Promise<void> => {
          for (let attempt = 0; attempt < 10; attempt++) {
            if (attempt > 0) clientRetries++;
            try {
              const res = await worker.fetch(
                new Request(`http://edge/v1/queues/${QUEUE}/jobs`, {
                  method: 'POST',
                  headers: { Authorization: 'Bearer chaos', 'Content-Type': 'application/json', 'Idempotency-Key': `job-${n}` },
                  body: JSON.stringify({ payload: { n } }),
                }),
                env,
                ctxWait,
              );
              if (res.status === 201 || res.status === 200) {
                acknowledged++;
                return;
              }
            } catch {
              // a client sees a failure: it retries with the same key
            }
          }
          gaveUp++;
        };
        const clients = ctx.quick ? 4 : 10;
        let next = 0;
        await Promise.all(
          Array.from({ length: clients }, async () => {
            while (next < jobs) await enqueue(next++);
          }),
        );
        while (drains.length > 0) await Promise.allSettled(drains.splice(0));
        // drain under faults, then without them
        const drainUntil = performance.now() + (ctx.quick ? 30_000 : 120_000);
        const stats = async () => (await queue.stats()).counts;
        let counts = await stats();
        while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < drainUntil) {
          await scheduled();
          counts = await stats();
        }
        proxy.setFaults({});
        for (let i = 0; i < 20 && counts.pending + counts.scheduled + counts.active > 0; i++) {
          await scheduled();
          if (counts.active > 0) await new Promise((resolve) => setTimeout(resolve, 500));
          counts = await stats();
        }
        // every row: which job (payload n), its state, claims and result
        const rows: Array<{ id: string; n: number; state: string; attempts: number; result: string | undefined }> = [];
        const prefix = `emq:{${QUEUE}}:job:`;
        for (const key of await raw.keys(`${prefix}*`)) {
          const [d, s, a, r] = await raw.hmget(key, 'd', 's', 'a', 'r');
          const n = (JSON.parse(d ?? '{}') as { n: number }).n;
          rows.push({ id: key.slice(prefix.length), n, state: s ?? '', attempts: Number(a ?? 0), result: r ?? undefined });
        }
        const perN = new Map<number, number>();
        for (const row of rows) perN.set(row.n, (perN.get(row.n) ?? 0) + 1);
        const duplicates = [...perN.values()].reduce((sum, c) => sum + (c - 1), 0);
        const lost = Array.from({ length: jobs }, (_, n) => n).filter((n) => !perN.has(n)).length - gaveUp;
        const rerun = [...runs.values()].filter((times) => times.length > 1).length;
        // a job run again was claimed again: its first lease lapsed (its reply or its settle lost)
        const unexplained = rows.filter((row) => (runs.get(row.id)?.length ?? 0) > row.attempts).length;
        const violations = await checkInvariants(raw, QUEUE);
        const nOf = new Map(rows.map((row) => [row.id, row.n]));
        const checked = await checkResultsAndEvents(queue, rows, (id) => ({ n: nOf.get(id)! * 2 }), await eventsStreamTrimmed(raw, QUEUE));
        return {
          scenario: name,
          jobs,
          faults: `${Math.round(rate * 100)}% each of 500, dropped reply, stall, reset`,
          injected: { ...proxy.counts() },
          acknowledged,
          enqueue_gave_up: gaveUp,
          client_retries: clientRetries,
          jobs_lost: Math.max(0, lost),
          duplicate_jobs: duplicates,
          completed: counts.completed,
          // attempts used up on leases lost to the faults (3 by default): dead, as designed
          dead: counts.dead,
          not_finished: counts.pending + counts.scheduled + counts.active,
          ran_more_than_once: rerun,
          reruns_by_fault: rerunsByFault(runs, injected),
          reruns_unexplained: unexplained,
          invariant_violations: violations.length,
          ...checked,
          duration_s: Math.round((performance.now() - started) / 100) / 10,
        };
      } finally {
        raw.disconnect();
        await direct.close();
        await proxy.close();
        await bridge.close();
      }
    },
  };
}
