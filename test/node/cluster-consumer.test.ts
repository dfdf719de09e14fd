import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { Consumer } from '../../src/node/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { checkInvariants } from '../invariants.js';
import { sleep, until } from '../helpers.js';
import { slotOf } from '../../src/cluster-slot.js';

/**
 * Parked Node consumers over a Redis Cluster: three queues whose slots three different masters
 * serve, a consumer each on a cluster client. Their beat is 30 s, so only the doorbell (the BLPOP
 * on the queue's master, with the claim behind it) can start a job enqueued while they wait: the
 * test would time out otherwise.
 */
describe('parked consumers over a Redis Cluster', () => {
  const cluster = useLocalCluster({ masters: 3, replicas: 0 });

  it("claims nothing before its cancel channel is subscribed on the queue's master: a cancel asked as its first job starts is heard", async () => {
    const { nodes, raw } = cluster;
    const [name] = cluster.queuesOnMasters(1, 'clx');
    const producer = IoredisTransport.connectCluster(nodes);
    const queue = new Queue<number>(producer, name!);
    const job = await queue.add(1);
    const listeners: number[] = [];
    let aborted: unknown;
    const consumer = new Consumer<number>(
      IoredisTransport.connectCluster(nodes),
      name!,
      async (_job, { signal }) => {
        // who listens on the queue's cancel channel (on its master) while the first job is in hand
        const channel = `emq:{${name}}:cancel`;
        const owner = raw.slots[slotOf(channel)]?.[0];
        const master = raw.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner)!;
        listeners.push(Number(((await master.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]));
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted = signal.reason;
        throw signal.reason;
      },
      { concurrency: 1, beatMs: 30_000, leaseMs: 60_000, log: false, ownsTransport: true },
    ).start();
    try {
      await until(() => listeners.length === 1, 10_000);
      expect(listeners).toEqual([1]);
      await queue.cancel(job.id, { reason: 'at once' });
      await until(() => aborted !== undefined, 3_000);
    } finally {
      await consumer.stop(2_000);
      await producer.close();
    }
  });

  it('each woken by its doorbell on its own master runs its jobs once, and every queue is consistent after', async () => {
    const { nodes, raw } = cluster;
    const names = cluster.queuesOnMasters(3, 'cl');
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
