/**
 * BullMQ's `connection` and `prefix` as echomq takes them: an ioredis transport per layer object,
 * and the echomq queue name a BullMQ (prefix, name) pair stands for (docs/design/bullmq-layer.md).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { IoredisTransport } from '../node/ioredis-transport.js';
import type { QueueOptions as EmqQueueOptions } from '../queue/options.js';
import { Queue as EmqQueue } from '../queue/queue.js';
import type { Envelope } from './envelope.js';
import { DEFAULT_PREFIX, emqQueueName } from './queue-names.js';

/**
 * What BullMQ's `connection` takes: ioredis options (with a `url`, or `host`/`port`...), or an
 * ioredis connection or cluster client of yours. Absent: `localhost:6379`, as BullMQ.
 *
 * @example
 * new Queue('mail', { connection: { host: 'localhost', port: 6379 } });
 * new Queue('mail', { connection: new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null }) });
 */
export type ConnectionOptions =
  | (RedisOptions & {
      /** A `redis://` URL; the other options apply on top of it. */
      readonly url?: string;
    })
  | Redis
  | Cluster;

/** The options every layer object takes: BullMQ's `connection` and `prefix`. */
export interface QueueBaseOptions {
  /** Where Redis is (see ConnectionOptions). */
  readonly connection?: ConnectionOptions;
  /**
   * BullMQ's key prefix (default `bull`). echomq's keys are `emq:{<queue>}:...` whatever it is: a
   * prefix other than `bull` names another queue, `<prefix>.<name>` (braces dropped: `{bull}` is
   * `bull`), so two prefixes stay apart as they did in BullMQ.
   */
  readonly prefix?: string;
  /** Accepted for BullMQ's sake; echomq does not check the server's version. */
  readonly skipVersionCheck?: boolean;
  /** Accepted for BullMQ's sake: every object here waits for its connection on first use. */
  readonly skipWaitingForReady?: boolean;
  /** Accepted for BullMQ's sake: a Worker always has a blocking connection of its own (the doorbell's). */
  readonly blockingConnection?: boolean;
}

export { bullQueueName, DEFAULT_PREFIX, emqQueueName } from './queue-names.js';

/**
 * A transport for one layer object. On a connection of yours it shares your connection for its
 * commands (its blocking reads get duplicates of their own) and closing it leaves yours open; on
 * options it opens a connection of its own, closed with it, as BullMQ does.
 *
 * @example
 * const transport = transportFor({ host: 'localhost', port: 6379 });
 */
export function transportFor(connection?: ConnectionOptions): IoredisTransport {
  if (connection instanceof Redis || connection instanceof Cluster) return new IoredisTransport(connection, { owned: false });
  const { url, ...options } = connection ?? {};
  const base: RedisOptions = { protocol: 2, maxRetriesPerRequest: 0, ...options };
  const redis = url === undefined ? new Redis(base) : new Redis(url, base);
  // errors surface as the rejected command; ioredis would print each one unless someone listens
  redis.on('error', () => {});
  return new IoredisTransport(redis, { owned: true });
}

/** What a layer object runs on: its BullMQ qualified name, its transport, and its echomq queue. */
export interface OpenedQueue {
  /** `<prefix>:<name>`. */
  readonly qualifiedName: string;
  /** Its own transport (transportFor). */
  readonly transport: IoredisTransport;
  /** The echomq queue `emqQueueName(name, prefix)`. */
  readonly emq: EmqQueue<Envelope>;
}

/**
 * Opens what a layer object (Queue, Worker, QueueEvents) of BullMQ queue `name` runs on, from its
 * `connection` and `prefix`; a refused name closes the transport it opened before it throws.
 *
 * @example
 * const { qualifiedName, transport, emq } = openQueue('mail', { connection }, { keepCompletedMs: -1 });
 */
export function openQueue(name: string, opts: QueueBaseOptions, queueOptions: EmqQueueOptions = {}): OpenedQueue {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const transport = transportFor(opts.connection);
  try {
    return { qualifiedName: `${prefix}:${name}`, transport, emq: new EmqQueue<Envelope>(transport, emqQueueName(name, prefix), queueOptions) };
  } catch (error) {
    void transport.close();
    throw error;
  }
}
