import { describe, expect, it } from 'vitest';
import { keysOf, laneIds, laneSize, useRedis, leases } from '../helpers.js';

describe('the job lifecycle', () => {
  const redis = useRedis();

  it('enqueues, claims, completes', async () => {
    const queue = redis.queue<{ n: number }>();
    const k = keysOf(queue);
    const added = await queue.add({ n: 1 });
    expect(added).toEqual({ id: 'JOB:1', state: 'pending' });
    expect(await laneIds(redis.raw, k)).toEqual(['JOB:1']);
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['*']);

    const claimed = await leases(queue).claim(5, 30_000);
    expect(claimed.jobs).toHaveLength(1);
    const job = claimed.jobs[0]!;
    expect(job).toMatchObject({ id: 'JOB:1', payload: { n: 1 }, attempt: 1, token: 1, group: undefined, maxAttempts: 3 });
    expect(job.leaseUntil).toBe(claimed.now + 30_000);
    expect(await redis.raw.zscore(k.key('active'), 'JOB:1')).toBe(String(claimed.now + 30_000));
    expect(await redis.raw.llen(k.key('ring'))).toBe(0);
    expect(await laneSize(redis.raw, k)).toBe(0);

    const done = await leases(queue).complete([{ id: job.id, token: job.token }]);
    expect(done.completed).toEqual([true]);
    expect(await redis.raw.zcard(k.key('active'))).toBe(0);
    const record = await queue.getJob('1');
    expect(record).toMatchObject({ id: 'JOB:1', state: 'completed', payload: { n: 1 }, attempt: 1 });
    expect(await redis.raw.pttl(k.job('JOB:1'))).toBeGreaterThan(3_500_000);
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 1, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
  });

  it('complete can claim the next jobs in the same call', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    const first = await leases(queue).claim(1, 10_000);
    const next = await leases(queue).complete([{ id: first.jobs[0]!.id, token: 1 }], { claimN: 5, leaseMs: 10_000 });
    expect(next.completed).toEqual([true]);
    expect(next.claimed?.jobs.map((j) => j.payload)).toEqual([2, 3]);
    expect(next.claimed?.nextDueAt).toBeNull();
  });
});

describe('the registry of queues', () => {
  const redis = useRedis();

  it('records a queue with its first enqueue, in the same round trip, once', async () => {
    const { listQueues } = await import('../../src/queue/registry.js');
    const queue = redis.queue();
    expect(await listQueues(redis.transport)).not.toContain(queue.name);
    await queue.add(1);
    await queue.addBulk([{ payload: 2 }]);
    expect(await listQueues(redis.transport)).toContain(queue.name);
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(1);
    await redis.raw.srem('emq:queues', queue.name);
  });
});
