import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { type RunningFaultProxy, startFaultProxy } from '../../src/node/bridge/fault-proxy.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { DurableRedis } from './durable-redis.js';
import { RunLog } from './run-log.js';
import type { ScenarioContext } from './scenario.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a scenario that SIGKILLs its Redis runs on: a redis-server of its own on a free port
 * (`appendonly yes`, `appendfsync always`: chaos/lib/durable-redis.ts), a raw ioredis client that
 * ignores its errors while Redis restarts (ioredis reconnects), the ioredis transport the Node
 * side's queues go over, and `emq bridge` over that Redis behind a fault proxy that answers 500
 * before a request runs and drops the reply after Redis ran it (each on `faultRate` of the
 * requests) and resets the connection (on a third of that), seeded with the run's seed. Unlike
 * the edge rig (chaos/lib/edge-rig.ts, on the run's shared Redis, with stalls), nothing here is
 * cleared first: the Redis is new.
 */
export interface DurableBridge {
  readonly redis: DurableRedis;
  readonly raw: Redis;
  readonly direct: IoredisTransport;
  /** The bridge's token: the edge side's REST token, through the proxy. */
  readonly token: string;
  readonly bridge: RunningBridge;
  readonly proxy: RunningFaultProxy;
  /**
   * SIGKILLs the Redis `times` times spread over `overMs` (the first after `overMs / (times + 1)`,
   * and so on), starting it again on its files 300 ms after each kill; resolves, once it is up
   * after the last, to each kill's time (`Date.now()`).
   */
  restartRedis(times: number, overMs: number): Promise<number[]>;
  /** Disconnects and closes all of it, and stops the Redis. */
  close(): Promise<void>;
}

/** Starts a scenario's own Redis, `emq bridge` over it and the fault proxy in front (see DurableBridge). */
export async function startDurableBridge(ctx: ScenarioContext, faultRate: number): Promise<DurableBridge> {
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server not found');
  const redis = new DurableRedis(binary, await freePort(), 'always');
  await redis.start();
  const raw = new Redis(redis.url);
  raw.on('error', () => {}); // while Redis restarts: ioredis reconnects
  const direct = IoredisTransport.connect(redis.url);
  const token = randomBytes(8).toString('hex');
  const bridge = await startBridge({ redisUrl: redis.url, token });
  const proxy = await startFaultProxy({ target: bridge.url, faults: { error500: faultRate, dropReply: faultRate, reset: faultRate / 3 }, seed: ctx.seed });
  return {
    redis,
    raw,
    direct,
    token,
    bridge,
    proxy,
    restartRedis: async (times, overMs) => {
      const restartTimes: number[] = [];
      for (let r = 0; r < times; r++) {
        await sleep(Math.floor(overMs / (times + 1)));
        await redis.kill();
        restartTimes.push(Date.now());
        await sleep(300);
        await redis.start();
      }
      return restartTimes;
    },
    close: async () => {
      raw.disconnect();
      await direct.close();
      await proxy.close();
      await bridge.close();
      await redis.stop();
    },
  };
}

/**
 * A DurableBridge with one queue on it, read and written two ways: `queue` straight through
 * ioredis (completed jobs kept, `keepCompletedMs: -1`, so every row can be read at the end), and
 * `edge`, the core's Queue over UpstashTransport through the fault proxy (the edge path); and a
 * run log (chaos/lib/run-log.ts) in a temp dir of its own, removed on `close()`, that the
 * scenario's consumer processes log their handler runs in.
 *
 * @example
 * const stack = await startDurableStack<CancelPayload>(ctx, { queue: CANCEL_QUEUE, tempPrefix: 'echomq-cancel-', faultRate: rate });
 * const consumers = new ChildConsumers('cancel-consumer.ts', [stack.redis.url, stack.log.path]);
 * try { ... } finally { consumers.killAll(); await stack.close(); }
 */
export interface DurableStack<P> extends DurableBridge {
  readonly queue: Queue<P>;
  readonly edgeTransport: UpstashTransport;
  readonly edge: Queue<P>;
  readonly dir: string;
  readonly log: RunLog;
  /** How many of `queue`'s jobs are unfinished (pending, scheduled, active, waiting, awaiting); Infinity while Redis cannot say. */
  unfinished(): Promise<number>;
  /** Waits until `queue` has no unfinished job, looking every 200 ms, or `withinMs` passed. */
  drain(withinMs: number): Promise<void>;
}

/** Starts a DurableStack for the queue `queue` (the temp dir named `tempPrefix` and some random letters). */
export async function startDurableStack<P>(ctx: ScenarioContext, options: { queue: string; tempPrefix: string; faultRate: number }): Promise<DurableStack<P>> {
  const base = await startDurableBridge(ctx, options.faultRate);
  const queue = new Queue<P>(base.direct, options.queue, { keepCompletedMs: -1 });
  // the edge path: the core's Queue over UpstashTransport, through the faults
  const edgeTransport = UpstashTransport.connect({ url: base.proxy.url, token: base.token, timeoutMs: 5_000 });
  const edge = new Queue<P>(edgeTransport, options.queue);
  const dir = mkdtempSync(join(tmpdir(), options.tempPrefix));
  const log = new RunLog(join(dir, 'runs.jsonl'));
  const unfinished = async (): Promise<number> => {
    try {
      const c = (await queue.stats()).counts;
      return c.pending + c.scheduled + c.active + c.waiting + c.awaiting;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  };
  return {
    ...base,
    queue,
    edgeTransport,
    edge,
    dir,
    log,
    unfinished,
    drain: async (withinMs) => {
      const drainUntil = performance.now() + withinMs;
      while ((await unfinished()) !== 0 && performance.now() < drainUntil) await sleep(200);
    },
    close: async () => {
      await edgeTransport.close();
      await base.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Sends a request again, 50 ms after each failure (`onRetry` told first), until it is answered (a
 * Redis restarting, a fault of the proxy): resolves to its answer; rejects with the last failure
 * once one comes after `giveUpAt` (`Date.now()` time; never, unless given).
 */
export async function untilAnswered<T>(send: () => Promise<T>, onRetry: () => void, giveUpAt = Number.POSITIVE_INFINITY): Promise<T> {
  for (;;) {
    try {
      return await send();
    } catch (error) {
      if (Date.now() > giveUpAt) throw error;
      onRetry();
      await sleep(50);
    }
  }
}
