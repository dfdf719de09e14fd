import { describe, expect, it } from 'vitest';
import { Flows, InvalidArgumentError, JobFailedError, type Queue } from '../../src/index.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneSize, leases, sleep, snapshotKeys, useRedis } from '../helpers.js';

/**
 * Expiry (`expireAfterMs`, `expireAt`: docs/design/job-controls.md): a job not started by its
 * expiry never starts. A claim (or a beat) that finds it due sends it to dead with EMQEXPIRED
 * before it claims, so it costs no handler run and its group's turn goes to the next job; a job
 * started in time runs, retries included; the dedupe key and a flow parent follow; a reprocess
 * runs it on purpose. Jobs without one cost nothing more (commands-per-path).
 */
describe('expiry', () => {
  const redis = useRedis();
  const whole = async (...queues: Array<Queue<unknown>>): Promise<void> => {
    for (const q of queues) expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  };

  it('sends a job not started by its expiry to dead with EMQEXPIRED at the claim, and gives its group\'s turn to the next', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    await queue.setGroupLimit('g', 1);
    const late = await queue.add('late', { group: 'g', expireAfterMs: 30 });
    const next = await queue.add('next', { group: 'g' });
    const plain = await queue.add('plain', { expireAfterMs: 60_000 });
    expect(await redis.raw.hget(k.key('meta'), 'xp')).toBe('1');
    const record = await queue.getJob(late.id);
    expect(record!.expiresAt).toBeGreaterThan(record!.createdAt);
    expect(record!.expiresAt! - record!.createdAt).toBe(30);
    await sleep(60);
    const { jobs } = await leases(queue).claim(10, 30_000);
    // the expired job is never handed out; its group's one slot goes to the next job
    expect(jobs.map((j) => j.payload).sort()).toEqual(['next', 'plain']);
    const dead = await queue.getJob(late.id);
    expect(dead).toMatchObject({ state: 'dead', attemptsStarted: 0 });
    expect(dead!.error).toMatch(/^EMQEXPIRED: not started by its expiry/);
    expect(await laneSize(redis.raw, k, 'g')).toBe(0);
    const { events } = await queue.readEvents();
    expect(events.find((e) => e.event === 'dead' && e.jobId === late.id)).toMatchObject({ error: dead!.error });
    // started in time: it runs, and its retry after the expiry runs too
    const held = jobs.find((j) => j.payload === 'plain')!;
    await leases(queue).retry([{ id: held.id, token: held.token, error: 'x', delayMs: 0 }]);
    expect((await queue.getJob(plain.id))!.state).toBe('pending');
    void next;
    await whole(queue);
  });

  it('expires a delayed job whose expiry comes before it could start, and one in a paused queue, at a beat', async () => {
    const queue = redis.queue<string>();
    const delayed = await queue.add('delayed', { delayMs: 60_000, expireAfterMs: 20 });
    await queue.pause();
    const paused = await queue.add('paused', { expireAt: (await redis.serverNow()) + 20 });
    await sleep(50);
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    expect((await queue.getJob(delayed.id))!.state).toBe('dead');
    expect((await queue.getJob(paused.id))!.state).toBe('dead');
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, scheduled: 0, dead: 2 });
    await queue.resume();
    expect((await leases(queue).claim(5, 30_000)).jobs).toEqual([]);
    // a reprocess runs it on purpose: its expiry is gone
    await queue.reprocess(delayed.id);
    expect((await queue.getJob(delayed.id))!.expiresAt).toBeUndefined();
    expect((await leases(queue).claim(5, 30_000)).jobs.map((j) => j.payload)).toEqual(['delayed']);
    await whole(queue);
  });

  it('keeps a job given back unstarted expirable, and a started one not', async () => {
    const queue = redis.queue<string>();
    // an expiry long enough for the claim and the release to land first on a loaded machine
    await queue.add('given back', { expireAfterMs: 400 });
    const l = leases(queue);
    const [held] = (await l.claim(1, 30_000)).jobs;
    await l.release([held!]);
    await sleep(450);
    expect((await l.claim(1, 30_000)).jobs).toEqual([]);
    expect((await queue.getJob(held!.id))!.state).toBe('dead');
    await whole(queue);
  });

  it('releases a dedupe key and tells a flow parent, whose policy decides', async () => {
    const queue = redis.queue<string>();
    const first = await queue.add('a', { dedupe: { key: 'k' }, expireAfterMs: 10 });
    const parents = redis.queue();
    const flows = new Flows(redis.transport);
    await flows.add({ queue: parents.name, id: 'p', payload: 1, children: [{ queue: queue.name, id: 'c', payload: 'c', expireAfterMs: 10, onFailure: 'ignore' }] });
    await sleep(30);
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    expect((await queue.getJob(first.id))!.state).toBe('dead');
    expect((await queue.add('b', { dedupe: { key: 'k' } })).state).toBe('pending');
    // the news goes through the outbox: a beat of the child's queue relays it
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    await sleep(20);
    expect(await parents.getJob('p')).toMatchObject({ state: 'pending', flow: { total: 1, done: 1 } });
    await whole(queue, parents);
  });

  it('expires a scheduler\'s fired job that was not started in time', async () => {
    const queue = redis.queue<string>();
    await queue.upsertScheduler('tick', { every: 100 }, { payload: 'tick', expireAfterMs: 20 });
    expect((await queue.getScheduler('tick'))!.job.expireAfterMs).toBe(20);
    await sleep(120);
    // the beat fires the slot (a second call): the job gets its expiry from its firing
    const fired = await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    expect(fired.fired).toBe(1);
    const [job] = await queue.getJobs('pending');
    expect(job!.expiresAt! - job!.createdAt).toBe(20);
    await sleep(40);
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    expect((await queue.getJob(job!.id))!.state).toBe('dead');
    await whole(queue);
  });

  it('ends a wait for an expired job with JobExpiredError (a JobFailedError)', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('late', { expireAfterMs: 10 });
    await sleep(30);
    await leases(queue).beat({ n: 0, leaseMs: 30_000 });
    await expect(queue.waitFor(id, { timeoutMs: 2_000 })).rejects.toMatchObject({ name: 'JobExpiredError', code: 'EMQEXPIRED' });
    await expect(queue.waitFor(id, { timeoutMs: 2_000 })).rejects.toBeInstanceOf(JobFailedError);
  });

  it('takes many expired jobs out of an arrivals list at once, the live ones kept in their order', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk(Array.from({ length: 40 }, (_, i) => ({ payload: i, group: 'g', ...(i % 2 === 1 ? { expireAfterMs: 10 } : {}) })));
    await sleep(30);
    const { jobs } = await leases(queue).claim(100, 30_000);
    expect(jobs.map((j) => j.payload)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i));
    expect((await queue.stats()).counts).toMatchObject({ dead: 20, pending: 0 });
    await whole(queue);
  });

  it('refuses a bad expiry before any write, and bulk adds take it', async () => {
    const queue = redis.queue<string>();
    const k = keysOf(queue);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    for (const options of [{ expireAfterMs: 0 }, { expireAfterMs: 1.5 }, { expireAt: -1 }, { expireAfterMs: 10, expireAt: 10 }]) {
      await expect(queue.add('x', options)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    const added = await queue.addBulk([{ payload: 'a', expireAfterMs: 10 }, { payload: 'b' }]);
    await sleep(30);
    expect((await leases(queue).claim(5, 30_000)).jobs.map((j) => j.payload)).toEqual(['b']);
    expect((await queue.getJob(added[0]!.id))!.state).toBe('dead');
    await whole(queue);
  });
});
