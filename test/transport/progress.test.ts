import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, KindError, type Queue } from '../../src/index.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, snapshotKeys, useRedis } from '../helpers.js';
import { progressOp } from '../../src/ops/progress.js';

/**
 * Progress (lua/progress.lua, the row's `pg`): a holder reports how far its job got, fenced by
 * its lease like a settle; the last report stays on the row as the job moves on.
 */
describe('job progress', () => {
  const redis = useRedis();

  async function claimOne<P>(queue: Queue<P>, leaseMs = 30_000) {
    const { jobs } = await leases(queue).claim(1, leaseMs);
    expect(jobs).toHaveLength(1);
    return jobs[0]!;
  }

  it('a holder writes its job’s progress, a number or a small JSON value; a later report replaces it, a repeat changes nothing', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const { id } = await queue.add(1);
    expect((await queue.getJob(id))!.progress).toBeUndefined();
    const job = await claimOne(queue);
    expect(await leases(queue).progress([job], 25)).toEqual([true]);
    expect(await redis.raw.hget(k.job(id), 'pg')).toBe('25');
    expect((await queue.getJob(id))!.progress).toBe(25);
    expect(await leases(queue).progress([job], { page: 3, of: 10, note: 'héllo ✓' })).toEqual([true]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'active', progress: { page: 3, of: 10, note: 'héllo ✓' } });
    // the same report again (its reply lost, sent again): written again, the same row
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    expect(await leases(queue).progress([job], { page: 3, of: 10, note: 'héllo ✓' })).toEqual([true]);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // it stays with the completed row
    await leases(queue).complete([{ id, token: job.token, result: '"done"' }]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'completed', result: 'done', progress: { page: 3, of: 10, note: 'héllo ✓' } });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a reaped holder’s progress writes nothing, and neither does one whose job was removed', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const { id } = await queue.add(1, { maxAttempts: 5 });
    const stale = await claimOne(queue, 30);
    expect(await leases(queue).progress([stale], 10)).toEqual([true]);
    await sleep(60);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    // reaped and waiting: the old holder is fenced off already
    let before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    expect(await leases(queue).progress([stale], 90)).toEqual([false]);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    // claimed again: the new holder writes, the old one still cannot
    const current = await claimOne(queue);
    expect(await leases(queue).progress([current], 40)).toEqual([true]);
    before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    expect(await leases(queue).progress([stale], 99)).toEqual([false]);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect((await queue.getJob(id))!.progress).toBe(40);
    // in one call, each job answers for itself
    expect(await leases(queue).progress([stale, current], 50)).toEqual([false, true]);
    expect(await redis.raw.hget(k.job(id), 'pg')).toBe('50');

    await queue.remove(id);
    expect(await leases(queue).progress([current], 60)).toEqual([false]);
    // no row written back into being
    expect(await redis.raw.exists(k.job(id))).toBe(0);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a retried job keeps its last progress until its next run reports one; so do a dead one and one given back', async () => {
    const queue = redis.queue<number>();
    const { id } = await queue.add(1, { maxAttempts: 2, backoff: 0 });
    let job = await claimOne(queue);
    await leases(queue).progress([job], 30);
    expect(await leases(queue).retry([{ id, token: job.token, error: 'boom', delayMs: 0 }])).toEqual(['pending']);
    expect(await queue.getJob(id)).toMatchObject({ state: 'pending', progress: 30 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    job = await claimOne(queue);
    expect(await queue.getJob(id)).toMatchObject({ state: 'active', attempt: 2, progress: 30 });
    await leases(queue).progress([job], 70);
    expect(await leases(queue).release([job])).toEqual(['released']);
    expect(await queue.getJob(id)).toMatchObject({ state: 'pending', progress: 70 });
    job = await claimOne(queue);
    expect(await leases(queue).fail([{ id, token: job.token, error: 'for good' }])).toEqual(['dead']);
    expect(await queue.getJob(id)).toMatchObject({ state: 'dead', progress: 70 });
    await queue.reprocess(id);
    expect(await queue.getJob(id)).toMatchObject({ state: 'pending', progress: 70 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('bad input is refused before any write: InvalidArgumentError from the core, EMQARG and EMQKIND from the script', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.add(1);
    const job = await claimOne(queue);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    for (const bad of [-1, 101, Number.NaN, undefined, () => 1, 10n, 'x'.repeat(4095)]) {
      await expect(leases(queue).progress([job], bad)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    const gateway = scriptsOf(queue);
    // past the core's checks: the script still takes no more than 4096 bytes, nor nothing
    for (const text of ['', `"${'x'.repeat(4095)}"`]) {
      await expect(gateway.run(progressOp([job], text))).rejects.toMatchObject({ code: 'EMQARG' });
    }
    await expect(gateway.run(progressOp([job, { id: 'not-a-job', token: 1 }], '1'))).rejects.toBeInstanceOf(KindError);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
  });

  it('the checker names progress that is not JSON, too big, or on a row never claimed', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const { id: held } = await queue.add(1);
    const job = await claimOne(queue);
    const { id: fresh } = await queue.add(2);
    await leases(queue).progress([job], 5);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(
      () => redis.raw.hset(k.job(held), 'pg', '{half'),
      () => redis.raw.hset(k.job(held), 'pg', '5'),
      new RegExp(`${held}: its progress \\(pg\\) is not JSON`),
    );
    await expectFlag(
      () => redis.raw.hset(k.job(held), 'pg', JSON.stringify('x'.repeat(4095))),
      () => redis.raw.hset(k.job(held), 'pg', '5'),
      new RegExp(`${held}: its progress \\(pg\\) is 4097 bytes, over 4096`),
    );
    await expectFlag(
      () => redis.raw.hset(k.job(fresh), 'pg', '1'),
      () => redis.raw.hdel(k.job(fresh), 'pg'),
      new RegExp(`${fresh}: progress \\(pg\\) on a row never claimed`),
    );
  });
});
