import { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { keyspace } from '../src/keyspace.js';
import { slotOf } from '../src/cluster-slot.js';
import { type LocalCluster, type LocalClusterOptions, startLocalCluster } from '../src/node/local-cluster.js';
import { queueName } from './helpers.js';

/** A local Redis Cluster of a suite's own, and a cluster client to read it. */
export interface ClusterFixture {
  /** The running cluster (set before the first test). */
  readonly local: LocalCluster;
  /** Its nodes, `host:port`. */
  readonly nodes: string[];
  /** A cluster client (RESP2) for reading state and asking where slots live. */
  readonly raw: Cluster;
  /** The `host:port` of the master serving queue `name`'s slot, by the client's map of slots. */
  masterOf(name: string): string;
  /** `count` random queue names whose slots different masters serve. */
  queuesOnMasters(count: number, label?: string): string[];
}

/**
 * Starts a local cluster before the suite's tests (`startLocalCluster(options)`) and stops it
 * after them. Call at the top of a describe block; read the fixture's fields inside tests.
 */
export function useLocalCluster(options: LocalClusterOptions = {}): ClusterFixture {
  let local: LocalCluster | undefined;
  let raw: Cluster | undefined;
  let nodes: string[] = [];
  beforeAll(async () => {
    local = await startLocalCluster(options);
    nodes = local.nodes.map((n) => `${n.host}:${n.port}`);
    raw = new Cluster(nodes, { redisOptions: { protocol: 2 } });
    raw.on('error', () => {});
    await raw.ping();
  }, 60_000);
  afterAll(async () => {
    raw?.disconnect();
    await local?.stop();
  });
  const fixture: ClusterFixture = {
    get local() {
      if (!local) throw new Error('the cluster starts before the first test');
      return local;
    },
    get nodes() {
      return nodes;
    },
    get raw() {
      if (!raw) throw new Error('the cluster starts before the first test');
      return raw;
    },
    masterOf: (name) => fixture.raw.slots[slotOf(keyspace(name).key('meta'))]![0]!,
    queuesOnMasters: (count, label = 'q') => {
      const byMaster = new Map<string, string>();
      for (let i = 0; byMaster.size < count && i < 1_000; i++) {
        const name = queueName(label);
        const master = fixture.masterOf(name);
        if (!byMaster.has(master)) byMaster.set(master, name);
      }
      if (byMaster.size < count) throw new Error(`no ${count} masters serve queues here`);
      return [...byMaster.values()];
    },
  };
  return fixture;
}
