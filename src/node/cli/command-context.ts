import { type Durability, type DurabilityOptions, replicationOf } from '../../durability.js';
import { EmqError, InvalidArgumentError } from '../../errors.js';
import { PartitionError } from '../../errors.js';
import { PartitionedQueue } from '../../partitions/partitioned-queue.js';
import { openQueue } from '../../queue/open-queue.js';
import { registrationOf } from '../../queue/registry.js';
import type { QueueSurface } from '../../queue/surface.js';
import type { Transport } from '../../transport.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../connection-watch.js';
import type { IoredisTransport } from '../ioredis-transport.js';
import { connectTarget, type RedisTarget, redisTargetFromEnv, targetName } from '../redis-target.js';
import { UsageError } from './strict-args.js';

/** How a command addresses its queue beyond the name: its writes' durability, `--partitions N`. */
export interface QueueAddress {
  readonly durability?: DurabilityOptions;
  /** The partitioned queue of this count (made with its first job, else checked), not the registry's. */
  readonly partitions?: number | undefined;
}

/**
 * What a command needs of the run around it: the Redis of this run, from the environment (read
 * once a run: a bad value is a usage error, exit 2, before anything connects).
 */
export interface CommandContext {
  /** The Redis of this run, from REDIS_CLUSTER_NODES or REDIS_URL. */
  redisTarget(): RedisTarget;
  /**
   * A connection of the command's own (a cluster client with REDIS_CLUSTER_NODES). A Redis it
   * cannot reach within REDIS_CONNECT_TIMEOUT_MS fails its request with a ConnectionError naming
   * the URL (never its password) and the cause: one line, exit 1.
   */
  connect(): IoredisTransport;
  /**
   * The durability of the command's writes (enqueue, consume's settles, serve's enqueues and
   * flows, flow): EMQ_DURABILITY and EMQ_REPLICATION_TIMEOUT_MS.
   */
  durability(): DurabilityOptions;
  /** `work`'s result; a failure that is no EmqError still names the Redis (without its password). */
  reachable<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` on queue `name` (a PartitionedQueue when the registry says it is partitioned, or
   * `address.partitions` says so) over a connection of its own, closed after.
   */
  withQueue<T>(name: string, work: (queue: QueueSurface) => Promise<T>, address?: QueueAddress): Promise<T>;
  /** Runs `work` over a connection of its own, closed after (commands whose queues are in their input). */
  withTransport<T>(work: (transport: Transport) => Promise<T>): Promise<T>;
}

/**
 * Queue `name` over `transport`: as the registry knows it, or with `address.partitions` the
 * partitioned queue of that count (a count the registry does not hold is EMQPARTITION when it
 * writes, nothing written).
 */
export async function queueByName(transport: Transport, name: string, address: QueueAddress = {}): Promise<QueueSurface> {
  const { durability = {}, partitions } = address;
  if (partitions === undefined) return openQueue(transport, name, durability);
  const queue = new PartitionedQueue(transport, name, { ...durability, partitions });
  // the registry's word first: a count that differs, or a plain queue of that name, is refused
  // here as an enqueue's registration would refuse it, before a consumer claims from partitions
  // nobody writes to
  const known = await registrationOf(transport, name);
  if (known.partitions !== 0 && known.partitions !== partitions) {
    throw new PartitionError(`queue ${name} has ${known.partitions} partitions, not ${partitions}: a group would change partition, so the count is fixed`);
  }
  if (known.partitions === 0 && known.registered) throw new PartitionError(`queue ${name} exists unpartitioned: consume it without --partitions`);
  return queue;
}

/** How long a command waits for Redis to answer a connection: REDIS_CONNECT_TIMEOUT_MS, default 5000. */
function connectTimeoutMs(): number {
  const raw = process.env.REDIS_CONNECT_TIMEOUT_MS;
  if (raw === undefined || raw === '') return DEFAULT_CONNECT_TIMEOUT_MS;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(`REDIS_CONNECT_TIMEOUT_MS takes a whole number of ms >= 1, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

/** EMQ_DURABILITY (`acknowledged`, the default, or `replicated`: a `WAIT 1` behind each write) and EMQ_REPLICATION_TIMEOUT_MS (default 1000). */
function durability(): DurabilityOptions {
  const chosen = process.env.EMQ_DURABILITY || undefined;
  const timeout = process.env.EMQ_REPLICATION_TIMEOUT_MS || undefined;
  if (timeout !== undefined && !/^\d+$/.test(timeout)) throw new UsageError(`EMQ_REPLICATION_TIMEOUT_MS takes a whole number of ms >= 1, got ${JSON.stringify(timeout)}`);
  const options: DurabilityOptions = {
    ...(chosen === undefined ? {} : { durability: chosen as Durability }),
    ...(timeout === undefined ? {} : { replicationTimeoutMs: Number(timeout) }),
  };
  try {
    replicationOf(options);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(`EMQ_DURABILITY, EMQ_REPLICATION_TIMEOUT_MS: ${error.message}`);
    throw error;
  }
  return options;
}

/**
 * The context of one run of the CLI: its Redis is read from the environment at first use, and
 * afresh by the next run (tests call main() many times in one process).
 */
export function commandContext(): CommandContext {
  let target: RedisTarget | undefined;
  const redisTarget = (): RedisTarget => {
    if (target) return target;
    try {
      return (target = redisTargetFromEnv());
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new UsageError(error.message);
      throw error;
    }
  };
  const connect = (): IoredisTransport => connectTarget(redisTarget(), { connectTimeoutMs: connectTimeoutMs() });
  /** `Redis at redis://host:port` or `Redis Cluster host:port,...`. */
  const redisName = (): string => (redisTarget().kind === 'url' ? `Redis at ${targetName(redisTarget())}` : targetName(redisTarget()));
  const reachable = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof EmqError) throw error;
      throw new Error(`${redisName()} failed: ${(error as Error).message}`);
    }
  };
  const withTransport = async <T>(work: (transport: Transport) => Promise<T>): Promise<T> => {
    const transport = connect();
    try {
      return await reachable(() => work(transport));
    } finally {
      await transport.close();
    }
  };
  return {
    redisTarget,
    connect,
    durability,
    reachable,
    withTransport,
    withQueue: (name, work, address) => withTransport(async (transport) => work(await queueByName(transport, name, address))),
  };
}
