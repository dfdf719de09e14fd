import { describe, expect, it } from 'vitest';
import { buryJobs, completeJobs, queueState, refusedUnchanged } from '../admin-helpers.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, scriptsOf, useRedis } from '../helpers.js';
import { updateDataOp } from '../../src/ops/update-data.js';

/**
 * updateData(id, payload): a waiting job's (pending or scheduled) payload is replaced within the
 * payload cap, and the run that claims it next gets the new one; anything else is refused,
 * nothing written.
 */
describe('updateData', () => {
  const redis = useRedis();

  it('replaces the payload of a pending and of a scheduled job, and the consumer gets it', async () => {
    const queue = redis.queue<{ to: string }>();
    const k = keysOf(queue);
    const pending = await queue.add({ to: 'a' }, { group: 'g' });
    const scheduled = await queue.add({ to: 'b' }, { delayMs: 60_000 });
    await queue.updateData(pending.id, { to: 'a2' });
    await queue.updateData(scheduled.id, { to: 'b2' });
    expect(await redis.raw.hget(k.job(pending.id), 'd')).toBe('{"to":"a2"}');
    expect(await queue.getJob(scheduled.id)).toMatchObject({ state: 'scheduled', payload: { to: 'b2' } });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    expect((await leases(queue).claim(1, 30_000)).jobs.map((j) => j.payload)).toEqual([{ to: 'a2' }]);
  });

  it('replaces the payload of a job retried and waiting for its next run', async () => {
    const queue = redis.queue<number>();
    await queue.add(1);
    const [held] = (await leases(queue).claim(1, 30_000)).jobs;
    await leases(queue).retry([{ id: held!.id, token: held!.token, error: 'x', delayMs: 0 }]);
    await queue.updateData(held!.id, 2);
    expect((await leases(queue).claim(1, 30_000)).jobs.map((j) => [j.payload, j.attempt])).toEqual([[2, 2]]);
  });

  it('the same payload again writes the same (harmless twice)', async () => {
    const queue = redis.queue<number>();
    const { id } = await queue.add(1);
    await queue.updateData(id, 7);
    const once = await queueState(redis.raw, queue);
    await queue.updateData(id, 7);
    expect(await queueState(redis.raw, queue)).toEqual(once);
  });

  it('refuses a job not waiting (EMQSTATE), a missing one (EMQNOTFOUND), a payload over the cap or not JSON, writing nothing', async () => {
    const queue = redis.queue<unknown>({ keepCompletedMs: -1, maxPayloadBytes: 64 });
    const [done] = await completeJobs(queue, ['done']);
    const [dead] = await buryJobs(queue, ['dead']);
    await queue.add('active');
    const [active] = (await leases(queue).claim(1, 30_000)).jobs;
    const { id } = await queue.add('waiting');
    const state = { name: 'JobStateError', code: 'EMQSTATE' };
    for (const jobId of [done!, dead!, active!.id]) await refusedUnchanged(redis.raw, queue, () => queue.updateData(jobId, 'new'), state);
    await refusedUnchanged(redis.raw, queue, () => queue.updateData('nope', 'new'), { name: 'JobNotFoundError', code: 'EMQNOTFOUND' });
    await refusedUnchanged(redis.raw, queue, () => queue.updateData(id, 'x'.repeat(100)), { name: 'PayloadTooLargeError', code: 'EMQTOOLARGE' });
    await refusedUnchanged(redis.raw, queue, () => queue.updateData(id, undefined), { name: 'PayloadError', code: 'EMQPAYLOAD' });
    await refusedUnchanged(redis.raw, queue, () => queue.updateData(id, 10n), { name: 'PayloadError', code: 'EMQPAYLOAD' });
    await refusedUnchanged(redis.raw, queue, () => queue.updateData('JOB:', 1), { name: 'InvalidArgumentError', code: 'EMQARG' });
    const gateway = scriptsOf(queue);
    await refusedUnchanged(redis.raw, queue, () => gateway.run(updateDataOp('FLOW:1', '1')), { name: 'KindError', code: 'EMQKIND' });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
