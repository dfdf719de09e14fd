import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { keyspace } from '../../src/keyspace.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionName, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { leases, queueName, useRedis } from '../helpers.js';
import { checkInvariants, checkPartitionedQueue, checkPartitionRegistry } from '../invariants.js';

const PARTITIONS = 4;

/**
 * The checker's partition rules (test/invariants.ts, (n) and checkPartitionedQueue): a partitioned
 * queue driven as its users would passes them, and each rule broken on purpose is caught, then
 * passes again once repaired. Every key is written alone: on a cluster the keys of two partitions
 * are in two slots.
 */
describe('the invariant checker on partitioned queues', () => {
  const redis = useRedis();
  const made: string[] = [];

  afterEach(async () => {
    for (const name of made.splice(0)) {
      for (const key of [...(await redis.raw.keys(`emq:{${name}~*}:*`)), ...(await redis.raw.keys(`emq:{${name}}:*`))]) await redis.raw.del(key);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
      await redis.raw.srem('emq:queues', name);
    }
  });

  /** A partitioned queue of PARTITIONS with some jobs in every state a consumer leaves. */
  async function driven(): Promise<PartitionedQueue<number>> {
    const name = queueName('pcheck');
    made.push(name);
    const queue = new PartitionedQueue<number>(redis.transport, name, { partitions: PARTITIONS });
    await queue.addBulk(Array.from({ length: 16 }, (_, i) => ({ payload: i, ...(i % 2 === 0 ? { group: `g${i % 6}` } : {}) })));
    for (const part of queue.parts) {
      const { jobs } = await leases(part).claim(2, 30_000);
      if (jobs[0]) await leases(part).complete([jobs[0]]);
    }
    return queue;
  }

  /** Corrupts, expects a violation matching `pattern` from `check`, repairs, expects none. */
  async function expectCaught(check: () => Promise<string[]>, corrupt: () => Promise<unknown>, repair: () => Promise<unknown>, pattern: RegExp): Promise<void> {
    await corrupt();
    const found = await check();
    expect(found.some((v) => pattern.test(v)), `wanted ${String(pattern)} in ${JSON.stringify(found)}`).toBe(true);
    await repair();
    expect(await check()).toEqual([]);
  }

  /** A completed row of partition `part` (its id generated there) and its completion time. */
  async function completedRow(raw: Redis, part: string): Promise<{ id: string; row: Record<string, string> }> {
    const [id] = await raw.zrange(keyspace(part).key('completed'), '0', '0');
    expect(id).toMatch(/^JOB:\d+~\d+$/);
    return { id: id!, row: await raw.hgetall(keyspace(part).job(id!)) };
  }

  it('a partitioned queue driven as users do passes every rule, its registry record included', async () => {
    const queue = await driven();
    expect(await checkPartitionedQueue(redis.raw, queue.name)).toEqual([]);
    expect((await checkPartitionRegistry(redis.raw)).filter((v) => v.includes(queue.name))).toEqual([]);
  });

  it('catches a bad count, a count without its name in emq:queues, and a name without a count', async () => {
    const queue = await driven();
    const check = () => checkPartitionedQueue(redis.raw, queue.name);
    const restore = () => redis.raw.hset(PARTITIONS_REGISTRY, queue.name, String(PARTITIONS));
    await expectCaught(check, () => redis.raw.hset(PARTITIONS_REGISTRY, queue.name, '0'), restore, /is no count of partitions/);
    await expectCaught(check, () => redis.raw.hset(PARTITIONS_REGISTRY, queue.name, '2000'), restore, /is no count of partitions/);
    await expectCaught(check, () => redis.raw.hdel(PARTITIONS_REGISTRY, queue.name), restore, /no count in/);
    await expectCaught(check, () => redis.raw.srem('emq:queues', queue.name), () => redis.raw.sadd('emq:queues', queue.name), /not in emq:queues/);
  });

  it('catches keys of a partition past the count, of a name no partition has, and under the partitioned name', async () => {
    const queue = await driven();
    const check = () => checkPartitionedQueue(redis.raw, queue.name);
    const past = keyspace(partitionName(queue.name, PARTITIONS)).key('meta');
    await expectCaught(check, () => redis.raw.hset(past, 'paused', '1'), () => redis.raw.del(past), /past the 4 partitions/);
    const zeroed = `emq:{${queue.name}~01}:meta`;
    await expectCaught(check, () => redis.raw.hset(zeroed, 'paused', '1'), () => redis.raw.del(zeroed), /no partition's name/);
    const own = keyspace(queue.name).key('meta');
    await expectCaught(check, () => redis.raw.hset(own, 'paused', '1'), () => redis.raw.del(own), /has keys of its own/);
  });

  it("catches a generated id in another partition, or in a queue that is no partition", async () => {
    const queue = await driven();
    const from = queue.parts[1]!.name;
    const to = queue.parts[2]!.name;
    const { id, row } = await completedRow(redis.raw, from);
    // the row as it is, completed, with its completed-index entry: only its id is out of place
    const plant = async (target: string): Promise<void> => {
      await redis.raw.hset(keyspace(target).job(id), row);
      await redis.raw.zadd(keyspace(target).key('completed'), row.f!, id);
    };
    const uproot = async (target: string): Promise<void> => {
      await redis.raw.del(keyspace(target).job(id));
      await redis.raw.zrem(keyspace(target).key('completed'), id);
    };
    await expectCaught(
      () => checkPartitionedQueue(redis.raw, queue.name),
      () => plant(to),
      () => uproot(to),
      new RegExp(`^${to.replace('.', '\\.')}: job ${id}: generated by partition 1, held by partition 2`),
    );
    const plain = redis.queue<number>();
    await plain.add(1);
    await expectCaught(() => checkInvariants(redis.raw, plain.name), () => plant(plain.name), () => uproot(plain.name), /a partition's generated id in .*, which is no partition/);
  });
});
