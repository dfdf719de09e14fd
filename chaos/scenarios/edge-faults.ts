import { createWorker } from '../../src/edge/worker.js';
import { accountForJobs } from '../lib/edge-accounting.js';
import { startEdgeRig } from '../lib/edge-rig.js';
import { CHAOS_EVENTS_MAX_LEN } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

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
      const rig = await startEdgeRig(ctx, QUEUE);
      const { jobs, rate, raw, queue, proxy, injected, runs } = rig;
      const started = performance.now();
      const env = rig.env(drainOnEnqueueMs);
      const worker = createWorker({
        handlers: {
          // the result is the payload's n doubled, so the check after the run knows what each row holds
          [QUEUE]: (job: { id: string; payload: { n: number } }) => {
            rig.ran(job.id, Date.now());
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
        // a cap far above the run's entries: the stream keeps every event, checked after the run
        await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
        // clients enqueue one job at a time (several clients at once); a client retries a failed
        // request with the same key
        const { acknowledged, gaveUp, clientRetries } = await rig.enqueueAll(async (n) => {
          const res = await worker.fetch(
            rig.enqueueRequest(n),
            env,
            ctxWait,
          );
          return res.status;
        });
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
        const accounted = await accountForJobs(raw, queue, jobs, gaveUp, runs, injected);
        return {
          scenario: name,
          jobs,
          faults: `${Math.round(rate * 100)}% each of 500, dropped reply, stall, reset`,
          injected: { ...proxy.counts() },
          acknowledged,
          enqueue_gave_up: gaveUp,
          client_retries: clientRetries,
          completed: counts.completed,
          // attempts used up on leases lost to the faults (3 by default): dead, as designed
          dead: counts.dead,
          not_finished: counts.pending + counts.scheduled + counts.active,
          ...accounted,
          duration_s: Math.round((performance.now() - started) / 100) / 10,
        };
      } finally {
        await rig.close();
      }
    },
  };
}
