import { Queue as BullQueue, Worker as BullWorker, type Processor } from 'bullmq';
import { Queue as GroupQueue, Worker as GroupWorker } from 'groupmq';
import { Redis } from 'ioredis';
import { Queue, type QueueOptions } from '../../src/queue/queue.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { BenchContext } from './context.js';
import { CountingTransport } from './round-trips.js';

/**
 * How each implementation is set up, in one place so every case compares like with like:
 *
 * - Completed jobs are removed at once by all three, so none pays for a retention the others
 *   skip: echomq `keepCompletedMs: 0` (its default keeps a completed row readable for an hour,
 *   one PEXPIRE per job more), BullMQ `removeOnComplete: {count: 0}`, groupmq its default
 *   (keepCompleted 0). Otherwise each runs its defaults.
 * - BullMQ: failed jobs kept (its default). No QueueEvents, no metrics.
 */

/** The options every bench Queue gets beneath the case's own (see above). */
export const ECHO_QUEUE_OPTIONS: QueueOptions = { keepCompletedMs: 0 };

/** echomq on a connection of its own, its requests counted. */
export function echoQueue<P = unknown>(ctx: BenchContext, name: string, options: QueueOptions = {}): {
  transport: CountingTransport;
  queue: Queue<P>;
} {
  const transport = new CountingTransport(IoredisTransport.connect(ctx.url));
  return { transport, queue: new Queue<P>(transport, name, { ...ECHO_QUEUE_OPTIONS, ...options }) };
}

/**
 * A floor's raw ioredis connection, made exactly as echomq's is (`IoredisTransport.connect`: RESP2,
 * no retries per request), so the floor and echomq differ only in what runs over it. Closed by
 * `close`, which resolves once the socket is closed.
 */
export function floorConnection(ctx: BenchContext): { redis: Redis; close: () => Promise<void> } {
  const transport = IoredisTransport.connect(ctx.url);
  return { redis: transport.redis as Redis, close: () => transport.close() }; // connect() makes a Redis, never a Cluster
}

/** The connection options BullMQ takes (a Worker needs maxRetriesPerRequest null). */
export const bullConnection = (ctx: BenchContext): { host: string; port: number; maxRetriesPerRequest: null } => ({
  host: ctx.host,
  port: ctx.port,
  maxRetriesPerRequest: null,
});

export function bullQueue(ctx: BenchContext, name: string): BullQueue {
  return new BullQueue(name, { connection: bullConnection(ctx) });
}

/** A BullMQ worker, not yet running (call `run()`), with the bench's common settings. */
export function bullWorker(
  ctx: BenchContext,
  name: string,
  processor: Processor,
  options: {
    concurrency?: number;
    lockDuration?: number;
    stalledInterval?: number;
    removeOnComplete?: { age: number; count?: number };
    limiter?: { max: number; duration: number };
  } = {},
): BullWorker {
  return new BullWorker(name, processor, {
    connection: bullConnection(ctx),
    autorun: false,
    removeOnComplete: { count: 0 },
    ...options,
  });
}

/** A groupmq queue on a connection of its own (closed with `close`). */
export function groupQueue<P = unknown>(ctx: BenchContext, name: string): { redis: Redis; queue: GroupQueue<P> } {
  const redis = new Redis(ctx.url, { maxRetriesPerRequest: null });
  return { redis, queue: new GroupQueue<P>({ redis, namespace: name }) };
}

/** A groupmq worker: it starts running as it is made. */
export function groupWorker<P>(
  queue: GroupQueue<P>,
  handler: (job: { id: string; groupId: string; data: P }) => Promise<unknown>,
  concurrency: number,
): GroupWorker<P> {
  return new GroupWorker<P>({ queue, handler, concurrency });
}

export { BullQueue, BullWorker, GroupQueue, GroupWorker };
