import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { keyspace } from '../../src/keyspace.js';
import { slotOf } from '../../src/cluster-slot.js';
import { Consumer } from '../../src/node/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalCluster, startLocalCluster } from '../../src/node/local-cluster.js';
import { checkInvariants } from '../invariants.js';
import { queueName, sleep, until } from '../helpers.js';

/**
 * Parked Node consumers over a Redis Cluster: three queues whose slots three different masters
 * serve, a consumer each on a cluster client. Their beat is 30 s, so only the doorbell (the BLPOP
 * on the queue's master, with the claim behind it) can start a job enqueued while they wait: the
 * test would time out otherwise.
 */
describe('parked consumers over a Redis Cluster', () => {
  let local: LocalCluster;
  let raw: Cluster;
  let nodes: string[];
  beforeAll(async () => {
    local = await startLocalCluster({ masters: 3, replicas: 0 });
    nodes = local.nodes.map((n) => `${n.host}:${n.port}`);
    raw = new Cluster(nodes, { redisOptions: { protocol: 2 } });
    await raw.ping();
  }, 60_000);
  afterAll(async () => {
    raw?.disconnect();
    await local?.stop();
  });

  it('each woken by its doorbell on its own master runs its jobs once, and every queue is consistent after', async () => {
    const byMaster = new Map<string, string>();
    for (let i = 0; byMaster.size < 3 && i < 300; i++) {
      const name = queueName('cl');
      const master = raw.slots[slotOf(keyspace(name).key('meta'))]![0]!;
      if (!byMaster.has(master)) byMaster.set(master, name);
    }
    expect(byMaster.size).toBe(3);
    const names = [...byMaster.values()];
    const seen = new Map<string, string[]>(names.map((n) => [n, []]));
    const consumers = names.map(
      (name) =>
        new Consumer<number>(IoredisTransport.connectCluster(nodes), name, async (job) => {
          seen.get(name)!.push(job.id);
          return job.payload * 2;
        }, { concurrency: 4, beatMs: 30_000, log: false, ownsTransport: true }),
    );
    const producer = IoredisTransport.connectCluster(nodes);
    try {
      for (const consumer of consumers) consumer.start();
      await sleep(300); // parked: their first beat found nothing
      const queues = names.map((name) => new Queue<number>(producer, name));
      for (let round = 0; round < 5; round++) {
        for (const queue of queues) await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: round * 10 + i })));
        await sleep(20);
      }
      await until(async () => (await Promise.all(queues.map((q) => q.stats()))).every((s) => s.counts.completed === 50), 20_000);
      for (const name of names) {
        expect(new Set(seen.get(name)).size, name).toBe(50);
        expect(seen.get(name), name).toHaveLength(50);
        expect(await checkInvariants(raw as unknown as Redis, name), name).toEqual([]);
      }
    } finally {
      await Promise.all(consumers.map((c) => c.stop()));
      await producer.close();
    }
  });
});
