import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Queue, type QueueEvent } from '../../src/index.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, snapshotKeys, useRedis } from '../helpers.js';
import { claimOp } from '../../src/ops/claim.js';
import { readEventsOp } from '../../src/ops/read-events.js';
import { setEventsOp } from '../../src/ops/set-events.js';

/** An event without its entry id and time: what a transition must append, compared whole. */
type Bare = Record<string, unknown>;

const bare = ({ id: _id, time: _time, ...rest }: QueueEvent): Bare => rest;

describe('the events stream', () => {
  const redis = useRedis();

  /**
   * What `queue` appended since the last call, read with readEvents page by page, each event with
   * its id and time checked (the entry's, within the server's clock) and then left out.
   */
  function follow(queue: Queue<unknown>): { next: () => Promise<Bare[]>; entries: () => Promise<number> } {
    let after = '0';
    return {
      next: async () => {
        const now = await redis.serverNow();
        const out: Bare[] = [];
        for (;;) {
          const page = await queue.readEvents({ after, limit: 1000 });
          for (const e of page.events) {
            expect(e.id).toMatch(/^\d+-\d+$/);
            expect(e.time).toBe(Number(e.id.split('-')[0]));
            expect(e.time).toBeLessThanOrEqual(now + 5);
            out.push(bare(e));
          }
          if (page.next === after) return out;
          after = page.next;
        }
      },
      entries: () => redis.raw.xlen(keysOf(queue).key('events')),
    };
  }

  /** Waits until the server clock reaches `at` (ms). */
  async function untilServerTime(at: number): Promise<void> {
    while ((await redis.serverNow()) < at) await sleep(5);
  }

  it('enqueue appends added or scheduled per new job, in order, in one entry; a duplicate or a request again appends nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const events = follow(queue);
    await queue.add('a', { id: 'a' });
    expect(await events.next()).toEqual([{ event: 'added', jobId: 'JOB:a' }]);

    await queue.addBulk(
      [
        { payload: 1, id: 'b', group: 'g' },
        { payload: 2, id: 'c', delayMs: 60_000 },
        { payload: 3, id: 'd', priority: 5, group: 'h' },
        { payload: 4, id: 'a' },
      ],
      { idempotencyKey: 'once' },
    );
    const due = Number(await redis.raw.zscore(k.key('scheduled'), 'JOB:c'));
    expect(await events.next()).toEqual([
      { event: 'added', jobId: 'JOB:b', group: 'g' },
      { event: 'scheduled', jobId: 'JOB:c', dueAt: due },
      { event: 'added', jobId: 'JOB:d', group: 'h' },
    ]);
    expect(await events.entries()).toBe(2);

    // a duplicate writes nothing, and the same request again answers its first reply
    expect(await queue.add('again', { id: 'a' })).toEqual({ id: 'JOB:a', state: 'duplicate' });
    await queue.addBulk([{ payload: 1, id: 'b', group: 'g' }, { payload: 2, id: 'c', delayMs: 60_000 }, { payload: 3, id: 'd', priority: 5, group: 'h' }, { payload: 4, id: 'a' }], {
      idempotencyKey: 'once',
    });
    expect(await events.next()).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('walks a job through claim, complete, retries, dead, fail and release, each transition its event', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    const l = leases(queue);
    await queue.addBulk([
      { payload: 1, id: 'one', group: 'g', backoff: { type: 'fixed', delayMs: 60_000 } },
      { payload: 2, id: 'two', maxAttempts: 2 },
      { payload: 3, id: 'three' },
      { payload: 4, id: 'four' },
    ]);
    await events.next();

    // claimed in turn order, an `active` each
    const claimed = (await l.claim(4, 30_000)).jobs;
    expect(await events.next()).toEqual(claimed.map((j) => ({ event: 'active', jobId: j.id, attempt: 1, ...(j.group ? { group: j.group } : {}) })));
    const held = Object.fromEntries(claimed.map((j) => [j.id, { id: j.id, token: j.token }]));

    // retried after the backoff, retried now, given back, failed for good: one entry, in order
    const t0 = await redis.serverNow();
    expect(
      await l.retry([
        { ...held['JOB:one']!, error: 'later' },
        { ...held['JOB:two']!, error: 'now', delayMs: 0 },
      ]),
    ).toEqual(['scheduled', 'pending']);
    const t1 = await redis.serverNow();
    const due = Number(await redis.raw.zscore(keysOf(queue).key('scheduled'), 'JOB:one'));
    const retried = await events.next();
    expect(retried).toEqual([
      { event: 'retried', jobId: 'JOB:one', group: 'g', attempt: 1, error: 'later', dueAt: due },
      { event: 'retried', jobId: 'JOB:two', attempt: 1, error: 'now', dueAt: expect.any(Number) as number },
    ]);
    const now = (retried[1] as { dueAt: number }).dueAt;
    expect(now).toBeGreaterThanOrEqual(t0);
    expect(now).toBeLessThanOrEqual(t1);
    expect(await events.entries()).toBe(3);

    expect(await l.release([held['JOB:three']!])).toEqual(['released']);
    expect(await events.next()).toEqual([{ event: 'released', jobId: 'JOB:three' }]);
    expect(await l.fail([{ ...held['JOB:four']!, error: 'for good' }])).toEqual(['dead']);
    expect(await events.next()).toEqual([{ event: 'dead', jobId: 'JOB:four', attempt: 1, error: 'for good' }]);

    // the second attempt of two fails: dead; the released job completes on its first counted run
    const again = (await l.claim(2, 30_000)).jobs;
    expect(again.map((j) => [j.id, j.attempt])).toEqual([
      ['JOB:two', 2],
      ['JOB:three', 1],
    ]);
    expect(await events.next()).toEqual([
      { event: 'active', jobId: 'JOB:two', attempt: 2 },
      { event: 'active', jobId: 'JOB:three', attempt: 1 },
    ]);
    expect(await l.retry([{ id: 'JOB:two', token: again[0]!.token, error: 'last' }])).toEqual(['dead']);
    expect(await events.next()).toEqual([{ event: 'dead', jobId: 'JOB:two', attempt: 2, error: 'last' }]);
    expect((await l.complete([{ id: 'JOB:three', token: again[1]!.token }])).completed).toEqual([true]);
    expect(await events.next()).toEqual([{ event: 'completed', jobId: 'JOB:three', attempt: 1, resultOmitted: false }]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a delayed job: scheduled, then promoted when due (by promote and by a beat), then active', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    await queue.add('x', { id: 'x', delayMs: 30, group: 'g' });
    await queue.add('y', { id: 'y', delayMs: 30 });
    const [x, y] = (await events.next()) as Array<{ dueAt: number }>;
    expect(x).toMatchObject({ event: 'scheduled', jobId: 'JOB:x', group: 'g' });
    expect(y).toMatchObject({ event: 'scheduled', jobId: 'JOB:y' });
    await untilServerTime(Math.max(x!.dueAt, y!.dueAt) + 1);
    expect((await leases(queue).promote(1)).promoted).toBe(1);
    expect(await events.next()).toEqual([{ event: 'promoted', jobId: 'JOB:x', group: 'g' }]);
    // a beat promotes and claims in one call: one entry, promoted before active
    await leases(queue).beat({ n: 5, leaseMs: 30_000 });
    expect(await events.next()).toEqual([
      { event: 'promoted', jobId: 'JOB:y' },
      { event: 'active', jobId: 'JOB:x', group: 'g', attempt: 1 },
      { event: 'active', jobId: 'JOB:y', attempt: 1 },
    ]);
    expect(await events.entries()).toBe(4);
  });

  it('a reaped lease: stalled and back to its lane, or stalled then dead on its last attempt (reap and beat)', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    const l = leases(queue);
    await queue.add('a', { id: 'a', group: 'g' });
    await queue.add('b', { id: 'b', maxAttempts: 1 });
    await events.next();
    await l.claim(2, 20);
    await events.next();
    await sleep(40);
    expect(await l.reap()).toEqual({ requeued: 1, buried: 1 });
    expect(await events.next()).toEqual([
      { event: 'stalled', jobId: 'JOB:a', group: 'g', attempt: 1 },
      { event: 'stalled', jobId: 'JOB:b', attempt: 1 },
      { event: 'dead', jobId: 'JOB:b', attempt: 1, error: 'lease expired' },
    ]);
    expect(await events.entries()).toBe(4);
    // a beat reaps and claims again in one entry
    await l.claim(1, 20);
    await events.next();
    await sleep(40);
    await l.beat({ n: 1, leaseMs: 30_000 });
    expect(await events.next()).toEqual([
      { event: 'stalled', jobId: 'JOB:a', group: 'g', attempt: 2 },
      { event: 'active', jobId: 'JOB:a', group: 'g', attempt: 3 },
    ]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('complete-and-claim appends completed then active in one entry', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })));
    const [first] = (await leases(queue).claim(1, 30_000)).jobs;
    await events.next();
    const entries = await events.entries();
    await leases(queue).complete([{ id: first!.id, token: first!.token }], { claimN: 2, leaseMs: 30_000 });
    expect(await events.next()).toEqual([
      { event: 'completed', jobId: 'JOB:1', attempt: 1, resultOmitted: false },
      { event: 'active', jobId: 'JOB:2', attempt: 1 },
      { event: 'active', jobId: 'JOB:3', attempt: 1 },
    ]);
    expect(await events.entries()).toBe(entries + 1);
  });

  it('completed carries the result up to the queue\'s resultBytes, past it says it was left out; progress appends its value once', async () => {
    const queue = redis.queue();
    await queue.setEvents({ resultBytes: 16 });
    const events = follow(queue);
    await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2 }, { payload: 3 }]);
    const held = (await leases(queue).claim(3, 30_000)).jobs;
    await events.next();
    const [one, two, three] = held;
    // progress: its event once per change; the same value again (a repeat) appends nothing
    expect(await leases(queue).progress([one!], { page: 2 })).toEqual([true]);
    expect(await leases(queue).progress([one!], { page: 2 })).toEqual([true]);
    expect(await events.next()).toEqual([{ event: 'progress', jobId: one!.id, group: 'g', attempt: 1, progress: { page: 2 } }]);
    // a fenced-off report appends nothing
    expect(await leases(queue).progress([{ ...two!, token: two!.token + 100 }], 50)).toEqual([false]);
    expect(await events.next()).toEqual([]);
    await leases(queue).complete([
      { id: one!.id, token: one!.token, result: '{"ok":true}' },
      { id: two!.id, token: two!.token, result: JSON.stringify('x'.repeat(40)) },
      { id: three!.id, token: three!.token },
    ]);
    expect(await events.next()).toEqual([
      { event: 'completed', jobId: one!.id, group: 'g', attempt: 1, result: { ok: true }, resultOmitted: false },
      { event: 'completed', jobId: two!.id, attempt: 1, resultOmitted: true },
      { event: 'completed', jobId: three!.id, attempt: 1, resultOmitted: false },
    ]);
    // the row has what the event left out
    expect((await queue.getJob(two!.id))!.result).toBe('x'.repeat(40));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a fenced-off settle, a repeated settle and a claim answered again append nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const events = follow(queue);
    const l = leases(queue);
    await queue.addBulk([1, 2, 3, 4, 5].map((payload) => ({ payload, maxAttempts: 5 })));
    const jobs = (await l.claim(5, 30_000)).jobs;
    const [a, b, c, d, e] = jobs.map(({ id, token }) => ({ id, token }));
    expect(await l.retry([{ ...a!, error: 'x', delayMs: 0 }])).toEqual(['pending']);
    expect(await l.fail([{ ...b!, error: 'x' }])).toEqual(['dead']);
    expect(await l.release([c!])).toEqual(['released']);
    expect((await l.complete([d!])).completed).toEqual([true]);
    await queue.remove(e!.id);
    await events.next();

    // each settle again: answered as before, nothing appended
    const stream = await snapshotKeys(redis.raw, k.key('events'));
    expect(await l.retry([{ ...a!, error: 'x', delayMs: 0 }])).toEqual(['pending']);
    expect(await l.fail([{ ...b!, error: 'x' }])).toEqual(['dead']);
    expect(await l.release([c!])).toEqual(['released']);
    expect((await l.complete([d!])).completed).toEqual([true]);
    // fenced off: a job removed under its holder, and a token the job no longer has
    expect(await l.retry([{ ...e!, error: 'x' }])).toEqual(['fenced']);
    expect((await l.complete([e!, { ...a!, token: a!.token + 100 }])).completed).toEqual([false, false]);
    expect(await l.extend([e!], 1000)).toEqual([null]);
    expect(await snapshotKeys(redis.raw, k.key('events'))).toEqual(stream);

    // a claim sent again (its reply lost) answers its jobs and appends nothing
    const op = claimOp(2, 30_000, 'lost-reply');
    const first = await scriptsOf(queue).run(op);
    expect(first.jobs).toHaveLength(2);
    expect(await events.next()).toHaveLength(2);
    const second = await scriptsOf(queue).run(op);
    expect(second.jobs.map((j) => j.id)).toEqual(first.jobs.map((j) => j.id));
    expect(await events.next()).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('remove, reprocess and reprocessDead append removed and reprocessed', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    const l = leases(queue);
    await queue.addBulk([
      { payload: 1, id: 'p', group: 'g' },
      { payload: 2, id: 'd1', group: 'g' },
      { payload: 3, id: 'd2' },
      { payload: 4, id: 'd3' },
    ]);
    await queue.remove('p');
    expect((await events.next()).at(-1)).toEqual({ event: 'removed', jobId: 'JOB:p', group: 'g' });
    const jobs = (await l.claim(3, 30_000)).jobs;
    await l.fail(jobs.map(({ id, token }) => ({ id, token, error: 'x' })));
    await events.next();
    await queue.reprocess('d1');
    expect(await events.next()).toEqual([{ event: 'reprocessed', jobId: 'JOB:d1', group: 'g' }]);
    // a reprocess refused (not dead, no such job) appends nothing
    await expect(queue.reprocess('d1')).rejects.toThrow();
    await expect(queue.remove('nothing')).rejects.toThrow();
    expect(await events.next()).toEqual([]);
    const entries = await events.entries();
    expect(await queue.reprocessDead()).toBe(2);
    expect(await events.next()).toEqual(
      jobs
        .filter((j) => j.id !== 'JOB:d1')
        .map((j) => ({ event: 'reprocessed', jobId: j.id }))
        .sort((x, y) => (x.jobId < y.jobId ? -1 : 1)),
    );
    expect(await events.entries()).toBe(entries + 1);
    // an active job removed: its slot freed, the removal its event
    const [active] = (await l.claim(1, 30_000)).jobs;
    await events.next();
    await queue.remove(active!.id);
    expect(await events.next()).toEqual([{ event: 'removed', jobId: active!.id, ...(active!.group ? { group: active!.group } : {}) }]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('pause, resume, a group paused, resumed and limited: an event each time the state changes, none when it does not', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    await queue.pause();
    await queue.pause();
    await queue.resume();
    await queue.resume();
    await queue.pauseGroup('g');
    await queue.pauseGroup('g');
    await queue.resumeGroup('g');
    await queue.resumeGroup('g');
    await queue.setGroupLimit('g', 2);
    await queue.setGroupLimit('g', 2);
    await queue.setGroupLimit('g', 0);
    await queue.setGroupLimit('g', null);
    await queue.setGroupLimit('g', null);
    expect(await events.next()).toEqual([
      { event: 'paused' },
      { event: 'resumed' },
      { event: 'group-paused', group: 'g' },
      { event: 'group-resumed', group: 'g' },
      { event: 'limit', group: 'g', limit: 2 },
      { event: 'limit', group: 'g', limit: 0 },
      { event: 'limit', group: 'g', limit: null },
    ]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('clean and drain append one event per chunk with its count', async () => {
    const queue = redis.queue();
    const events = follow(queue);
    const l = leases(queue);
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })));
    const jobs = (await l.claim(3, 30_000)).jobs;
    await l.complete(jobs.slice(0, 2).map(({ id, token }) => ({ id, token })));
    await l.fail([{ id: jobs[2]!.id, token: jobs[2]!.token, error: 'x' }]);
    await events.next();
    expect(await queue.clean('completed')).toHaveLength(2);
    expect(await queue.clean('dead')).toHaveLength(1);
    expect(await queue.clean('dead')).toHaveLength(0);
    expect(await events.next()).toEqual([
      { event: 'cleaned', count: 2, state: 'completed' },
      { event: 'cleaned', count: 1, state: 'dead' },
    ]);
    await queue.addBulk([
      { payload: 1, group: 'g' },
      { payload: 2 },
      { payload: 3, delayMs: 60_000 },
    ]);
    await events.next();
    // a chunk of two (the ungrouped lane, then g's), then the scheduled job, then nothing
    expect(await queue.drain({ limit: 2 })).toBe(2);
    expect(await queue.drain()).toBe(1);
    expect(await queue.drain()).toBe(0);
    expect(await events.next()).toEqual([
      { event: 'drained', count: 2 },
      { event: 'drained', count: 1 },
    ]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('obliterate deletes the stream with the rest', async () => {
    const queue = redis.queue();
    await queue.addBulk([1, 2].map((payload) => ({ payload })));
    expect(await redis.raw.exists(keysOf(queue).key('events'))).toBe(1);
    expect(await queue.obliterate()).toBe(true);
    // the enqueue's request record is left to its TTL (docs/design.md, "Admin in bulk")
    expect((await redis.raw.keys(`emq:{${queue.name}}:*`)).filter((key) => !key.includes(':req:'))).toEqual([]);
  });

  it('with events off (maxLen 0) a full walk writes no stream, and turning them off deletes it', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('before');
    expect(await redis.raw.exists(k.key('events'))).toBe(1);
    expect(await queue.setEvents({ maxLen: 0 })).toEqual({ maxLen: 0, resultBytes: 1024 });
    expect(await redis.raw.exists(k.key('events'))).toBe(0);

    const l = leases(queue);
    await queue.addBulk([
      { payload: 1, id: 'a', group: 'g', maxAttempts: 1 },
      { payload: 2, id: 'b' },
      { payload: 3, id: 'c', delayMs: 20 },
      { payload: 4, id: 'd', maxAttempts: 2 },
      { payload: 5, id: 'e' },
    ]);
    await sleep(30);
    await l.promote();
    const jobs = (await l.claim(6, 20)).jobs;
    expect(jobs).toHaveLength(6);
    const held = Object.fromEntries(jobs.map((j) => [j.id, { id: j.id, token: j.token }]));
    await l.complete([held['JOB:b']!]);
    await l.retry([{ ...held['JOB:d']!, error: 'x', delayMs: 0 }]);
    await l.fail([{ ...held['JOB:c']!, error: 'x' }]);
    await l.release([held['JOB:e']!]);
    await sleep(40);
    await l.beat({ n: 5, leaseMs: 30_000 });
    await queue.reprocess('a');
    await queue.reprocessDead();
    await queue.pause();
    await queue.resume();
    await queue.pauseGroup('g');
    await queue.resumeGroup('g');
    await queue.setGroupLimit('g', 1);
    await queue.remove('b').catch(() => undefined);
    await queue.clean('completed');
    await queue.drain();
    expect(await redis.raw.exists(k.key('events'))).toBe(0);
    expect(await queue.readEvents()).toEqual({ events: [], next: '0' });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // back on: the next transition writes it again
    expect(await queue.setEvents({ maxLen: 50 })).toEqual({ maxLen: 50, resultBytes: 1024 });
    await queue.add('after');
    expect((await queue.readEvents()).events.map((e) => e.event)).toEqual(['added']);
  });

  it('setEvents stores what it is given, leaves the rest, trims at once, and refuses bad input writing nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    expect(await queue.eventsSettings()).toEqual({ maxLen: 10_000, resultBytes: 1024 });
    expect(await queue.setEvents({ resultBytes: 0 })).toEqual({ maxLen: 10_000, resultBytes: 0 });
    expect(await queue.setEvents({})).toEqual({ maxLen: 10_000, resultBytes: 0 });
    expect(await queue.setEvents({ maxLen: 10_000_000, resultBytes: 1_048_576 })).toEqual({ maxLen: 10_000_000, resultBytes: 1_048_576 });
    expect(await queue.eventsSettings()).toEqual({ maxLen: 10_000_000, resultBytes: 1_048_576 });

    // a lower cap trims the stream at once, to within the slack MAXLEN ~ allows
    for (let i = 0; i < 5; i++) await queue.addBulk(Array.from({ length: 100 }, () => ({ payload: 0 })));
    for (let i = 0; i < 300; i++) await queue.add(i);
    expect(await redis.raw.xlen(k.key('events'))).toBe(305);
    await queue.setEvents({ maxLen: 10 });
    expect(await redis.raw.xlen(k.key('events'))).toBeLessThanOrEqual(110);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const before = await snapshotKeys(redis.raw, `emq:{${queue.name}}:*`);
    for (const bad of [{ maxLen: -1 }, { maxLen: 10_000_001 }, { maxLen: 1.5 }, { resultBytes: 1_048_577 }, { maxLen: 5, resultBytes: -2 }, { maxLen: '5' }]) {
      await expect(queue.setEvents(bad as never), JSON.stringify(bad)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(queue.setEvents(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    // past the core's checks, the script refuses too, before any write
    await expect(scriptsOf(queue).run(setEventsOp(10_000_001, null))).rejects.toMatchObject({ code: 'EMQARG' });
    await expect(scriptsOf(queue).run(setEventsOp(5, 1_048_577))).rejects.toMatchObject({ code: 'EMQARG' });
    expect(await snapshotKeys(redis.raw, `emq:{${queue.name}}:*`)).toEqual(before);
  });

  it('readEvents pages by whole entries: at most limit events, at least one entry; next goes on from there', async () => {
    const queue = redis.queue();
    await queue.add('a', { id: 'a' });
    await queue.addBulk([{ payload: 0, id: 'b1' }, { payload: 0, id: 'b2' }, { payload: 0, id: 'b3' }]);
    await queue.add('c', { id: 'c' });

    const first = await queue.readEvents({ limit: 2 });
    expect(first.events.map((e) => (e as { jobId: string }).jobId)).toEqual(['JOB:a']);
    const second = await queue.readEvents({ after: first.next, limit: 2 });
    // an entry of three events is not split: it comes whole, alone, past the limit
    expect(second.events.map((e) => (e as { jobId: string }).jobId)).toEqual(['JOB:b1', 'JOB:b2', 'JOB:b3']);
    expect(new Set(second.events.map((e) => e.id)).size).toBe(1);
    expect(second.next).toBe(second.events[0]!.id);
    const third = await queue.readEvents({ after: second.next, limit: 4 });
    expect(third.events.map((e) => (e as { jobId: string }).jobId)).toEqual(['JOB:c']);
    expect(await queue.readEvents({ after: third.next })).toEqual({ events: [], next: third.next });
    // the whole stream at once; and after the greatest id there can be, nothing
    expect((await queue.readEvents({ after: '0', limit: 1000 })).events).toHaveLength(5);
    expect((await queue.readEvents({ after: '0-0' })).events).toHaveLength(5);
    const last = '18446744073709551615-18446744073709551615';
    expect(await queue.readEvents({ after: last })).toEqual({ events: [], next: last });
    // a queue that never wrote an event reads as empty
    expect(await redis.queue().readEvents()).toEqual({ events: [], next: '0' });
  });

  it('readEvents refuses a malformed after or limit with InvalidArgumentError', async () => {
    const queue = redis.queue();
    await queue.add('a');
    for (const after of ['', '$', '-', '+', '1', '1-', '-1', '1-2-3', 'x-1', '1-x', '18446744073709551616-0', '0-18446744073709551616', ' 1-0', 5]) {
      await expect(queue.readEvents({ after: after as string }), JSON.stringify(after)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    for (const limit of [0, 1001, 1.5, -1, Number.NaN]) {
      await expect(queue.readEvents({ limit }), String(limit)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    // past the core's checks, the script refuses too
    await expect(scriptsOf(queue).run(readEventsOp('$', 10))).rejects.toMatchObject({ code: 'EMQARG' });
    await expect(scriptsOf(queue).run(readEventsOp('99999999999999999999-0', 10))).rejects.toMatchObject({ code: 'EMQARG' });
    await expect(scriptsOf(queue).run(readEventsOp('0', 1001))).rejects.toMatchObject({ code: 'EMQARG' });
  });

  it('the stream stays within its cap over 20,000 jobs enqueued, claimed and completed (cap 1000)', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setEvents({ maxLen: 1000 });
    const slack = 100; // stream-node-max-entries: MAXLEN ~ trims whole nodes (test/invariants.ts, (h))
    const within = async (): Promise<number> => {
      const length = await redis.raw.xlen(k.key('events'));
      expect(length).toBeLessThanOrEqual(1000 + slack);
      return length;
    };
    for (let i = 0; i < 20; i++) await queue.addBulk(Array.from({ length: 1000 }, (_, j) => ({ payload: j, ...(j % 3 === 0 ? { group: `g${j % 7}` } : {}) })));
    await within();
    // batches of ten: some 2,000 calls, an entry each, twice the cap
    const l = leases(queue);
    let claimed = (await l.claim(10, 60_000)).jobs;
    let completed = 0;
    let calls = 0;
    let most = 0;
    while (claimed.length > 0) {
      const next = await l.complete(
        claimed.map(({ id, token }) => ({ id, token })),
        { claimN: 10, leaseMs: 60_000 },
      );
      completed += next.completed.filter(Boolean).length;
      claimed = next.claimed!.jobs;
      if (++calls % 100 === 0) most = Math.max(most, await within());
    }
    expect(completed).toBe(20_000);
    expect(most).toBeGreaterThanOrEqual(1000);
    await within();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    // the newest events are kept: the last one read is the last completion
    let page = await queue.readEvents({ limit: 1000 });
    let lastEvent: QueueEvent | undefined;
    while (page.events.length > 0) {
      lastEvent = page.events.at(-1);
      page = await queue.readEvents({ after: page.next, limit: 1000 });
    }
    expect(lastEvent).toMatchObject({ event: 'completed' });
  }, 120_000);

  it('the checker knows the stream: a bad event, a job id of another kind, a stream past its cap or with events off', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.add('a');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
    const events = k.key('events');
    const found = async (): Promise<string[]> => checkInvariants(redis.raw, queue.name);

    const id = await redis.raw.xadd(events, '*', 'e', 'added', 'j', 'FLOW:1');
    expect((await found()).join('\n')).toMatch(/names "FLOW:1", not a JOB: id/);
    await redis.raw.xdel(events, id!);
    const odd = await redis.raw.xadd(events, '*', 'e', 'exploded', 'j', 'JOB:1');
    expect((await found()).join('\n')).toMatch(/cannot read/);
    await redis.raw.xdel(events, odd!);
    const missing = await redis.raw.xadd(events, '*', 'e', 'retried', 'j', 'JOB:1', 'x', 'no due time');
    expect((await found()).join('\n')).toMatch(/cannot read/);
    await redis.raw.xdel(events, missing!);
    expect(await found()).toEqual([]);

    await redis.raw.hset(k.key('meta'), 'ecap', '5');
    for (let i = 0; i < 110; i++) await redis.raw.xadd(events, '*', 'e', 'paused');
    expect((await found()).join('\n')).toMatch(/over the cap of 5/);
    await redis.raw.hset(k.key('meta'), 'ecap', '0');
    expect((await found()).join('\n')).toMatch(/exists .* with events off/);
    await redis.raw.del(events);
    await redis.raw.hset(k.key('meta'), 'ecap', 'lots');
    expect((await found()).join('\n')).toMatch(/meta ecap holds "lots"/);
    await redis.raw.hdel(k.key('meta'), 'ecap');
    expect(await found()).toEqual([]);
  });
});
