import { Redis } from 'ioredis';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionName, partitionOf } from '../../src/partitions/partition-of.js';
import { checkInvariants } from '../../test/invariants.js';
import { ChildConsumers } from '../lib/child-consumer.js';
import { CHAOS_EVENTS_MAX_LEN, checkResultsAndEvents, eventsStreamTrimmed, type FinishedRow } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-parts';
const PARTITIONS = 8;
const RUNS = 'chaos:parts:runs';
const GROUPS = 12;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A partitioned queue (8 partitions) under faults: three consumers in child processes, each over
 * every partition on one subscriber connection, one SIGKILLed (by its PID) and replaced, or every
 * subscriber connection cut (`CLIENT KILL TYPE pubsub`: the doorbells' messages sent meanwhile are
 * lost, the resubscription must wake every partition), or the whole queue paused for 100 ms and
 * resumed, every 250 ms; producers add grouped (12 groups, limit 2 each) and ungrouped jobs, some
 * delayed, in waves. At least once, never two holders of one attempt; every job ends completed
 * with its handler's result, in the partition its group (or id) routes to; every partition's
 * keyspace consistent after.
 */
export const partitionFaults: Scenario = {
  name: 'partition-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 2_000 : 8_000;
    const started = performance.now();
    const raw = new Redis(ctx.redisUrl);
    const transport = IoredisTransport.connect(ctx.redisUrl);
    const queue = new PartitionedQueue<{ n: number; ms: number }>(transport, QUEUE, { partitions: PARTITIONS, keepCompletedMs: -1 });
    const consumers = new ChildConsumers('partition-consumer.ts', [ctx.redisUrl, QUEUE, String(PARTITIONS), RUNS]);
    const faults = { kills: 0, subscriber_cuts: 0, pauses: 0 };
    try {
      for (let i = 0; i < PARTITIONS; i++) {
        const old = await raw.keys(`emq:{${partitionName(QUEUE, i)}}:*`);
        if (old.length > 0) await raw.del(...old);
      }
      await raw.del(RUNS);
      await raw.srem('emq:queues', QUEUE);
      await raw.hdel('{emq:queues}:partitions', QUEUE);
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      for (let g = 0; g < GROUPS; g++) await queue.setGroupLimit(`g${g}`, 2);
      await Promise.all([0, 1, 2].map(() => consumers.spawn()));
      // faults every 250 ms while the producers run and a while after, stopping well before the end
      let faulting = true;
      const faultLoop = (async () => {
        let turn = ctx.seed;
        while (faulting) {
          await sleep(250);
          if (!faulting) break;
          const kind = turn++ % 3;
          if (kind === 0) {
            const victim = [...consumers.live][turn % Math.max(1, consumers.live.size)];
            if (victim?.pid !== undefined) {
              process.kill(victim.pid, 'SIGKILL');
              faults.kills++;
              await consumers.spawn();
            }
          } else if (kind === 1) {
            await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
            faults.subscriber_cuts++;
          } else {
            await queue.pause();
            await sleep(100);
            await queue.resume();
            faults.pauses++;
          }
        }
      })();
      for (let i = 0; i < jobs; i += 100) {
        await queue.addBulk(
          Array.from({ length: Math.min(100, jobs - i) }, (_, j) => {
            const n = i + j;
            return {
              payload: { n, ms: 20 + (n % 60) },
              ...(n % 4 === 0 ? {} : { group: `g${n % GROUPS}` }),
              ...(n % 10 === 0 ? { delayMs: 100 + (n % 5) * 100 } : {}),
            };
          }),
        );
        await sleep(ctx.quick ? 40 : 20);
      }
      const until = performance.now() + (ctx.quick ? 60_000 : 240_000);
      let counts = await queue.counts();
      while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < until) {
        if (performance.now() > until - 20_000) faulting = false;
        await sleep(250);
        counts = await queue.counts();
      }
      faulting = false;
      await faultLoop;
      // a queue paused by a fault cut short would hold its jobs: the loop always resumes, checked here
      await queue.resume();
      const runs = await raw.hgetall(RUNS);
      let twoHolders = 0;
      const perJob = new Map<string, number>();
      for (const [key, value] of Object.entries(runs)) {
        if (Number(value) > 1) twoHolders++;
        const id = key.split('|')[0]!;
        perJob.set(id, (perJob.get(id) ?? 0) + 1);
      }
      let misrouted = 0;
      let violations = 0;
      let seen = 0;
      const checked = { results_wrong: 0, completed_events_not_once: 0, events_out_of_order: 0, events: 0, events_stream_trimmed: 0 };
      for (let i = 0; i < PARTITIONS; i++) {
        const name = partitionName(QUEUE, i);
        const rows: FinishedRow[] = [];
        const nOf = new Map<string, number>();
        for (const key of await raw.keys(`emq:{${name}}:job:*`)) {
          const [d, s, r, g] = await raw.hmget(key, 'd', 's', 'r', 'g');
          const { n } = JSON.parse(d ?? '{}') as { n: number };
          const id = key.slice(`emq:{${name}}:job:`.length);
          // a grouped job lives in its group's partition; an ungrouped one was sent in turn
          if (g && partitionOf(g, PARTITIONS) !== i) misrouted++;
          if (!id.endsWith(`~${i}`)) misrouted++;
          rows.push({ id, state: s ?? '', result: r ?? undefined });
          nOf.set(id, n);
          seen++;
        }
        violations += (await checkInvariants(raw, name)).length;
        const part = await checkResultsAndEvents(queue.parts[i]!, rows, (id) => ({ n: nOf.get(id)! * 2 }), await eventsStreamTrimmed(raw, name));
        for (const k of Object.keys(checked) as Array<keyof typeof checked>) checked[k] += part[k];
      }
      return {
        scenario: 'partition-faults',
        jobs,
        faults: `every 250 ms a consumer of three SIGKILLed (${faults.kills}), every subscriber connection cut (${faults.subscriber_cuts}), or the queue paused 100 ms (${faults.pauses})`,
        jobs_lost: jobs - seen,
        duplicate_jobs: Math.max(0, seen - jobs),
        completed: counts.completed,
        not_finished: counts.pending + counts.scheduled + counts.active + counts.dead,
        rerun_after_kill: [...perJob].filter(([, c]) => c > 1).length,
        reruns_unexplained: twoHolders,
        jobs_misrouted: misrouted,
        invariant_violations: violations,
        ...checked,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      consumers.killAll();
      await queue.close();
      await transport.close();
      raw.disconnect();
    }
  },
};
