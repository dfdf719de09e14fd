import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Flows, InvalidArgumentError, Leases, Queue, RedisError, ReplicationError } from '../../src/index.js';
import { checkInvariants } from '../invariants.js';
import { useRedis } from '../helpers.js';

/**
 * `durability: 'replicated'` (issue 19): a WAIT for one replica rides behind the writes in their
 * round trip. Each project meets it differently: the cluster's masters have a replica each, so
 * writes resolve; the one Redis of the ioredis project has none, so WAIT answers 0 at its timeout
 * and every write rejects with ReplicationError after being applied; Upstash (the bridge) refuses
 * WAIT, so the write rejects with RedisError naming it.
 */
describe("durability: 'replicated'", () => {
  const redis = useRedis();
  const project = inject('transport');
  const TIMEOUT_MS = 50;

  it('refuses a bad durability or replicationTimeoutMs before anything is written', () => {
    for (const bad of [{ durability: 'fsync' }, { durability: 1 }, { replicationTimeoutMs: 0 }, { replicationTimeoutMs: 1.5 }, { replicationTimeoutMs: 2 ** 31 }]) {
      expect(() => redis.queue(bad as never), JSON.stringify(bad)).toThrow(InvalidArgumentError);
      expect(() => new Flows(redis.transport, bad as never), JSON.stringify(bad)).toThrow(InvalidArgumentError);
    }
    const queue = redis.queue();
    expect(() => new Leases(queue, { durability: 'all' as never })).toThrow(/durability must be 'acknowledged' or 'replicated', got "all"/);
    expect(queue.replication).toBeUndefined();
    expect(redis.queue({ durability: 'replicated' }).replication).toEqual({ replicas: 1, timeoutMs: 1000 });
    expect(redis.queue({ durability: 'replicated', replicationTimeoutMs: 250 }).replication).toEqual({ replicas: 1, timeoutMs: 250 });
  });

  it('waits for a replica behind enqueues and settles, or rejects once the write is applied', async () => {
    const queue = redis.queue<number>({ durability: 'replicated', replicationTimeoutMs: TIMEOUT_MS });
    const plain = new Queue<number>(redis.transport, queue.name);
    const started = Date.now();
    const added = queue.add(1, { id: 'one' });
    if (project === 'cluster') {
      await expect(added).resolves.toEqual({ id: 'JOB:one', state: 'pending' });
    } else if (project === 'ioredis') {
      const error = (await added.catch((e: unknown) => e)) as ReplicationError;
      expect(error).toBeInstanceOf(ReplicationError);
      expect(error).toMatchObject({ code: 'EMQREPLICA', status: 503, acknowledged: 0, replicas: 1, timeoutMs: TIMEOUT_MS });
      expect(error.message).toMatch(/0 of 1 replica\(s\) acknowledged it within 50 ms .*safe to send again/);
      // Redis waited the timeout out (it checks it on its 100 ms tick at worst)
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    } else {
      await expect(added).rejects.toThrow(RedisError);
      await expect(queue.add(1, { id: 'one' })).rejects.toThrow(/did not run WAIT/);
    }
    // in every case the write was applied on the master, and sending it again is the same job
    expect(await plain.add(1, { id: 'one' })).toEqual({ id: 'JOB:one', state: 'duplicate' });
    expect((await plain.stats()).counts).toMatchObject({ pending: 1 });

    // a settle waits too: the consumer's Leases take the queue's durability by default
    const leases = new Leases(queue);
    const { claimed } = await leases.round({ claim: 1, leaseMs: 30_000 }); // a claim alone never waits
    const job = claimed!.jobs[0]!;
    const settle = leases.round({ finished: [{ job, outcome: { kind: 'complete' } }], leaseMs: 30_000 });
    if (project === 'cluster') await expect(settle).resolves.toMatchObject({ settled: ['completed'] });
    else await expect(settle).rejects.toBeInstanceOf(project === 'ioredis' ? ReplicationError : RedisError);
    // sent again without waiting: the settle was applied, and repeats answer what it did
    const again = await new Leases(queue, { durability: 'acknowledged' }).round({ finished: [{ job, outcome: { kind: 'complete' } }], leaseMs: 30_000 });
    expect(again.settled).toEqual(['completed']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a flow waits behind each master it wrote on', async () => {
    const queue = redis.queue<number>();
    const flows = new Flows(redis.transport, { durability: 'replicated', replicationTimeoutMs: TIMEOUT_MS });
    const tree = { queue: queue.name, id: 'root', payload: 0, children: [1, 2].map((n) => ({ queue: queue.name, payload: n })) };
    const written = flows.add(tree);
    if (project === 'cluster') await expect(written).resolves.toMatchObject({ state: 'waiting' });
    else await expect(written).rejects.toBeInstanceOf(project === 'ioredis' ? ReplicationError : RedisError);
    expect((await queue.stats()).counts).toMatchObject({ pending: 2 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
