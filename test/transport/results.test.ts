import { describe, expect, it } from 'vitest';
import type { Finished, Queue } from '../../src/index.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, snapshotKeys, useRedis } from '../helpers.js';
import { completeOp } from '../../src/ops/complete.js';

/**
 * Results (docs/design.md, "The row": `r`): what a handler resolved with rides on its complete
 * outcome (`Leases.round`, the path both runtimes take) into the completed row, where `getJob`
 * reads it back, for as long as the row is kept (`keepCompletedMs`).
 */
describe('job results', () => {
  const redis = useRedis();

  /** Claims `n` jobs of `queue` under a 30 s lease. */
  async function claim<P>(queue: Queue<P>, n: number) {
    const { jobs } = await leases(queue).claim(n, 30_000);
    expect(jobs).toHaveLength(n);
    return jobs;
  }

  it('a round completes each job with its result (none for a handler that returned nothing), read back by getJob and getJobs', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3, group: 'g' }]);
    const [a, b, c] = await claim(queue, 3);
    const finished: Finished[] = [
      { job: a!, outcome: { kind: 'complete', result: JSON.stringify({ doubled: 2, note: 'héllo ✓' }) } },
      { job: b!, outcome: { kind: 'complete' } },
      { job: c!, outcome: { kind: 'complete', result: 'null' } },
    ];
    const { settled } = await leases(queue).round({ finished, leaseMs: 30_000 });
    expect(settled).toEqual(['completed', 'completed', 'completed']);

    expect(await redis.raw.hget(k.job(a!.id), 'r')).toBe('{"doubled":2,"note":"héllo ✓"}');
    expect(await redis.raw.hexists(k.job(b!.id), 'r')).toBe(0);
    expect(await redis.raw.hget(k.job(c!.id), 'r')).toBe('null');
    expect(await queue.getJob(a!.id)).toMatchObject({ state: 'completed', result: { doubled: 2, note: 'héllo ✓' } });
    expect(await queue.getJob(b!.id)).toMatchObject({ state: 'completed', result: undefined });
    expect((await queue.getJob(c!.id))!.result).toBeNull();
    const page = await queue.getJobs('completed');
    expect(new Map(page.map((j) => [j.id, j.result]))).toEqual(
      new Map<string, unknown>([
        [a!.id, { doubled: 2, note: 'héllo ✓' }],
        [b!.id, undefined],
        [c!.id, null],
      ]),
    );
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('complete with a claim behind it writes the results too; a result that reads like a number stays text in the row', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
    const [first] = await claim(queue, 1);
    const { completed, claimed } = await leases(queue).complete([{ id: first!.id, token: first!.token, result: '1234567890123' }], {
      claimN: 1,
      leaseMs: 30_000,
    });
    expect(completed).toEqual([true]);
    expect(claimed!.jobs).toHaveLength(1);
    expect(await redis.raw.hget(k.job(first!.id), 'r')).toBe('1234567890123');
    const record = await queue.getJob(first!.id);
    expect(record).toMatchObject({ result: 1_234_567_890_123, runAt: undefined, leaseUntil: undefined });
  });

  it('a complete sent again answers as it did and writes nothing: the first result stays', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.add(1);
    const [job] = await claim(queue, 1);
    const gateway = scriptsOf(queue);
    const item = { id: job!.id, token: job!.token, result: '{"once":true}' };
    expect((await gateway.run(completeOp([item], { keepMs: 60_000 }))).outcomes).toEqual(['completed']);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    // the same request, its reply lost: the same answer, not a second write
    expect((await gateway.run(completeOp([item], { keepMs: 60_000 }))).outcomes).toEqual(['completed']);
    // a repeat carrying another result (a caller that ran the handler twice) changes nothing either
    expect((await gateway.run(completeOp([{ ...item, result: '"other"' }], { keepMs: 60_000 }))).outcomes).toEqual(['completed']);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect((await queue.getJob(job!.id))!.result).toEqual({ once: true });
  });

  it('a fenced-off holder writes no result', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.add(1, { maxAttempts: 5 });
    const [stale] = (await leases(queue).claim(1, 30)).jobs;
    await sleep(60);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });
    const [current] = await claim(queue, 1);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    expect((await leases(queue).complete([{ id: stale!.id, token: stale!.token, result: '"stale"' }])).completed).toEqual([false]);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect((await leases(queue).complete([{ id: current!.id, token: current!.token, result: '"current"' }])).completed).toEqual([true]);
    expect((await queue.getJob(current!.id))!.result).toBe('current');
  });

  it('kept as long as the completed row: keepCompletedMs bounds it, and 0 keeps neither the row nor its result', async () => {
    const brief = redis.queue<number>({ keepCompletedMs: 200 });
    await brief.add(1);
    const [job] = await claim(brief, 1);
    await leases(brief).complete([{ id: job!.id, token: job!.token, result: '"kept a while"' }]);
    const ttl = await redis.raw.pttl(keysOf(brief).job(job!.id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(200);
    expect((await brief.getJob(job!.id))!.result).toBe('kept a while');
    await sleep(260);
    expect(await brief.getJob(job!.id)).toBeNull();

    const none = redis.queue<number>({ keepCompletedMs: 0 });
    await none.add(1);
    const [gone] = await claim(none, 1);
    expect((await leases(none).complete([{ id: gone!.id, token: gone!.token, result: '"dropped"' }])).completed).toEqual([true]);
    expect(await redis.raw.exists(keysOf(none).job(gone!.id))).toBe(0);
    expect(await none.getJob(gone!.id)).toBeNull();
    expect(await checkInvariants(redis.raw, none.name)).toEqual([]);
  });

  it("a result over the queue's maxResultBytes is not stored: the job fails for good, saying the size and the cap", async () => {
    const queue = redis.queue<number>({ maxResultBytes: 16 });
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1, maxAttempts: 5 }, { payload: 2 }]);
    const [big, small] = await claim(queue, 2);
    const finished: Finished[] = [
      { job: big!, outcome: { kind: 'complete', result: JSON.stringify('x'.repeat(20)) } },
      { job: small!, outcome: { kind: 'complete', result: JSON.stringify('x'.repeat(14)) } },
    ];
    expect((await leases(queue).round({ finished, leaseMs: 30_000 })).settled).toEqual(['dead', 'completed']);
    const dead = await queue.getJob(big!.id);
    expect(dead).toMatchObject({ state: 'dead', attempt: 1, result: undefined });
    expect(dead!.error).toBe(
      "PayloadTooLargeError (EMQTOOLARGE): the handler's result is 22 bytes of JSON, over maxResultBytes (16); failed for good: running the job again would redo its work",
    );
    expect(await redis.raw.hexists(k.job(big!.id), 'r')).toBe(0);
    expect((await queue.getJob(small!.id))!.result).toBe('x'.repeat(14));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('the checker names a result on a row that is not completed, and one that is not JSON', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
    const [done] = await claim(queue, 1);
    await leases(queue).complete([{ id: done!.id, token: done!.token, result: '{"ok":1}' }]);
    const waiting = (await queue.getJobs('pending'))[0]!;
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const expectFlag = flagChecker(redis.raw, queue.name);
    await expectFlag(
      () => redis.raw.hset(k.job(waiting.id), 'r', '1'),
      () => redis.raw.hdel(k.job(waiting.id), 'r'),
      new RegExp(`${waiting.id}: a result \\(r\\) on a "pending" row`),
    );
    await expectFlag(
      () => redis.raw.hset(k.job(done!.id), 'r', '{not json'),
      () => redis.raw.hset(k.job(done!.id), 'r', '{"ok":1}'),
      new RegExp(`${done!.id}: its result \\(r\\) is not JSON`),
    );
  });
});
