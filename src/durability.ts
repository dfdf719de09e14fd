import { InvalidArgumentError, shown } from './errors.js';
import type { Replication } from './transport.js';

/**
 * When a write counts as done. `'acknowledged'` (default): when the master answers, as Redis
 * does by default; a failover before it reached a replica can lose it. `'replicated'`: when a
 * replica has it too (`WAIT 1` in the same round trip), else the write rejects with
 * ReplicationError (EMQREPLICA) and is sent again; it costs the replica's round trip on each
 * write, and fails every write on a Redis without a replica (docs/design.md, "Durability").
 */
export type Durability = 'acknowledged' | 'replicated';

/**
 * The durability options a Queue and the consumers take.
 *
 * @example
 * new Queue(transport, 'payments', { durability: 'replicated', replicationTimeoutMs: 500 });
 */
export interface DurabilityOptions {
  /** When a write counts as done (default `'acknowledged'`; see Durability). */
  readonly durability?: Durability;
  /**
   * With `'replicated'`: how long Redis waits for a replica to acknowledge a write before the
   * write rejects with ReplicationError, in ms (default 1,000; an integer from 1 to 2^31 - 1).
   */
  readonly replicationTimeoutMs?: number;
}

/** The default of `replicationTimeoutMs`. */
export const DEFAULT_REPLICATION_TIMEOUT_MS = 1_000;

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * What the options ask of the transport: a Replication for `'replicated'`, undefined for
 * `'acknowledged'`, and `inherited` when they name no durability (a consumer's options fall
 * back on its queue's). Throws InvalidArgumentError on a bad value, before anything is written.
 *
 * @example
 * replicationOf({ durability: 'replicated' }); // { replicas: 1, timeoutMs: 1000 }
 */
export function replicationOf(options: DurabilityOptions, inherited?: Replication): Replication | undefined {
  const { durability, replicationTimeoutMs } = options;
  if (durability !== undefined && durability !== 'acknowledged' && durability !== 'replicated') {
    throw new InvalidArgumentError(`durability must be 'acknowledged' or 'replicated', got ${shown(durability)}`);
  }
  if (replicationTimeoutMs !== undefined && (!Number.isSafeInteger(replicationTimeoutMs) || replicationTimeoutMs < 1 || replicationTimeoutMs > MAX_TIMEOUT_MS)) {
    throw new InvalidArgumentError(`replicationTimeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS} ms, got ${shown(replicationTimeoutMs)}`);
  }
  if (durability === undefined) {
    if (replicationTimeoutMs === undefined || inherited === undefined) return inherited;
    return { replicas: inherited.replicas, timeoutMs: replicationTimeoutMs };
  }
  if (durability === 'acknowledged') return undefined;
  return { replicas: 1, timeoutMs: replicationTimeoutMs ?? inherited?.timeoutMs ?? DEFAULT_REPLICATION_TIMEOUT_MS };
}

/** The options that ask for `replication` (undefined: `'acknowledged'`): replicationOf's inverse. */
export function durabilityOf(replication: Replication | undefined): DurabilityOptions {
  return replication ? { durability: 'replicated', replicationTimeoutMs: replication.timeoutMs } : { durability: 'acknowledged' };
}
