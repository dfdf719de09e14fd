import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneIds, leases, sleep, snapshotKeys, useRedis } from '../helpers.js';

/**
 * A settle may run twice: @upstash/redis sends a request again when its fetch throws (the reply
 * lost after Redis ran it), and the Node consumer sends a settle again when its reply was lost.
 * The repeat answers what the first did and writes nothing; a holder who lost its lease is still
 * fenced off (invariant 4).
 */
describe('a settle sent twice (invariant 4)', () => {
  const redis = useRedis();

  /** Every key of the queue, counters included. */
  const snapshot = (queue: { name: string }) => snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);

  /**
   * Runs `settle` twice; expects the same answer both times and the queue's keys after the second
   * exactly as after the first, and the keyspace whole. Returns the answer.
   */
  async function twice<T>(queue: { name: string }, settle: () => Promise<T>): Promise<T> {
    const first = await settle();
    const after = await snapshot(queue);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const second = await settle();
    expect(second).toEqual(first);
    expect(await snapshot(queue)).toEqual(after);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    return first;
  }

  /**
   * A queue whose group `g` is limited to one active job, with two jobs in it: the first claimed
   * (returned), the second waiting for its slot, so a settle frees the slot and rings the doorbell.
   */
  async function heldUnderLimit(options: { maxAttempts?: number; keepCompletedMs?: number } = {}) {
    const { maxAttempts, keepCompletedMs } = options;
    const queue = redis.queue<number>(keepCompletedMs === undefined ? {} : { keepCompletedMs });
    await queue.setGroupLimit('g', 1);
    const job = maxAttempts === undefined ? { group: 'g' } : { group: 'g', maxAttempts };
    await queue.addBulk([1, 2].map((n) => ({ payload: n, ...job })));
    const claimed = (await leases(queue).claim(5, 30_000)).jobs;
    expect(claimed).toHaveLength(1);
    const { id, token } = claimed[0]!;
    expect(await redis.raw.hget(keysOf(queue).key('gactive'), 'g')).toBe('1');
    return { queue, k: keysOf(queue), held: { id, token } };
  }

  it('complete: answers completed again, counts once, frees the slot and rings once', async () => {
    const { queue, k, held } = await heldUnderLimit();
    const wake = await redis.raw.llen(k.key('wake'));
    const answer = await twice(queue, async () => (await leases(queue).complete([held])).completed);
    expect(answer).toEqual([true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
    expect(await redis.raw.llen(k.key('wake'))).toBe(wake + 1);
    expect((await queue.stats()).counts).toMatchObject({ pending: 1, active: 0, completed: 1 });
  });

  it('complete: the same job twice in one batch is completed once and answered twice', async () => {
    const { queue, k, held } = await heldUnderLimit();
    expect((await leases(queue).complete([held, held])).completed).toEqual([true, true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('complete with keepCompletedMs 0: the row is gone at once, so a repeat finds no trace and is fenced', async () => {
    const { queue, k, held } = await heldUnderLimit({ keepCompletedMs: 0 });
    expect((await leases(queue).complete([held])).completed).toEqual([true]);
    const after = await snapshot(queue);
    expect(await redis.raw.exists(k.job(held.id))).toBe(0);
    expect((await leases(queue).complete([held])).completed).toEqual([false]);
    expect(await snapshot(queue)).toEqual(after);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('retry now: answers pending again and puts the job in its lane once', async () => {
    const { queue, k, held } = await heldUnderLimit();
    const answer = await twice(queue, () => leases(queue).retry([{ ...held, error: 'boom', delayMs: 0 }]));
    expect(answer).toEqual(['pending']);
    expect(await laneIds(redis.raw, k, 'g')).toEqual(['JOB:1', 'JOB:2']);
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
    expect(await queue.getJob(held.id)).toMatchObject({ state: 'pending', attempt: 1, error: 'boom' });
  });

  it('retry later: answers scheduled again, also once the job was promoted, and schedules it once', async () => {
    const { queue, k, held } = await heldUnderLimit();
    const answer = await twice(queue, () => leases(queue).retry([{ ...held, error: 'boom', delayMs: 50 }]));
    expect(answer).toEqual(['scheduled']);
    expect(await redis.raw.zrange(k.key('scheduled'), 0, '-1')).toEqual([held.id]);

    // promoted since: the repeat still answers what the first did, and moves nothing
    await sleep(80);
    expect((await leases(queue).promote()).promoted).toBe(1);
    const promoted = await twice(queue, () => leases(queue).retry([{ ...held, error: 'boom', delayMs: 50 }]));
    expect(promoted).toEqual(['scheduled']);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect(await laneIds(redis.raw, k, 'g')).toEqual(['JOB:1', 'JOB:2']);
  });

  it('retry past the last attempt: answers dead again, buried once, also once reprocessed', async () => {
    const { queue, k, held } = await heldUnderLimit({ maxAttempts: 1 });
    const answer = await twice(queue, () => leases(queue).retry([{ ...held, error: 'boom' }]));
    expect(answer).toEqual(['dead']);
    expect(await redis.raw.hget(k.key('meta'), 'buried')).toBe('1');
    expect(await redis.raw.zrange(k.key('dead'), 0, '-1')).toEqual([held.id]);

    // reprocessed since: the repeat must not bury it again
    await queue.reprocess(held.id);
    const reprocessed = await twice(queue, () => leases(queue).retry([{ ...held, error: 'boom' }]));
    expect(reprocessed).toEqual(['dead']);
    expect(await queue.getJob(held.id)).toMatchObject({ state: 'pending' });
    expect(await redis.raw.zcard(k.key('dead'))).toBe(0);
    expect(await redis.raw.hget(k.key('meta'), 'buried')).toBe('1');
  });

  it('fail: answers dead again, buried once', async () => {
    const { queue, k, held } = await heldUnderLimit();
    const answer = await twice(queue, () => leases(queue).fail([{ ...held, error: 'bad input' }]));
    expect(answer).toEqual(['dead']);
    expect(await redis.raw.hget(k.key('meta'), 'buried')).toBe('1');
    expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
    expect(await queue.getJob(held.id)).toMatchObject({ state: 'dead', error: 'bad input' });
  });

  it('release: answers released again and un-counts the claim once', async () => {
    const { queue, k, held } = await heldUnderLimit();
    const answer = await twice(queue, () => leases(queue).release([held]));
    expect(answer).toEqual(['released']);
    expect(await queue.getJob(held.id)).toMatchObject({ state: 'pending', attempt: 0 });
    expect(await laneIds(redis.raw, k, 'g')).toEqual(['JOB:1', 'JOB:2']);

    // claimed again: the old token is fenced off, and the new claim counts from 0 again
    const [again] = (await leases(queue).claim(1, 30_000)).jobs;
    expect(again).toMatchObject({ id: held.id, attempt: 1 });
    const before = await snapshot(queue);
    expect(await leases(queue).release([held])).toEqual(['fenced']);
    expect(await snapshot(queue)).toEqual(before);
  });

  it('a holder whose lease was reaped is fenced off, before and after the job is claimed again', async () => {
    const queue = redis.queue<number>();
    const k = keysOf(queue);
    await queue.add(1, { maxAttempts: 5 });
    const stale = (await leases(queue).claim(1, 50)).jobs[0]!;
    const held = { id: stale.id, token: stale.token };
    await sleep(120);
    expect(await leases(queue).reap()).toEqual({ requeued: 1, buried: 0 });

    // pending again under the stale holder's token, left bare by the reaper: not a repeat
    const settles = async () => ({
      complete: (await leases(queue).complete([held])).completed,
      retryNow: await leases(queue).retry([{ ...held, error: 'late', delayMs: 0 }]),
      retryLater: await leases(queue).retry([{ ...held, error: 'late', delayMs: 1_000 }]),
      fail: await leases(queue).fail([{ ...held, error: 'late' }]),
      release: await leases(queue).release([held]),
    });
    const fenced = { complete: [false], retryNow: ['fenced'], retryLater: ['fenced'], fail: ['fenced'], release: ['fenced'] };
    let before = await snapshot(queue);
    expect(await settles()).toEqual(fenced);
    expect(await snapshot(queue)).toEqual(before);

    const current = (await leases(queue).claim(1, 30_000)).jobs[0]!;
    expect(current.token).toBeGreaterThan(held.token);
    before = await snapshot(queue);
    expect(await settles()).toEqual(fenced);
    expect(await snapshot(queue)).toEqual(before);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // the current holder settles, and its repeat answers the same
    const answer = await twice(queue, async () => (await leases(queue).complete([current])).completed);
    expect(answer).toEqual([true]);
    expect(await redis.raw.hget(k.key('meta'), 'completed')).toBe('1');
  });

  it('a holder whose lease was reaped past its last attempt is fenced off from fail and retry', async () => {
    const queue = redis.queue<number>();
    await queue.add(1, { maxAttempts: 1 });
    const stale = (await leases(queue).claim(1, 50)).jobs[0]!;
    const held = { id: stale.id, token: stale.token };
    await sleep(120);
    expect(await leases(queue).reap()).toEqual({ requeued: 0, buried: 1 });
    const before = await snapshot(queue);
    expect(await leases(queue).fail([{ ...held, error: 'late' }])).toEqual(['fenced']);
    expect(await leases(queue).retry([{ ...held, error: 'late' }])).toEqual(['fenced']);
    expect((await leases(queue).complete([held])).completed).toEqual([false]);
    expect(await snapshot(queue)).toEqual(before);
  });

  it('a settle of one kind does not answer for another kind that ran under the token', async () => {
    const { queue, held } = await heldUnderLimit();
    expect(await leases(queue).retry([{ ...held, error: 'boom', delayMs: 0 }])).toEqual(['pending']);
    const before = await snapshot(queue);
    expect(await leases(queue).release([held])).toEqual(['fenced']);
    expect(await leases(queue).fail([{ ...held, error: 'boom' }])).toEqual(['fenced']);
    expect((await leases(queue).complete([held])).completed).toEqual([false]);
    expect(await snapshot(queue)).toEqual(before);
  });
});
