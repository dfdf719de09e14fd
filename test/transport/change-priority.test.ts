import { describe, expect, it } from 'vitest';
import { MAX_PRIORITY } from '../../src/index.js';
import { buryJobs, completeJobs, queueState, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneEntries, laneIds, leases, scriptsOf, useRedis } from '../helpers.js';
import { changePriorityOp } from '../../src/ops/change-priority.js';

const SPAN = 2 ** 32;

/**
 * changePriority(id, priority): a waiting job (pending or scheduled) takes the order
 * `priority * 2^32 + (its seq mod 2^32)`, in its own lane; anything else is refused, nothing
 * written.
 */
describe('changePriority', () => {
  const redis = useRedis();

  it('moves a pending job out of its arrivals list to its new place in the lane', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const [a, b, c] = await queue.addBulk(['a', 'b', 'c'].map((payload) => ({ payload, group: 'g'})));
    const seqB = Number(await redis.raw.hget(k.job(b!.id), 'o'));
    await queue.changePriority(b!.id, 2);
    expect(await redis.raw.lrange(k.fifo('g'), 0, '-1')).toEqual([a!.id, c!.id]);
    expect(await redis.raw.zscore(k.lane('g'), b!.id)).toBe(String(2 * SPAN + seqB));
    expect(await redis.raw.hmget(k.job(b!.id), 'p', 'o')).toEqual(['2', String(2 * SPAN + seqB)]);
    expect(await laneIds(redis.raw, k, 'g')).toEqual([a!.id, c!.id, b!.id]);
    expect(await redis.raw.lrange(k.key('ring'), 0, '-1')).toEqual(['g']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // back to 0: ahead of c again, by arrival
    await queue.changePriority(b!.id, 0);
    expect(await redis.raw.hget(k.job(b!.id), 'p')).toBeNull();
    expect(await laneEntries(redis.raw, k, 'g')).toEqual([
      [a!.id, String(seqB - 1)],
      [b!.id, String(seqB)],
      [c!.id, String(seqB + 1)],
    ]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    expect((await leases(queue).claim(3, 30_000)).jobs.map((j) => j.payload)).toEqual(['a', 'b', 'c']);
  });

  it('puts a job with a priority ahead of the others when lowered, as the claims then show', async () => {
    const queue = redis.queue<string>();
    await queue.addBulk([{ payload: 'first' }, { payload: 'second' }, { payload: 'urgent', priority: 5}]);
    const urgent = (await queue.getJobs('pending')).find((j) => j.payload === 'urgent')!;
    await queue.changePriority(urgent.id, 0);
    expect((await queue.getJobs('pending')).map((j) => j.payload)).toEqual(['first', 'second', 'urgent']);
    await queue.changePriority((await queue.getJobs('pending'))[0]!.id, 1);
    expect((await leases(queue).claim(3, 30_000)).jobs.map((j) => j.payload)).toEqual(['second', 'urgent', 'first']);
  });

  it('gives a scheduled job its new order for when it is promoted, keeping its due time', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const later = await queue.add('later', { delayMs: 60_000 });
    const due = await redis.raw.zscore(k.key('scheduled'), later.id);
    const seq = Number(await redis.raw.hget(k.job(later.id), 'o'));
    await queue.changePriority(later.id, 7);
    expect(await redis.raw.hmget(k.job(later.id), 'p', 'o', 's')).toEqual(['7', String(7 * SPAN + seq), 'scheduled']);
    expect(await redis.raw.zscore(k.key('scheduled'), later.id)).toBe(due);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // promoted (its due time brought forward by hand), it lands at its new order
    await redis.raw.zadd(k.key('scheduled'), '1', later.id);
    await queue.add('plain');
    await leases(queue).promote();
    expect((await leases(queue).claim(2, 30_000)).jobs.map((j) => j.payload)).toEqual(['plain', 'later']);
  });

  it('the same priority again changes nothing (harmless twice)', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('x', { group: 'g' });
    const before = await queueState(redis.raw, queue);
    await queue.changePriority(id, 0);
    expect(await queueState(redis.raw, queue)).toEqual(before);
    await queue.changePriority(id, 4);
    const once = await queueState(redis.raw, queue);
    await queue.changePriority(id, 4);
    expect(await queueState(redis.raw, queue)).toEqual(once);
  });

  it('refuses a job not waiting (EMQSTATE), a missing one (EMQNOTFOUND) and a bad priority or id (EMQARG, EMQKIND), writing nothing', async () => {
    const queue = redis.queue<string>({ keepCompletedMs: -1 });
    const [done] = await completeJobs(queue, ['done']);
    const [dead] = await buryJobs(queue, ['dead']);
    await queue.add('active');
    const [active] = (await leases(queue).claim(1, 30_000)).jobs;
    const { id } = await queue.add('waiting');
    const state = { name: 'JobStateError', code: 'EMQSTATE' };
    for (const jobId of [done!, dead!, active!.id]) await refusedUnchanged(redis.raw, queue, () => queue.changePriority(jobId, 3), state);
    await refusedUnchanged(redis.raw, queue, () => queue.changePriority('nope', 3), { name: 'JobNotFoundError', code: 'EMQNOTFOUND' });
    const arg = { name: 'InvalidArgumentError', code: 'EMQARG' };
    for (const priority of [-1, 1.5, MAX_PRIORITY + 1, Number.NaN]) {
      await refusedUnchanged(redis.raw, queue, () => queue.changePriority(id, priority), arg);
    }
    await refusedUnchanged(redis.raw, queue, () => queue.changePriority('a b', 1), arg);
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(changePriorityOp(id, MAX_PRIORITY + 1)), arg);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(changePriorityOp('FLOW:1', 1)), { name: 'KindError', code: 'EMQKIND' });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
