import { describe, expect, it } from 'vitest';
import { Queue } from '../../src/index.js';
import { keyspace } from '../../src/keyspace.js';
import { useCountedRedis } from '../counted-redis.js';
import { queueName, leases } from '../helpers.js';

/**
 * The scripts' cost in Redis commands over a job's whole life (enqueue, claim, complete), read
 * from INFO commandstats on a Redis of its own so no other suite's traffic is counted. Command
 * counts are deterministic, not timings: the design goal is at most 8 per job when work moves in
 * batches (BullMQ runs 24), with events on (the default: each script call that makes transitions
 * appends its events in one XADD; the settings come with the call's one HMGET of meta, includes/queue_meta.lua). Speed itself is measured in
 * bench/.
 */
describe('Redis commands per job', () => {
  const redis = useCountedRedis();

  async function commandsPerJob(jobs: number, groups: number, batch: number, limit?: number): Promise<number> {
    const queue = new Queue(redis.transport, queueName('cmds'));
    await queue.stats(); // scripts cached before counting
    if (limit !== undefined) for (let g = 0; g < groups; g++) await queue.setGroupLimit(`g${g}`, limit);
    await redis.raw.config('RESETSTAT');
    await queue.addBulk(
      Array.from({ length: jobs }, (_, i) => ({ payload: { i }, ...(groups > 0 ? { group: `g${i % groups}` } : {}) })),
    );
    let claimed = await leases(queue).claim(batch, 60_000);
    let completed = 0;
    while (claimed.jobs.length > 0) {
      const held = claimed.jobs.map(({ id, token }) => ({ id, token }));
      const next = await leases(queue).complete(held, { claimN: batch, leaseMs: 60_000 });
      completed += next.completed.filter(Boolean).length;
      claimed = next.claimed!;
    }
    expect(completed).toBe(jobs);
    const perJob = (await redis.commandsSinceReset()) / jobs;
    expect(await redis.raw.xlen(keyspace(queue.name).key('events'))).toBeGreaterThan(0); // measured with events on
    return perJob;
  }

  /** Commands per job of one addBulk of `jobs` new jobs, ids made by the sequence or given. */
  async function enqueueCommandsPerJob(jobs: number, given: boolean): Promise<number> {
    const queue = new Queue(redis.transport, queueName('cmds-enq'));
    await queue.stats();
    await redis.raw.config('RESETSTAT');
    await queue.addBulk(Array.from({ length: jobs }, (_, i) => ({ payload: { i }, ...(given ? { id: `order-${i}` } : {}) })));
    const perJob = (await redis.commandsSinceReset()) / jobs;
    expect(await redis.raw.xlen(keyspace(queue.name).key('events'))).toBeGreaterThan(0); // measured with events on
    return perJob;
  }

  it('an enqueue of new ids checks them in one EXISTS per 1000: one HSET per job and a few per call', async () => {
    // per job only its row's HSET; per call the script, TIME, the sequence, the EXISTS, the
    // arrivals list's RPUSH, its zset's size, one HMGET of meta (paused, the events settings), the
    // ring and the doorbell, and an XADD per 500 events (1.013 before events, 1.016)
    expect(await enqueueCommandsPerJob(1000, false)).toBeLessThanOrEqual(1.02);
    expect(await enqueueCommandsPerJob(1000, true)).toBeLessThanOrEqual(1.02);
  });

  // with events on (one XADD a script call; 6.18, 6.48 and 7.87 before events, 6.21, 6.50 and 7.89
  // with them; an XADD per event would make them 9.20, 9.49 and 10.88)
  it('ungrouped, in batches of 100: at most 8', async () => {
    expect(await commandsPerJob(1000, 0, 100)).toBeLessThanOrEqual(8);
  });

  it('10 groups, in batches of 100: at most 8', async () => {
    expect(await commandsPerJob(1000, 10, 100)).toBeLessThanOrEqual(8);
  });

  it('100 groups limited to one job each, in batches of 100: at most 8 (every job reopens its group)', async () => {
    // per job beyond the ungrouped path only its lane's pop at claim (a headroom of one pops one
    // job); the groups' limits and counts, read and written, whether their zsets (at claim) and
    // arrivals lists (at complete) exist, the paused flags and the ring pushes of a batch go in
    // one command each (17.6 before batch-wide group counts, 9.8 before the batch-wide EXISTS)
    expect(await commandsPerJob(2000, 100, 100, 1)).toBeLessThanOrEqual(8);
  });
});
