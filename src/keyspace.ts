import { InvalidNameError, shown } from './errors.js';
import { parsePartitionName } from './partitions/partition-of.js';

const NAME = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Throws InvalidNameError unless `name` is a valid queue or group name: letters, digits and
 * `._-`, 1 to 128 characters. Checked before any Redis call, so a bad name never makes a key.
 */
export function assertName(kind: 'queue' | 'group' | 'scheduler', name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidNameError(
      `${kind} name must be 1 to 128 letters, digits, '.', '_' or '-', got ${shown(name)}`,
    );
  }
}

/** The registry of queue names: the one key outside every queue's slot. */
export const QUEUE_REGISTRY = 'emq:queues';

/**
 * The fixed keys of a queue, in the order every script takes them (lua/includes/keyspace.lua
 * names them in the same order).
 */
export const FIXED_KEYS = [
  'meta',
  'pending',
  'ring',
  'active',
  'scheduled',
  'dead',
  'wake',
  'gpaused',
  'glimit',
  'gactive',
  'groups',
  'sched',
  'completed',
  'events',
  'schedulers',
  'throttled',
] as const;

/** The name of one of a queue's fixed keys. */
export type FixedKey = (typeof FIXED_KEYS)[number];

/** Every key name of one queue: `emq:{q}:...`, all in the `{q}` cluster slot. */
export interface Keyspace {
  readonly queue: string;
  /** `emq:{q}:`, the prefix the scripts derive job and lane keys from. */
  readonly prefix: string;
  /** The fixed keys in script order. */
  readonly fixed: readonly string[];
  key(name: FixedKey): string;
  job(id: string): string;
  lane(group: string): string;
  /** The arrivals list of group `group`, or of ungrouped work when `group` is undefined. */
  fifo(group?: string): string;
}

/**
 * The keyspace of queue `queue`: a queue's name, or a partition's (`mail~3`, a queue of its own:
 * src/partitions/partition-of.ts).
 *
 * @example
 * keyspace('mail').key('wake') // 'emq:{mail}:wake'
 */
export function keyspace(queue: string): Keyspace {
  if (parsePartitionName(queue) === undefined) assertName('queue', queue);
  const prefix = `emq:{${queue}}:`;
  return {
    queue,
    prefix,
    fixed: FIXED_KEYS.map((name) => prefix + name),
    key: (name) => prefix + name,
    job: (id) => `${prefix}job:${id}`,
    lane: (group) => `${prefix}lane:${group}`,
    fifo: (group) => (group === undefined ? `${prefix}fifo` : `${prefix}fifo:${group}`),
  };
}
