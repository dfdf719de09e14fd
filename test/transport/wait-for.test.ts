import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  JobFailedError,
  JobNotFoundError,
  type Queue,
  type QueueEvent,
  WaitTimeoutError,
} from '../../src/index.js';
import { decodeEntry } from '../../src/events/decode.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/** The polling interval on a transport that cannot park: short, so the suite is quick over the bridge too. */
const pollMs = 20;

/**
 * Subscribing (src/events/subscribe.ts): `waitFor`, `addAndWait`, `events` and `eventEntries`, on both
 * transports (ioredis parks on XREAD BLOCK, @upstash/redis reads at an interval).
 */
describe('waiting for jobs and following events', () => {
  const redis = useRedis();

  /** Claims the one claimable job of `queue` and completes it with `result` (JSON text). */
  async function completeOne(queue: Queue<unknown>, result?: string): Promise<string> {
    const { jobs } = await leases(queue).claim(1, 30_000);
    const job = jobs[0]!;
    await leases(queue).complete([{ id: job.id, token: job.token, ...(result === undefined ? {} : { result }) }]);
    return job.id;
  }

  /** Every event the stream holds, read with XRANGE and decoded. */
  async function allEvents(queue: Queue<unknown>): Promise<QueueEvent[]> {
    const entries = await redis.raw.xrange(keysOf(queue).key('events'), '-', '+');
    return entries.flatMap(([id, fields]) => decodeEntry(id, fields).events);
  }

  it('waitFor resolves to the result once a holder completes the job, and a waiter started after gets it from the row', async () => {
    const queue = redis.queue();
    const { id } = await queue.add({ n: 1 });
    const waiting = queue.waitFor(id, { timeoutMs: 10_000, pollMs });
    await completeOne(queue, JSON.stringify({ doubled: 2, note: 'héllo ✓' }));
    await expect(waiting).resolves.toEqual({ doubled: 2, note: 'héllo ✓' });
    await expect(queue.waitFor(id, { timeoutMs: 0 })).resolves.toEqual({ doubled: 2, note: 'héllo ✓' });
    // a job completed without a result resolves to undefined
    const { id: bare } = await queue.add(2);
    await completeOne(queue);
    await expect(queue.waitFor(bare, { pollMs })).resolves.toBeUndefined();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('waitFor rejects with JobFailedError carrying the job’s error when it ends dead, before or after the waiter starts', async () => {
    const queue = redis.queue();
    const { id } = await queue.add(1, { maxAttempts: 2 });
    const waiting = queue.waitFor(id, { timeoutMs: 10_000, pollMs });
    waiting.catch(() => {});
    // a retry is not an end: it keeps waiting
    let { jobs } = await leases(queue).claim(1, 30_000);
    expect(await leases(queue).retry([{ id, token: jobs[0]!.token, error: 'first', delayMs: 0 }])).toEqual(['pending']);
    ({ jobs } = await leases(queue).claim(1, 30_000));
    expect(await leases(queue).retry([{ id, token: jobs[0]!.token, error: 'boom', delayMs: 0 }])).toEqual(['dead']);
    const error = await waiting.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({ code: 'EMQFAILED', jobId: id, jobError: 'boom' });
    await expect(queue.waitFor(id)).rejects.toMatchObject({ code: 'EMQFAILED', jobId: id, jobError: 'boom' });
    // failed for good (fail) the same
    const { id: other } = await queue.add(2);
    const second = queue.waitFor(other, { pollMs });
    // it may reject before the fail's own reply is read: handled from the start, checked below
    second.catch(() => {});
    ({ jobs } = await leases(queue).claim(1, 30_000));
    await leases(queue).fail([{ id: other, token: jobs[0]!.token, error: 'bad input' }]);
    await expect(second).rejects.toMatchObject({ code: 'EMQFAILED', jobError: 'bad input' });
  });

  it('waitFor times out with WaitTimeoutError, and an abort rejects with the signal’s reason', async () => {
    const queue = redis.queue();
    const { id } = await queue.add(1);
    const started = performance.now();
    const error = await queue.waitFor(id, { timeoutMs: 150, pollMs }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ code: 'EMQTIMEOUT', jobId: id });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const stop = new AbortController();
    const waiting = queue.waitFor(id, { signal: stop.signal, pollMs });
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    // the job is as it was
    expect((await queue.getJob(id))!.state).toBe('pending');
  });

  it('waitFor: no such job is JobNotFoundError, so is one removed while waited for; bad options are EMQARG', async () => {
    const queue = redis.queue();
    await expect(queue.waitFor('nope')).rejects.toBeInstanceOf(JobNotFoundError);
    const { id } = await queue.add(1);
    const waiting = queue.waitFor(id, { pollMs });
    waiting.catch(() => {}); // it may reject before remove's own reply is read: checked below
    await queue.remove(id);
    await expect(waiting).rejects.toThrow(/removed/);
    await expect(queue.waitFor(id, { timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.waitFor(id, { pollMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('a completed event without its result (over resultBytes) is answered from the row', async () => {
    const queue = redis.queue();
    await queue.setEvents({ resultBytes: 8 });
    const { id } = await queue.add(1);
    const waiting = queue.waitFor(id, { pollMs });
    await completeOne(queue, JSON.stringify('a result longer than eight bytes'));
    await expect(waiting).resolves.toBe('a result longer than eight bytes');
    const completed = (await allEvents(queue)).find((e) => e.event === 'completed');
    expect(completed).toMatchObject({ resultOmitted: true });
  });

  it('with events off waitFor reads the row every pollMs, and no stream is made', async () => {
    const queue = redis.queue();
    await queue.setEvents({ maxLen: 0 });
    const { id } = await queue.add(1);
    const waiting = queue.waitFor(id, { pollMs });
    await completeOne(queue, '"done"');
    await expect(waiting).resolves.toBe('done');
    const { id: dead } = await queue.add(2);
    const failing = queue.waitFor(dead, { pollMs });
    failing.catch(() => {}); // it may reject before the fail's own reply is read: checked below
    const { jobs } = await leases(queue).claim(1, 30_000);
    await leases(queue).fail([{ id: dead, token: jobs[0]!.token, error: 'no' }]);
    await expect(failing).rejects.toMatchObject({ code: 'EMQFAILED', jobError: 'no' });
    expect(await redis.raw.exists(keysOf(queue).key('events'))).toBe(0);
  });

  it('addAndWait adds and waits, missing nothing when the job finishes at once; a duplicate waits for the job that has the id', async () => {
    const queue = redis.queue({ keepCompletedMs: 0 });
    // completed before the waiter looks, its row gone (keepCompletedMs 0): the events still tell
    const waiting = queue.addAndWait({ n: 1 }, { id: 'one', timeoutMs: 10_000, pollMs });
    await expect.poll(async () => (await queue.stats()).counts.pending, { interval: 5 }).toBe(1);
    await completeOne(queue, '7');
    await expect(waiting).resolves.toEqual({ id: 'JOB:one', result: 7 });
    expect(await queue.getJob('one')).toBeNull();

    const kept = redis.queue();
    const { id } = await kept.add(1, { id: 'two' });
    const dup = kept.addAndWait(2, { id: 'two', pollMs });
    await completeOne(kept, '"first"');
    await expect(dup).resolves.toEqual({ id, result: 'first' });
    expect((await kept.getJob(id))!.payload).toBe(1);
  });

  it('events() yields every event in order, from the start or from now, and ends on abort', async () => {
    const queue = redis.queue();
    await queue.add('before', { id: 'before' });
    const stop = new AbortController();
    const fromStart: QueueEvent[] = [];
    const all = (async () => {
      for await (const e of queue.events({ after: '0', signal: stop.signal, pollMs })) fromStart.push(e);
    })();
    const now = queue.events({ signal: stop.signal, pollMs })[Symbol.asyncIterator]();
    // positioned at its first read, which races the writes below: it yields a suffix of them
    const firstNew = now.next();
    await expect.poll(() => fromStart.length, { interval: 5 }).toBe(1);
    await queue.addBulk([{ payload: 1, id: 'a', group: 'g' }, { payload: 2, id: 'b', delayMs: 60_000 }]);
    await completeOne(queue, '"r"');
    await queue.pause();
    const expected = await allEvents(queue);
    expect(expected.map((e) => e.event)).toEqual(['added', 'added', 'scheduled', 'active', 'completed', 'paused']);
    await expect.poll(() => fromStart.length, { interval: 5 }).toBe(expected.length);
    expect(fromStart).toEqual(expected);
    const tail: QueueEvent[] = [(await firstNew).value as QueueEvent];
    while (tail.at(-1)!.event !== 'paused') tail.push((await now.next()).value as QueueEvent);
    expect(tail.length).toBeLessThan(expected.length);
    expect(tail).toEqual(expected.slice(expected.length - tail.length));
    stop.abort();
    await all;
    expect(await now.next()).toEqual({ done: true, value: undefined });
  });

  it('eventEntries hands over whole entries, and `after` an entry id resumes after it, losing and repeating nothing', async () => {
    const queue = redis.queue();
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })));
    await queue.addBulk([4, 5].map((payload) => ({ payload })));
    await leases(queue).claim(5, 30_000);
    const raw = await redis.raw.xrange(keysOf(queue).key('events'), '-', '+');
    expect(raw).toHaveLength(3);
    // take the first entry, stop, and resume after it
    const stop = new AbortController();
    let firstId = '';
    for await (const entry of queue.eventEntries({ after: '0', signal: stop.signal, pollMs })) {
      expect(entry.events).toHaveLength(3);
      firstId = entry.id;
      break;
    }
    expect(firstId).toBe(raw[0]![0]);
    const rest: Array<{ id: string; n: number }> = [];
    for await (const entry of queue.eventEntries({ after: firstId, signal: stop.signal, pollMs })) {
      rest.push({ id: entry.id, n: entry.events.length });
      if (rest.length === 2) stop.abort();
    }
    expect(rest).toEqual([
      { id: raw[1]![0], n: 2 },
      { id: raw[2]![0], n: 5 },
    ]);
    expect(() => queue.eventEntries({ after: 'x' })).toThrow(InvalidArgumentError);
    expect(() => queue.events({ pollMs: -1 })).toThrow(InvalidArgumentError);
  });
});
