import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { Consumer } from '../../src/node/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { checkInvariants } from '../invariants.js';
import { sleep, until } from '../helpers.js';

/**
 * Parked Node consumers over a Redis Cluster: three queues whose slots three different masters
 * serve, a consumer each on a cluster client. Their beat is 30 s, so only the doorbell (the BLPOP
 * on the queue's master, with the claim behind it) can start a job enqueued while they wait: the
 * test would time out otherwise.
 */
describe('parked consumers over a Redis Cluster', () => {
  const cluster = useLocalCluster({ masters: 3, replicas: 0 });

  it("tells its first job of a cancel asked as it starts, whether or not the sharded subscription on the queue's master was made yet", async () => {
    const { nodes } = cluster;
    const [name] = cluster.queuesOnMasters(1, 'clx');
    const producer = IoredisTransport.connectCluster(nodes);
    const queue = new Queue<number>(producer, name!);
    const job = await queue.add(1);
    let startedAt = 0;
    let aborted: { reason: unknown; at: number } | undefined;
    const consumer = new Consumer<number>(
      IoredisTransport.connectCluster(nodes),
      name!,
      async (_job, { signal }) => {
        startedAt = performance.now();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted = { reason: signal.reason, at: performance.now() };
        throw signal.reason;
      },
      { concurrency: 1, beatMs: 30_000, leaseMs: 60_000, log: false, ownsTransport: true },
    ).start();
    try {
      await until(() => startedAt > 0, 10_000);
      await queue.cancel(job.id, { reason: 'at once' });
      await until(() => aborted !== undefined, 3_000);
      expect(aborted!.at - startedAt).toBeLessThan(2_000);
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
