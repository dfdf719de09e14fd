import { Redis } from 'ioredis';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { ChildConsumers } from '../lib/child-consumer.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-kill';
const RUNS = 'chaos:kill:runs';

/**
 * Consumers killed during a mixed load: four consumers in child processes on one queue (groups
 * with limits, delayed jobs, jobs that fail once, that retry after a delay, that fail for good),
 * one of them SIGKILLed (by its PID) every few hundred ms and replaced. At least once, never two
 * holders of one attempt: every handler run records its (job, lease token); a token run twice
 * would be two holders at once. Every job ends completed or dead; a completed one holds the result
 * its handler returned (its n doubled), and the events stream has its one `completed`, after its
 * last `active`.
 */
export const killedConsumers: Scenario = {
  name: 'killed-consumers',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 600 : 6_000;
    const started = performance.now();
    const raw = new Redis(ctx.redisUrl);
    const transport = IoredisTransport.connect(ctx.redisUrl);
    const queue = new Queue<{ n: number; ms: number; fail?: string }>(transport, QUEUE, { keepCompletedMs: -1 });
    const consumers = new ChildConsumers('consumer.ts', [ctx.redisUrl, QUEUE, RUNS]);
    let kills = 0;
    try {
      const old = await raw.keys(`emq:{${QUEUE}}:*`);
      if (old.length > 0) await raw.del(...old);
      await raw.del(RUNS);
      // a cap far above the run's entries: the stream keeps every event, checked after the run
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      for (const g of ['g0', 'g1', 'g2']) await queue.setGroupLimit(g, 2);
      await Promise.all([0, 1, 2, 3].map(() => consumers.spawn()));
      const kinds = [undefined, undefined, undefined, 'retry', 'later', 'dead'] as const;
      for (let i = 0; i < jobs; i += 100) {
        await queue.addBulk(
          Array.from({ length: Math.min(100, jobs - i) }, (_, j) => {
            const n = i + j;
            const fail = kinds[n % kinds.length];
            return {
              payload: { n, ms: 20 + (n % 150), ...(fail ? { fail } : {}) },
              ...(n % 3 === 0 ? {} : { group: `g${n % 3}` }),
              ...(n % 10 === 0 ? { delayMs: 200 + (n % 7) * 100 } : {}),
              backoff: 50,
            };
          }),
        );
      }
      // kill one consumer every 200 ms and start another, until the queue is done or time is up
      const until = performance.now() + (ctx.quick ? 90_000 : 300_000);
      let counts = (await queue.stats()).counts;
      while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const victim = [...consumers.live][Math.floor(Math.random() * consumers.live.size)];
        // kills stop a while before the time is up, so the last re-runs can finish
        if (victim?.pid !== undefined && performance.now() < until - 20_000) {
          process.kill(victim.pid, 'SIGKILL');
          kills++;
          await consumers.spawn();
        }
        counts = (await queue.stats()).counts;
      }
      const runs = await raw.hgetall(RUNS);
      // jobs that fail their first attempt on purpose run twice by design
      const designed = new Map<string, number>();
      const rows: FinishedRow[] = [];
      const nOf = new Map<string, number>();
      for (const key of await raw.keys(`emq:{${QUEUE}}:job:*`)) {
        const [d, s, r] = await raw.hmget(key, 'd', 's', 'r');
        const { n, fail } = JSON.parse(d ?? '{}') as { n: number; fail?: string };
        const id = key.slice(`emq:{${QUEUE}}:job:`.length);
        designed.set(id, fail === 'retry' || fail === 'later' ? 2 : 1);
        rows.push({ id, state: s ?? '', result: r ?? undefined });
        nOf.set(id, n);
      }
      const perJob = new Map<string, number>();
      let twoHolders = 0;
      for (const [key, value] of Object.entries(runs)) {
        if (Number(value) > 1) twoHolders++;
        const id = key.split('|')[0]!;
        perJob.set(id, (perJob.get(id) ?? 0) + 1);
      }
      const violations = await checkInvariants(raw, QUEUE);
      const checked = await checkResultsAndEvents(queue, rows, (id) => ({ n: nOf.get(id)! * 2 }), await eventsStreamTrimmed(raw, QUEUE));
      return {
        scenario: 'killed-consumers',
        jobs,
        faults: `a consumer of four SIGKILLed every 200 ms (${kills} kills)`,
        jobs_lost: jobs - counts.completed - counts.dead - (counts.pending + counts.scheduled + counts.active),
        duplicate_jobs: 0,
        completed: counts.completed,
        dead: counts.dead,
        not_finished: counts.pending + counts.scheduled + counts.active,
        // a run cut short by a kill runs again once its lease lapses: at least once, as promised
        rerun_after_kill: [...perJob].filter(([id, c]) => c > (designed.get(id) ?? 1)).length,
        reruns_unexplained: twoHolders,
        invariant_violations: violations.length,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      consumers.killAll();
      await transport.close();
      raw.disconnect();
    }
  },
};
