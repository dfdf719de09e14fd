import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, JobTimeoutError } from '../../src/index.js';
import { boundedBeat } from '../../src/serverless/bounded-beat.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, snapshotKeys, useRedis } from '../helpers.js';

/**
 * A timeout per job (`EnqueueOptions.timeoutMs`, the row's `to`, meta `tm`): stored with the job,
 * handed out with each claim, shown by getJob; an edge beat runs a job under its own timeout, and
 * does not start one whose timeout cannot end before its deadline (it gives it back unspent).
 */
describe('a timeout per job', () => {
  const redis = useRedis();

  it('is kept on the row, handed out with the claim and shown by getJob; a bad one is refused writing nothing', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    for (const timeoutMs of [0, -1, 1.5, '10' as unknown as number]) {
      await expect(queue.add(1, { timeoutMs })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.addBulk([{ payload: 1 }, { payload: 2, timeoutMs: 0 }])).rejects.toThrow(/job 1: timeoutMs/);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    const own = await queue.add(1, { timeoutMs: 2_500 });
    const plain = await queue.add(2);
    expect(await redis.raw.hget(k.job(own.id), 'to')).toBe('2500');
    expect(await redis.raw.hget(k.key('meta'), 'tm')).toBe('1');
    expect((await queue.getJob(own.id))!.timeoutMs).toBe(2_500);
    expect((await queue.getJob(plain.id))!.timeoutMs).toBeUndefined();
    const { jobs } = await leases(queue).claim(10, 30_000);
    expect(jobs.map((j) => [j.id, j.timeoutMs])).toEqual([
      [own.id, 2_500],
      [plain.id, undefined],
    ]);
    // addAndWait's timeoutMs is the wait's; the job's own is jobTimeoutMs
    let waited = '';
    await expect(queue.addAndWait(3, { jobTimeoutMs: 777, timeoutMs: 30, onAdded: (added) => (waited = added.id) })).rejects.toMatchObject({ code: 'EMQTIMEOUT' });
    expect((await queue.getJob(waited))!.timeoutMs).toBe(777);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('an edge beat aborts a run at its job’s own timeout (a retry, JobTimeoutError), and gives back unstarted a job whose timeout outlasts the beat', async () => {
    const queue = redis.queue<string>();
    const quick = await queue.add('quick', { timeoutMs: 100, maxAttempts: 5, backoff: 60_000 });
    const long = await queue.add('long', { timeoutMs: 60_000 });
    const aborted: unknown[] = [];
    const summary = await boundedBeat(
      queue,
      async (job, { signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted.push(signal.reason);
        return job.payload;
      },
      { deadline: Date.now() + 3_000, jobTimeoutMs: 1_000 },
    );
    expect(summary).toMatchObject({ claimed: 2, retried: 1, released: 1, completed: 0 });
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toBeInstanceOf(JobTimeoutError);
    const retried = (await queue.getJob(quick.id))!;
    expect(retried).toMatchObject({ state: 'scheduled', attempt: 1 });
    expect(retried.error).toMatch(/^JobTimeoutError: the job ran past its own timeout of 100 ms/);
    // given back unspent: its claim not counted, claimable by a runtime with the time for it
    expect(await queue.getJob(long.id)).toMatchObject({ state: 'pending', attempt: 0 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
