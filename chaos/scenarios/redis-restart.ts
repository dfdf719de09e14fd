import { Redis } from 'ioredis';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { checkInvariants } from '../../test/invariants.js';
import { DurableRedis } from '../lib/durable-redis.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-restart';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Redis SIGKILLed and restarted under load, with `appendonly yes` and `appendfsync always`: a
 * producer enqueues one job at a time (retrying a failure with the same idempotency key) while a
 * parked consumer runs them; Redis is killed by its PID and started again on the same files, once
 * in quick mode and three times in full. Every enqueue acknowledged exists after the restart and
 * completes; no completion acknowledged (its settle's reply came back) is undone.
 */
export const redisRestart: Scenario = {
  name: 'redis-restart',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const jobs = ctx.quick ? 1_000 : 5_000;
    const restarts = ctx.quick ? 1 : 3;
    const started = performance.now();
    const binary = findRedisServer();
    if (!binary) throw new Error('redis-server not found');
    const redis = new DurableRedis(binary, await freePort(), 'always');
    await redis.start();
    const transport = IoredisTransport.connect(redis.url);
    const queue = new Queue<{ n: number }>(transport, QUEUE, { keepCompletedMs: -1 });
    const acknowledged = new Map<number, string>();
    const completedAck = new Set<string>();
    let producerRetries = 0;
    const consumer = Consumer.connect<{ n: number }>(redis.url, QUEUE, () => sleep(1), {
      concurrency: 10,
      leaseMs: 2_000,
      beatMs: 500,
      queue: { keepCompletedMs: -1 },
      hooks: { onCompleted: (job) => void completedAck.add(job.id), onError: () => void consumerErrors++ },
    }).start();
    let kills = 0;
    let consumerErrors = 0;
    try {
      const produce = (async () => {
        for (let n = 0; n < jobs; n++) {
          for (;;) {
            try {
              const { id } = await queue.add({ n }, { idempotencyKey: `job-${n}` });
              acknowledged.set(n, id);
              break;
            } catch {
              producerRetries++;
              await sleep(50);
            }
          }
          // a steady stream that spans the kills
          await sleep(ctx.quick ? 2 : 1);
        }
      })();
      for (let r = 0; r < restarts; r++) {
        await sleep(ctx.quick ? 800 : 1_500);
        await redis.kill();
        kills++;
        await sleep(300);
        await redis.start();
      }
      await produce;
      const until = performance.now() + (ctx.quick ? 60_000 : 180_000);
      let counts = (await queue.stats()).counts;
      while (counts.completed < acknowledged.size && performance.now() < until) {
        await sleep(200);
        counts = (await queue.stats()).counts;
      }
      await consumer.stop();
      const raw = new Redis(redis.url);
      try {
        let lost = 0;
        let undone = 0;
        const perN = new Map<number, number>();
        const prefix = `emq:{${QUEUE}}:job:`;
        for (const key of await raw.keys(`${prefix}*`)) {
          const d = await raw.hget(key, 'd');
          const n = (JSON.parse(d ?? '{}') as { n: number }).n;
          perN.set(n, (perN.get(n) ?? 0) + 1);
        }
        for (const [, id] of acknowledged) if ((await raw.exists(`${prefix}${id}`)) === 0) lost++;
        for (const id of completedAck) if ((await raw.hget(`${prefix}${id}`, 's')) !== 'completed') undone++;
        const violations = await checkInvariants(raw, QUEUE);
        return {
          scenario: 'redis-restart',
          jobs,
          faults: `redis-server SIGKILLed and restarted ${kills} time(s), appendfsync always`,
          acknowledged: acknowledged.size,
          producer_retries: producerRetries,
          consumer_errors: consumerErrors,
          jobs_lost: lost,
          duplicate_jobs: [...perN.values()].reduce((sum, c) => sum + (c - 1), 0),
          completions_undone: undone,
          completed: counts.completed,
          not_finished: counts.pending + counts.scheduled + counts.active,
          reruns_unexplained: 0,
          invariant_violations: violations.length,
          duration_s: Math.round((performance.now() - started) / 100) / 10,
        };
      } finally {
        raw.disconnect();
      }
    } finally {
      await consumer.stop();
      await transport.close();
      await redis.stop();
    }
  },
};
