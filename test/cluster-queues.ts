import type { Cluster } from 'ioredis';
import { keyspace } from '../src/keyspace.js';
import { slotOf } from '../src/node/cluster-slot.js';
import { queueName } from './helpers.js';

/** `host:port` of the master that serves `key`, by the cluster client's map of slots (ready first). */
export async function masterOfKey(cluster: Cluster, key: string): Promise<string> {
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve));
  const master = cluster.slots[slotOf(key)]?.[0];
  if (master === undefined) throw new Error(`no master serves the slot of ${key}`);
  return master;
}

/** `host:port` of the master that serves queue `name` (every key of a queue is in one slot). */
export const masterOf = (cluster: Cluster, name: string): Promise<string> => masterOfKey(cluster, keyspace(name).fixed[0]!);

/**
 * `count` random queue names, each served by a different master than the ones before it: a test
 * that must cross masters (a flow, /metrics, a pipeline cut into runs) picks them so.
 *
 * @example
 * const [a, b] = await queuesOnMasters(cluster, 2);
 */
export async function queuesOnMasters(cluster: Cluster, count: number, label = 'q'): Promise<string[]> {
  const names: string[] = [];
  const used = new Set<string>();
  for (let tries = 0; names.length < count; tries++) {
    if (tries > 1000) throw new Error(`no ${count} queues on different masters in 1000 tries`);
    const name = queueName(label);
    const master = await masterOf(cluster, name);
    if (used.has(master)) continue;
    used.add(master);
    names.push(name);
  }
  return names;
}
