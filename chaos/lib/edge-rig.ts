import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { WorkerEnv } from '../../src/edge/worker.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { type InjectedFault, type RunningFaultProxy, startFaultProxy } from '../../src/node/bridge/fault-proxy.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Queue } from '../../src/queue/queue.js';
import type { ScenarioContext } from './scenario.js';

/**
 * What an edge scenario runs on: `emq bridge` over the run's Redis behind a fault proxy that
 * answers 500, drops replies after Redis ran the request, stalls, or resets (each on `rate` of the
 * requests: 5% with `--quick`, else 10%), the queue read straight through ioredis, the runs each
 * handler records (`ran`), and the settings a serverless platform reaches Redis with through the
 * proxy (short beats and leases, so a lost lease is reaped within the run).
 */
export interface EdgeRig {
  readonly jobs: number;
  readonly rate: number;
  readonly raw: Redis;
  readonly direct: IoredisTransport;
  readonly queue: Queue<unknown>;
  readonly proxy: RunningFaultProxy;
  readonly injected: InjectedFault[];
  /** When a handler ran each job id (`Date.now()` per run), on any platform. */
  readonly runs: Map<string, number[]>;
  ran(id: string, at: number): void;
  /** A client's enqueue of `{n}` through a platform's HTTP API, its Idempotency-Key `job-<n>`. */
  enqueueRequest(n: number): Request;
  /** A platform's settings through the proxy, its drain after an enqueue `drainOnEnqueueMs` long. */
  env(drainOnEnqueueMs: number): WorkerEnv;
  /**
   * Clients (4 with `--quick`, else 10) enqueue `{n}` for n from 0 to jobs - 1, one job at a time
   * each: `send(n, attempt)` answers an HTTP status (201 or 200: acknowledged), or throws (a
   * failure the client sees); a client tries a job up to 10 times, the same Idempotency-Key
   * (`job-<n>`) each time. Resolves to what they saw.
   */
  enqueueAll(send: (n: number, attempt: number) => Promise<number>): Promise<{ acknowledged: number; gaveUp: number; clientRetries: number }>;
  close(): Promise<void>;
}

/** Starts the rig of an edge scenario on `queueName` (its old keys deleted). */
export async function startEdgeRig(ctx: ScenarioContext, queueName: string): Promise<EdgeRig> {
  const rate = ctx.quick ? 0.05 : 0.1;
  const token = randomBytes(8).toString('hex');
  const raw = new Redis(ctx.redisUrl);
  const direct = IoredisTransport.connect(ctx.redisUrl);
  const injected: InjectedFault[] = [];
  const bridge: RunningBridge = await startBridge({ redisUrl: ctx.redisUrl, token });
  const proxy = await startFaultProxy({
    target: bridge.url,
    faults: { error500: rate, dropReply: rate, stall: rate, reset: rate },
    stallMs: ctx.quick ? 500 : 3_000,
    seed: ctx.seed,
    onFault: (fault) => void injected.push(fault),
  });
  const old = await raw.keys(`emq:{${queueName}}:*`);
  if (old.length > 0) await raw.del(...old);
  const runs = new Map<string, number[]>();
  return {
    jobs: ctx.quick ? 200 : 2_000,
    rate,
    raw,
    direct,
    queue: new Queue(direct, queueName),
    proxy,
    injected,
    runs,
    ran: (id, at) => void runs.set(id, [...(runs.get(id) ?? []), at]),
    enqueueRequest: (n) =>
      new Request(`http://edge/v1/queues/${queueName}/jobs`, {
        method: 'POST',
        headers: { Authorization: 'Bearer chaos', 'Content-Type': 'application/json', 'Idempotency-Key': `job-${n}` },
        body: JSON.stringify({ payload: { n } }),
      }),
    env: (drainOnEnqueueMs) => ({
      UPSTASH_REDIS_REST_URL: proxy.url,
      UPSTASH_REDIS_REST_TOKEN: token,
      EMQ_TOKEN: 'chaos',
      EMQ_DRAIN_ON_ENQUEUE_MS: String(drainOnEnqueueMs),
      EMQ_BEAT_DEADLINE_MS: '3000',
      EMQ_JOB_TIMEOUT_MS: '500',
      EMQ_LEASE_MARGIN_MS: '1000',
      EMQ_REAP_EVERY_MS: '500',
    }),
    enqueueAll: async (send) => {
      const seen = { acknowledged: 0, gaveUp: 0, clientRetries: 0 };
      const enqueue = async (n: number): Promise<void> => {
        for (let attempt = 0; attempt < 10; attempt++) {
          if (attempt > 0) seen.clientRetries++;
          try {
            const status = await send(n, attempt);
            if (status === 201 || status === 200) {
              seen.acknowledged++;
              return;
            }
          } catch {
            // a client sees a failure: it retries with the same key
          }
        }
        seen.gaveUp++;
      };
      const jobs = ctx.quick ? 200 : 2_000;
      let next = 0;
      await Promise.all(
        Array.from({ length: ctx.quick ? 4 : 10 }, async () => {
          while (next < jobs) await enqueue(next++);
        }),
      );
      return seen;
    },
    close: async () => {
      raw.disconnect();
      await direct.close();
      await proxy.close();
      await bridge.close();
    },
  };
}
