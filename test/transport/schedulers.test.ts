import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidNameError, Leases, Queue, type Transport } from '../../src/index.js';
import { renderMetrics } from '../../src/http/metrics.js';
import { checkInvariants, flagChecker } from '../invariants.js';
import { keysOf, leases, scriptsOf, sleep, snapshotKeys, useRedis } from '../helpers.js';
import { beatOp } from '../../src/ops/beat.js';

/**
 * Schedulers (lua/upsert-scheduler.lua, fire-schedulers.lua, the beat's due schedulers): a slot
 * is a due time the scripts know; a beat reports the slots due and Leases fires them, each fenced
 * on what the beat read, so a slot is fired once however many runtimes beat.
 */
describe('schedulers', () => {
  const redis = useRedis();

  /** One beat (claiming nothing) that fires whatever slots it sees due, as a consumer's timer does. */
  const beat = <P>(queue: Queue<P>) => leases(queue).beat({ n: 0, leaseMs: 30_000 });

  it('an every scheduler fires its first slot at once, then each slot once, with a job made from the template', async () => {
    const queue = redis.queue<{ kind: string }>();
    const k = keysOf(queue);
    const { nextRunAt } = await queue.upsertScheduler(
      'tick',
      { every: 200 },
      { payload: { kind: 'tick' }, group: 'g1', priority: 3, maxAttempts: 7, backoff: 500 },
    );
    expect(nextRunAt).not.toBeNull();
    const first = nextRunAt!;
    // the slot is the queue's next due time: a dry claim reports it, and the upsert rang the schedule bell
    expect(await redis.raw.llen(k.key('sched'))).toBe(1);
    const dry = await leases(queue).claim(1, 30_000);
    expect(dry.nextDueAt).toBe(first);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const fired = await beat(queue);
    expect(fired.fired).toBe(1);
    // the next slot on the grid after the beat's time (first + 200 unless this machine was slower than that)
    const next = first + (Math.floor((Math.max(first, fired.now) - first) / 200) + 1) * 200;
    expect(fired.nextDueAt).toBe(next);
    const jobId = `JOB:tick@${first}`;
    const job = await queue.getJob(jobId);
    expect(job).toMatchObject({
      id: jobId,
      state: 'pending',
      payload: { kind: 'tick' },
      group: 'g1',
      priority: 3,
      maxAttempts: 7,
      backoff: { type: 'fixed', delayMs: 500 },
      scheduler: { id: 'tick', slot: first },
    });
    expect(await queue.getScheduler('tick')).toMatchObject({
      id: 'tick',
      every: 200,
      job: { payload: { kind: 'tick' }, group: 'g1', priority: 3, maxAttempts: 7 },
      nextRunAt: next,
      lastRunAt: first,
      fired: 1,
    });
    // the claimed job carries its scheduler too
    const { jobs } = await leases(queue).claim(1, 30_000);
    expect(jobs[0]).toMatchObject({ id: jobId, payload: { kind: 'tick' }, scheduler: { id: 'tick', slot: first } });
    // its `added` event says which scheduler fired it
    const { events } = await queue.readEvents({ after: '0' });
    expect(events.find((e) => e.event === 'added')).toMatchObject({ jobId, group: 'g1', scheduler: { id: 'tick', slot: first } });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // then it fires the next slot
    await sleep(next - fired.now + 5);
    expect((await beat(queue)).fired).toBe(1);
    expect(await queue.getJob(`JOB:tick@${next}`)).toMatchObject({ state: 'pending' });
    expect(await renderMetrics(redis.transport)).toContain(`emq_scheduler_fired_total{queue="${queue.name}"} 2`);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a slot is fired once when two runtimes see it due: the second firing is fenced and writes nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { nextRunAt } = await queue.upsertScheduler('s', { every: 60_000 }, { payload: 1 });
    // two runtimes' beats both read the slot due before either fires it
    const read = async () => ({ ...(await scriptsOf(queue).run(beatOp({ reapLimit: 0, promoteLimit: 0, n: 0, leaseMs: 1000 }))), jobs: [], fired: 0 });
    const [seenA, seenB] = [await read(), await read()];
    expect(seenA.dueSchedulers).toEqual([{ id: 's', revision: 0, slot: nextRunAt, spec: '{"every":60000}', anchor: nextRunAt }]);
    expect(seenB.dueSchedulers).toEqual(seenA.dueSchedulers);
    const a = await leases(queue).fireDue(seenA);
    expect(a.fired).toBe(1);
    expect(a.nextDueAt).toBe(nextRunAt! + 60_000);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    const b = await leases(queue).fireDue(seenB);
    expect(b.fired).toBe(0);
    // and the first firing sent again (its reply lost): fenced too
    expect((await leases(queue).fireDue(seenA)).fired).toBe(0);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect((await queue.getJobs('pending')).map((j) => j.id)).toEqual([`JOB:s@${nextRunAt}`]);
    expect((await queue.getScheduler('s'))!.fired).toBe(1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('after downtime it fires one catch-up job for the missed slots, then the next slot after now', async () => {
    const queue = redis.queue();
    const { nextRunAt } = await queue.upsertScheduler('s', { every: 100 }, { payload: 'x' });
    await sleep(560);
    const seen = await beat(queue);
    expect(seen.fired).toBe(1);
    const record = (await queue.getScheduler('s'))!;
    expect(record.lastRunAt).toBe(nextRunAt);
    expect(record.fired).toBe(1);
    // the next slot is on the grid, after the beat's time: the missed ones are not fired one by one
    expect(record.nextRunAt! - nextRunAt!).toBeGreaterThanOrEqual(500);
    expect((record.nextRunAt! - nextRunAt!) % 100).toBe(0);
    expect(record.nextRunAt!).toBeGreaterThan(seen.now - 100);
    expect((await queue.getJobs('pending')).map((j) => j.id)).toEqual([`JOB:s@${nextRunAt}`]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('limit and endAt stop it: it stays, firing no more, at the end of the list', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.upsertScheduler('twice', { every: 100, limit: 2 }, { payload: 1 });
    const start = (await queue.getScheduler('twice'))!.nextRunAt!;
    await queue.upsertScheduler('ends', { every: 100, endAt: start + 150 }, { payload: 2 });
    for (let i = 0; i < 4; i++) {
      await beat(queue);
      await sleep(110);
    }
    const twice = (await queue.getScheduler('twice'))!;
    expect(twice).toMatchObject({ fired: 2, nextRunAt: null, limit: 2 });
    const ends = (await queue.getScheduler('ends'))!;
    expect(ends.nextRunAt).toBeNull();
    expect(ends.lastRunAt).toBeLessThanOrEqual(start + 150);
    expect(await redis.raw.zscore(k.key('schedulers'), 'twice')).toBe('inf');
    // a queue whose schedulers fire no more has nothing due
    expect((await leases(queue).claim(5, 1000)).jobs.length).toBeGreaterThan(0);
    const dry = await leases(queue).claim(100, 1000);
    expect(dry.nextDueAt).toBeNull();
    expect((await queue.listSchedulers()).map((s) => s.id).sort()).toEqual(['ends', 'twice']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('an upsert changes it in place: the same spec keeps its slot, a new one starts from now, never re-firing a slot', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const first = await queue.upsertScheduler('s', { every: 60_000 }, { payload: 'a' });
    // the same spec with another job: the slot stays, the job changes
    const second = await queue.upsertScheduler('s', { every: 60_000 }, { payload: 'b', group: 'g' });
    expect(second.nextRunAt).toBe(first.nextRunAt);
    expect(await redis.raw.zcard(k.key('schedulers'))).toBe(1);
    await beat(queue);
    expect(await queue.getJob(`JOB:s@${first.nextRunAt}`)).toMatchObject({ payload: 'b', group: 'g' });
    // the same upsert sent again (its reply lost): still one scheduler, the slot where it was
    const again = await queue.upsertScheduler('s', { every: 60_000 }, { payload: 'b', group: 'g' });
    expect(again.nextRunAt).toBe(first.nextRunAt! + 60_000);
    // a new spec: anchored now, but never at or before the slot it fired last
    const changed = await queue.upsertScheduler('s', { every: 1000 }, { payload: 'c' });
    expect(changed.nextRunAt!).toBeGreaterThan(first.nextRunAt!);
    const record = (await queue.getScheduler('s'))!;
    expect(record).toMatchObject({ every: 1000, fired: 1, lastRunAt: first.nextRunAt, job: { payload: 'c' } });
    expect(record.job.group).toBeUndefined();
    // to a cron spec: its next slot is a whole second
    const cron = await queue.upsertScheduler('s', { cron: '*/2 * * * * *' }, { payload: 'd' });
    expect(cron.nextRunAt! % 2000).toBe(0);
    expect((await queue.getScheduler('s'))!.every).toBeUndefined();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a paused queue still fires (the job waits, no doorbell); startAt in the future waits for it; a limit lowered under fired stops it', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.pause();
    await queue.upsertScheduler('p', { every: 60_000 }, { payload: 1 });
    await redis.raw.del(k.key('wake'));
    expect((await beat(queue)).fired).toBe(1);
    expect(await queue.getJobs('pending')).toHaveLength(1);
    expect(await redis.raw.llen(k.key('wake'))).toBe(0);
    await queue.resume();
    expect((await leases(queue).claim(5, 1000)).jobs).toHaveLength(1);
    // startAt ahead: the first slot is startAt itself, not now
    const now = (await leases(queue).claim(1, 1000)).now;
    const later = await queue.upsertScheduler('later', { every: 1000, startAt: now + 60_000 }, { payload: 2 });
    expect(later.nextRunAt).toBe(now + 60_000);
    expect(await queue.getScheduler('later')).toMatchObject({ startAt: now + 60_000, nextRunAt: now + 60_000 });
    // fired once, then a limit of 1: it fires no more
    const limited = await queue.upsertScheduler('p', { every: 60_000, limit: 1 }, { payload: 1 });
    expect(limited.nextRunAt).toBeNull();
    expect(await queue.getScheduler('p')).toMatchObject({ fired: 1, limit: 1, nextRunAt: null });
    // an endAt already past: made, firing nothing
    expect((await queue.upsertScheduler('over', { every: 1000, endAt: now - 1 }, { payload: 3 })).nextRunAt).toBeNull();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a round whose firing fails is still recorded; its slot stays due and is looked at again a second later', async () => {
    const queue = redis.queue();
    await queue.upsertScheduler('s', { every: 60_000 }, { payload: 1 });
    const { id } = await queue.add('work');
    // a transport whose fire-schedulers request fails (Redis gone for that one request)
    const inner = queue.transport;
    const failing: Transport = {
      evalsha: (calls) => (calls.some((c) => c.script.name === 'fireSchedulers') ? Promise.reject(new Error('connection lost')) : inner.evalsha(calls)),
      eval: (calls) => (calls.some((c) => c.script.name === 'fireSchedulers') ? Promise.reject(new Error('connection lost')) : inner.eval(calls)),
      ping: () => inner.ping(),
      close: async () => {},
    };
    const flaky = new Leases(new Queue(failing, queue.name));
    const { claimed } = await flaky.round({ claim: 5, beat: true, leaseMs: 30_000 });
    expect(claimed!.jobs.map((j) => j.id)).toEqual([id]);
    expect(claimed!.fired).toBe(0);
    expect(claimed!.nextDueAt).toBe(claimed!.now + 1000);
    expect((await queue.getScheduler('s'))!.fired).toBe(0);
    // the next beat over a working transport fires it
    expect((await beat(queue)).fired).toBe(1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('remove stops it; the jobs it fired stay; removing again answers false', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.upsertScheduler('s', { every: 100 }, { payload: 1 });
    await beat(queue);
    expect(await queue.removeScheduler('s')).toBe(true);
    expect(await queue.removeScheduler('s')).toBe(false);
    expect(await queue.getScheduler('s')).toBeNull();
    expect(await redis.raw.exists(k.key('schedulers'), `${k.prefix}scheduler:s`)).toBe(0);
    await sleep(120);
    expect((await beat(queue)).fired).toBe(0);
    expect(await queue.getJobs('pending')).toHaveLength(1);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a cron scheduler with seconds fires on its whole-second slots', async () => {
    const queue = redis.queue();
    const { nextRunAt } = await queue.upsertScheduler('sec', { cron: '* * * * * *' }, { payload: 's' });
    expect(nextRunAt! % 1000).toBe(0);
    const now = (await leases(queue).claim(1, 1000)).now;
    await sleep(nextRunAt! - now + 5);
    const seen = await beat(queue);
    expect(seen.fired).toBe(1);
    expect(seen.nextDueAt! % 1000).toBe(0);
    expect(seen.nextDueAt!).toBeGreaterThan(nextRunAt!);
    expect(await queue.getJob(`JOB:sec@${nextRunAt}`)).toMatchObject({ state: 'pending', payload: 's' });
  });

  it('bad specs and jobs are refused naming the field, before anything is written', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    const refused: Array<[unknown, unknown, RegExp]> = [
      [{ cron: '* * * * *', every: 1000 }, { payload: 1 }, /cron or every, not both/],
      [{}, { payload: 1 }, /needs cron or every/],
      [{ cron: '61 * * * *' }, { payload: 1 }, /cron .* not a valid pattern/],
      [{ cron: '* * *' }, { payload: 1 }, /cron must have 5 fields/],
      [{ cron: '0 0 30 2 *' }, { payload: 1 }, /never fires/],
      [{ cron: '* * * * *', tz: 'Mars/Phobos' }, { payload: 1 }, /tz must be an IANA time zone/],
      [{ every: 1000, tz: 'Europe/Berlin' }, { payload: 1 }, /tz is for cron/],
      [{ every: 99 }, { payload: 1 }, /every must be an integer number of ms, at least 100/],
      [{ every: 1000, startAt: 'soon' }, { payload: 1 }, /startAt must be an instant/],
      [{ every: 1000, startAt: 2000, endAt: 1000 }, { payload: 1 }, /endAt must not be before startAt/],
      [{ every: 1000, limit: 0 }, { payload: 1 }, /limit must be an integer >= 1/],
      [{ every: 1000, when: 'now' }, { payload: 1 }, /unknown spec field "when"/],
      [{ every: 1000 }, { payload: 1, delayMs: 5 }, /unknown job field "delayMs"/],
      [{ every: 1000 }, { group: 'g' }, /needs a payload/],
      [{ every: 1000 }, { payload: 1, maxAttempts: 0 }, /maxAttempts/],
    ];
    for (const [spec, job, message] of refused) {
      await expect(queue.upsertScheduler('s', spec as never, job as never)).rejects.toThrow(InvalidArgumentError);
      await expect(queue.upsertScheduler('s', spec as never, job as never)).rejects.toThrow(message);
    }
    await expect(queue.upsertScheduler('no spaces', { every: 1000 }, { payload: 1 })).rejects.toThrow(InvalidNameError);
    await expect(queue.upsertScheduler('s', { every: 1000 }, { payload: 1, group: 'a b' })).rejects.toThrow(InvalidNameError);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
  });

  it('obliterate deletes the schedulers first; the checker flags a broken scheduler row', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.upsertScheduler('a', { every: 60_000, limit: 3 }, { payload: 1 });
    await queue.upsertScheduler('b', { cron: '0 * * * *' }, { payload: 2 });
    await beat(queue);
    const expectFlag = flagChecker(redis.raw, queue.name);
    const row = `${k.prefix}scheduler:a`;
    const n = (await redis.raw.hget(row, 'n'))!;
    await expectFlag(() => redis.raw.hset(row, 'n', '5'), () => redis.raw.hset(row, 'n', n), /next slot n 5 is not its score/);
    await expectFlag(() => redis.raw.zrem(k.key('schedulers'), 'a'), () => redis.raw.zadd(k.key('schedulers'), n, 'a'), /a row not in schedulers/);
    await expectFlag(() => redis.raw.hset(row, 'f', '4'), () => redis.raw.hset(row, 'f', '1'), /over its limit 3/);
    await expectFlag(() => redis.raw.hset(row, 'k', '{"every":5}'), () => redis.raw.hset(row, 'k', '{"every":60000,"limit":3}'), /spec \(k\) is not a spec/);
    await expectFlag(() => redis.raw.hset(row, 'l', n), async () => redis.raw.hset(row, 'l', String(Number(n) - 60_000)), /not after its last/);
    expect(await queue.obliterate()).toBe(true);
    expect(await redis.raw.keys(`${k.prefix}*`)).toEqual([]);
  });
});
