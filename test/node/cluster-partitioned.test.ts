import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionName, partitionOf } from '../../src/partitions/partition-of.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { useLocalCluster } from '../cluster-fixture.js';
import { checkInvariants } from '../invariants.js';
import { queueName, until } from '../helpers.js';

/** A job's payload here: its group's name (or none) and its place in its group. */
interface Item {
  readonly group?: string;
  readonly seq: number;
}

const PARTITIONS = 8;

/**
 * A partitioned queue of 8 partitions over a 3-master Redis Cluster, consumed by one Consumer on a
 * cluster client: one loop per partition, woken over one sharded subscriber connection per master
 * (a 30 s beat, so only the bells can keep the work moving in time).
 */
describe('a partitioned queue over a Redis Cluster', () => {
  const cluster = useLocalCluster({ masters: 3, replicas: 0 });

  /** A queue name whose 8 partitions' slots every master serves some of. */
  function spreadName(): string {
    for (let i = 0; i < 1_000; i++) {
      const name = queueName('cp');
      const masters = new Set(Array.from({ length: PARTITIONS }, (_, p) => cluster.masterOf(partitionName(name, p))));
      if (masters.size === 3) return name;
    }
    throw new Error('no name spreads its partitions over 3 masters');
  }

  it('runs every job once, groups in order and within their limits, each partition on one node, one subscriber per master', async () => {
    const { nodes, raw } = cluster;
    const name = spreadName();
    const producer = IoredisTransport.connectCluster(nodes);
    const queue = new PartitionedQueue<Item>(producer, name, { partitions: PARTITIONS });
    const ordered = Array.from({ length: 16 }, (_, g) => `one-${g}`);
    const pairs = Array.from({ length: 8 }, (_, g) => `two-${g}`);
    expect(new Set([...ordered, ...pairs].map((g) => partitionOf(g, PARTITIONS))).size).toBeGreaterThan(4);
    for (const group of ordered) await queue.setGroupLimit(group, 1);
    for (const group of pairs) await queue.setGroupLimit(group, 2);

    const seen: Item[] = [];
    const ran: string[] = [];
    const active = new Map<string, number>();
    const most = new Map<string, number>();
    const consumer = new Consumer<Item>(
      IoredisTransport.connectCluster(nodes),
      queue,
      async (job) => {
        ran.push(job.id);
        seen.push(job.payload);
        const g = job.payload.group;
        if (g !== undefined) {
          active.set(g, (active.get(g) ?? 0) + 1);
          most.set(g, Math.max(most.get(g) ?? 0, active.get(g)!));
        }
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 6));
        if (g !== undefined) active.set(g, active.get(g)! - 1);
      },
      { concurrency: 8, beatMs: 30_000, log: false, ownsTransport: true },
    ).start();
    try {
      const enqueued = [
        ...(await queue.addBulk(Array.from({ length: 8 }, (_, seq) => [...ordered, ...pairs].map((group) => ({ payload: { group, seq }, group }))).flat())),
        ...(await queue.addBulk(Array.from({ length: 40 }, (_, seq) => ({ payload: { seq } })))),
      ].map((r) => r.id);
      const total = 24 * 8 + 40;
      expect(new Set(enqueued).size).toBe(total);
      await until(async () => (await queue.counts()).completed === total, 30_000);

      // every job ran, once
      expect(ran).toHaveLength(total);
      expect(new Set(ran)).toEqual(new Set(enqueued));
      // a group of limit 1 ran in order; one of limit 2 never ran more than 2 at once
      for (const group of ordered) expect(seen.filter((s) => s.group === group).map((s) => s.seq), group).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      for (const group of ordered) expect(most.get(group), group).toBe(1);
      for (const group of pairs) expect(most.get(group), group).toBeLessThanOrEqual(2);
      expect(Math.max(...pairs.map((g) => most.get(g)!))).toBe(2);

      const masters = raw.nodes('master');
      expect(masters).toHaveLength(3);
      // the keys of one partition all live on one node, and the partitions on all three
      const homes = new Map<number, Set<string>>();
      for (const master of masters) {
        const at = `${master.options.host}:${master.options.port}`;
        for (const key of await master.keys(`emq:{${name}~*}:*`)) {
          const index = Number(/^emq:\{[^}]*~(\d+)\}:/.exec(key)![1]);
          homes.set(index, (homes.get(index) ?? new Set()).add(at));
        }
      }
      expect([...homes.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: PARTITIONS }, (_, i) => i));
      for (const [index, on] of homes) expect(on.size, `partition ${index} on ${[...on].join(', ')}`).toBe(1);
      expect(new Set([...homes.values()].map((on) => [...on][0])).size).toBe(3);

      // one sharded subscriber connection per master
      for (const master of masters) {
        const list = (await master.client('LIST')) as string;
        const mine = list.split('\n').filter((line) => line.includes('ssubscriber') && line.includes(`emq-doorbell:${name} `));
        expect(mine, `${master.options.host}:${master.options.port}`).toHaveLength(1);
        expect(mine[0]).toMatch(/ sub=0 psub=0 ssub=[1-8] /);
      }

      await consumer.stop();
      for (const part of queue.parts) expect(await checkInvariants(raw as unknown as Redis, part.name), part.name).toEqual([]);
      // and none once it stopped
      await until(async () => (await Promise.all(masters.map((m) => m.client('LIST') as Promise<string>))).every((list) => !list.includes(`emq-doorbell:${name} `)), 5_000);
    } finally {
      await consumer.stop();
      await producer.close();
    }
  }, 60_000);

  it('a subscriber connection of a master, killed, is made again, and every bell rung: a job enqueued meanwhile starts at once', async () => {
    const { nodes, raw } = cluster;
    const name = spreadName();
    const producer = IoredisTransport.connectCluster(nodes);
    const queue = new PartitionedQueue<Item>(producer, name, { partitions: PARTITIONS });
    const started = new Map<number, number>();
    const consumer = new Consumer<Item>(IoredisTransport.connectCluster(nodes), queue, (job) => void started.set(job.payload.seq, performance.now()), {
      beatMs: 30_000,
      log: false,
      ownsTransport: true,
    }).start();
    try {
      const subscriberOn = async (master: Redis): Promise<string | undefined> => {
        const line = ((await master.client('LIST')) as string).split('\n').find((l) => l.includes('ssubscriber') && l.includes(`emq-doorbell:${name} `));
        return line === undefined ? undefined : / id=(\d+) /.exec(` ${line}`)![1];
      };
      const master = raw.nodes('master').find((m) => cluster.masterOf(partitionName(name, 0)) === `${m.options.host}:${m.options.port}`)!;
      await until(async () => (await subscriberOn(master)) !== undefined, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const killed = (await subscriberOn(master))!;
      await master.client('KILL', 'ID', killed);
      // to partition 0 (in turn: the queue's first ungrouped job), on the master whose subscriber is gone
      const at = performance.now();
      await queue.add({ seq: 0 });
      await until(() => started.has(0), 10_000);
      expect(started.get(0)! - at).toBeLessThan(5_000);
      await until(async () => ((await subscriberOn(master)) ?? killed) !== killed, 10_000);
    } finally {
      await consumer.stop();
      await producer.close();
    }
  }, 60_000);
});
