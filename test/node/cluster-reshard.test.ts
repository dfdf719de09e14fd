import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { keyspace } from '../../src/keyspace.js';
import { slotOf } from '../../src/cluster-slot.js';
import { Consumer } from '../../src/node/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { checkInvariants } from '../invariants.js';
import { queueName, sleep, until } from '../helpers.js';

/** A node of the cluster by its `host:port`, and its id (CLUSTER MYID). */
async function node(address: string): Promise<{ redis: Redis; id: string; host: string; port: number }> {
  const [host, port] = address.split(':') as [string, string];
  const redis = new Redis({ host, port: Number(port), protocol: 2 });
  return { redis, id: String(await redis.cluster('MYID')), host, port: Number(port) };
}

/**
 * A queue's slot moved from one master to another while a producer enqueues and a parked consumer
 * runs its jobs (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE key by key, SETSLOT NODE): calls
 * meet ASK, TRYAGAIN and then MOVED, which the cluster client follows or the consumer backs off
 * from; every job runs and completes, and the queue is consistent on its new master.
 */
describe('a queue whose slot moves to another master under load', () => {
  const cluster = useLocalCluster({ masters: 3, replicas: 0 });

  it('runs every job once it is enqueued, before, during and after the move', async () => {
    const { nodes, raw } = cluster;
    const name = queueName('moving');
    const slot = slotOf(keyspace(name).key('meta'));
    const from = await node(cluster.masterOf(name));
    const to = await node(nodes.find((address) => address !== `${from.host}:${from.port}`)!);
    const seen: string[] = [];
    const consumerTransport = IoredisTransport.connectCluster(nodes);
    const consumer = new Consumer<number>(consumerTransport, new Queue<number>(consumerTransport, name, { keepCompletedMs: -1 }), async (job) => {
      seen.push(job.id);
      await sleep(2);
    }, { concurrency: 5, beatMs: 200, log: false, ownsTransport: true }).start();
    const producer = IoredisTransport.connectCluster(nodes);
    const queue = new Queue<number>(producer, name, { keepCompletedMs: -1 });
    const acknowledged = new Set<string>();
    let producing = true;
    let retries = 0;
    const produce = (async () => {
      for (let n = 0; producing || n < 200; n++) {
        for (;;) {
          try {
            acknowledged.add((await queue.add(n, { id: `n${n}` })).id);
            break;
          } catch {
            retries++;
            await sleep(20);
          }
        }
        await sleep(3);
      }
    })();
    try {
      await until(() => acknowledged.size > 50, 10_000);
      // the move: keys a few at a time, so calls meet a slot half moved
      await to.redis.cluster('SETSLOT', slot, 'IMPORTING', from.id);
      await from.redis.cluster('SETSLOT', slot, 'MIGRATING', to.id);
      let steps = 0;
      for (;; steps++) {
        const keys = (await from.redis.cluster('GETKEYSINSLOT', slot, 3)) as string[];
        if (keys.length === 0) break;
        await from.redis.call('MIGRATE', to.host, to.port, '', 0, 5_000, 'KEYS', ...keys);
        await sleep(5);
      }
      for (const address of nodes.slice(0, 3)) {
        const master = await node(address);
        await master.redis.cluster('SETSLOT', slot, 'NODE', to.id);
        master.redis.disconnect();
      }
      expect(steps).toBeGreaterThan(3); // the slot was half moved for a while
      await sleep(300);
      producing = false;
      await produce;
      await until(async () => (await queue.stats()).counts.completed === acknowledged.size, 30_000);
      console.log(`moved in ${steps} steps; ${retries} enqueues sent again`);
      expect(new Set(seen).size).toBe(acknowledged.size);
      for (const id of acknowledged) expect(seen).toContain(id);
      // every key of the queue lives on its new master now
      expect(await from.redis.cluster('COUNTKEYSINSLOT', slot)).toBe(0);
      expect(await to.redis.cluster('COUNTKEYSINSLOT', slot)).toBeGreaterThan(0);
      expect(await checkInvariants(raw as unknown as Redis, name)).toEqual([]);
    } finally {
      producing = false;
      await produce.catch(() => {});
      await consumer.stop();
      await producer.close();
      from.redis.disconnect();
      to.redis.disconnect();
    }
  }, 90_000);
});
