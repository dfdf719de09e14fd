import { slotOf } from '../cluster-slot.js';
import { InvalidArgumentError, shown } from '../errors.js';
import type { QueueCounts } from '../job.js';
import { keyspace } from '../keyspace.js';
import { addLastHours, type LastHour } from './last-hour.js';
import { partitionName } from '../partitions/partition-of.js';
import { countsOp } from '../ops/counts.js';
import { listQueuesOp } from '../ops/list-queues.js';
import { unregisterQueueOp } from '../ops/unregister-queue.js';
import { bind, runOps } from '../ops/scripts.js';
import type { Transport } from '../transport.js';

/** Queues whose counts go in one round trip. */
const CHUNK = 100;

/** One queue of the registry, at a glance. */
export interface QueueOverview {
  /** The queue's name. */
  readonly queue: string;
  /** Its count of partitions, for a partitioned queue (whose row sums them); absent for a queue that is not partitioned. */
  readonly partitions?: number;
  /** Whether it is paused (a partitioned queue: every partition is). */
  readonly paused: boolean;
  /** Its jobs per state. */
  readonly counts: QueueCounts;
  /** Jobs ever sent to dead (attempts used up or failed for good): a counter, unlike `counts.dead`. */
  readonly deadTotal: number;
  /** Failed attempts sent to run again (the `retried` events): a counter. */
  readonly retriedTotal: number;
  /** Leases that lapsed and were reaped (the `stalled` events): a counter. */
  readonly stalledTotal: number;
  /** Scheduler slots fired (each enqueued one job): a counter. */
  readonly firedTotal: number;
  /** Times a group, the ungrouped lane or the queue reached its rate limit and left the ring until one more start fitted: a counter. */
  readonly rateLimitedTotal: number;
  /** Its jobs completed and sent to dead in each minute of the last hour (a partitioned queue: its partitions' added up minute by minute). */
  readonly lastHour: LastHour;
}

/**
 * The names of every queue that has had a job enqueued (the registry, `emq:queues`), sorted.
 *
 * @example
 * for (const name of await listQueues(transport)) console.log(name);
 */
export async function listQueues(transport: Transport): Promise<string[]> {
  const [{ names }] = await runOps(transport, [bind(listQueuesOp())] as const);
  return names;
}

/** What the registry holds of one queue's name. */
export interface Registered {
  /** Whether the name is registered (a job was enqueued to it, and it was not obliterated since). */
  readonly registered: boolean;
  /** Its count of partitions, 0 for a queue that is not partitioned (or not registered). */
  readonly partitions: number;
}

/**
 * What the registry holds of queue `name`: whether it is registered, and its count of partitions.
 * One read of the registry.
 *
 * @example
 * if ((await registrationOf(transport, 'mail')).partitions > 0) console.log('mail is partitioned');
 */
export async function registrationOf(transport: Transport, name: string): Promise<Registered> {
  const [{ names, partitions }] = await runOps(transport, [bind(listQueuesOp())] as const);
  return { registered: names.includes(name), partitions: partitions.get(name) ?? 0 };
}

/**
 * Takes queue `name` (and its count of partitions) out of the registry: what obliterating a
 * partitioned queue does last, once every partition is gone (a Queue's own obliterate does it
 * for itself). Resolves false when it was not there.
 */
export async function unregisterQueue(transport: Transport, name: string): Promise<boolean> {
  const [removed] = await runOps(transport, [bind(unregisterQueueOp(name))] as const);
  return removed;
}

/** Which queues `queueOverviews` reads: a page of the registry's names, in name order. */
export interface OverviewsOptions {
  /** Only the names that start with this (default: every name). */
  readonly prefix?: string;
  /** Skip this many of the (matching) names first (default 0). */
  readonly offset?: number;
  /** Read at most this many queues (default: all). */
  readonly limit?: number;
}

/**
 * Every registered queue with its counts and paused flag, sorted by name, in one round trip per
 * 100 queues (on a Redis Cluster, one pipeline per master serving them): what
 * `/metrics` and a dashboard read without scanning the keyspace. With `options`, a page of them:
 * the registry is read whole (one request), the counts of the page's queues alone.
 *
 * @example
 * for (const { queue, counts } of await queueOverviews(transport)) console.log(queue, counts.pending);
 * const firstPage = await queueOverviews(transport, { prefix: 'mail-', limit: 50 });
 */
export async function queueOverviews(transport: Transport, options: OverviewsOptions = {}): Promise<QueueOverview[]> {
  const { prefix = '', offset = 0, limit } = options;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(`offset must be a non-negative integer, got ${shown(offset)}`);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new InvalidArgumentError(`limit must be a positive integer, got ${shown(limit)}`);
  if (typeof prefix !== 'string') throw new InvalidArgumentError(`prefix must be a string, got ${shown(prefix)}`);
  const [registry] = await runOps(transport, [bind(listQueuesOp())] as const);
  const { partitions } = registry;
  const matching = prefix === '' ? registry.names : registry.names.filter((name) => name.startsWith(prefix));
  const names = limit === undefined ? matching.slice(offset) : matching.slice(offset, offset + limit);
  // a partitioned queue is read partition by partition (each a queue of its own) and summed into one row
  const reads = names.flatMap((queue) => {
    const count = partitions.get(queue) ?? 0;
    if (count === 0) return [{ queue, name: queue }];
    return Array.from({ length: count }, (_, i) => ({ queue, name: partitionName(queue, i) }));
  });
  // read in the order of the queues' hash slots: on a Redis Cluster a master serves a range of
  // slots, so a chunk costs one pipeline per master instead of one per change of master
  const bySlot = reads.map((read) => ({ ...read, slot: slotOf(keyspace(read.name).key('meta')) })).sort((a, b) => a.slot - b.slot);
  const rows = new Map<string, Row>();
  for (let i = 0; i < bySlot.length; i += CHUNK) {
    const chunk = bySlot.slice(i, i + CHUNK);
    const counts = await runOps(transport, chunk.map(({ name }) => bind(countsOp(), keyspace(name))));
    chunk.forEach(({ queue }, j) => {
      const { paused, buried, retried, stalled, fired, rated, lastHour, ...c } = counts[j]!;
      const row = rows.get(queue);
      if (!row) {
        const count = partitions.get(queue);
        rows.set(queue, { queue, ...(count === undefined ? {} : { partitions: count }), paused, counts: { ...c }, deadTotal: buried, retriedTotal: retried, stalledTotal: stalled, firedTotal: fired, rateLimitedTotal: rated, lastHour });
        return;
      }
      row.paused &&= paused;
      for (const state of Object.keys(c) as Array<keyof QueueCounts>) row.counts[state] += c[state];
      row.deadTotal += buried;
      row.retriedTotal += retried;
      row.stalledTotal += stalled;
      row.firedTotal += fired;
      row.rateLimitedTotal += rated;
      row.lastHour = addLastHours([row.lastHour, lastHour])!;
    });
  }
  return [...rows.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/** A row being summed: a QueueOverview not yet read-only. */
type Row = { -readonly [K in keyof QueueOverview]: K extends 'counts' ? { -readonly [S in keyof QueueCounts]: number } : QueueOverview[K] };
