import { describe, expect, it } from 'vitest';
import { Flows, InvalidArgumentError, JobNotFoundError, JobStateError, type Queue } from '../../src/index.js';
import { boundedBeat } from '../../src/serverless/bounded-beat.js';
import { checkFlowLinks } from '../flow-links.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneSize, leases, snapshotKeys, useRedis } from '../helpers.js';

/**
 * Cancel (docs/design/job-controls.md): a job not running ends `cancelled` at once; a running one
 * keeps its lease and slot, is told (renewal answers its reason), and its settle, whatever it was,
 * ends it cancelled; so does the reaper. Terminal, listed, counted, cleaned; flows and dedupe
 * keys follow; a cancel sent twice answers as the first.
 */
describe('cancel', () => {
  const redis = useRedis();
  const whole = async (...queues: Array<Queue<unknown>>): Promise<void> => {
    for (const q of queues) expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  };

  it('ends pending, scheduled and grouped jobs at once: out of their lanes, listed, counted, evented', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const a = await queue.add('a');
    const b = await queue.add('b', { delayMs: 60_000 });
    const c = await queue.add('c', { group: 'g' });
    const d = await queue.add('d', { group: 'g', priority: 3 });
    expect(await queue.cancel(a.id, { reason: 'not needed' })).toEqual({ id: a.id, state: 'cancelled' });
    expect(await queue.cancel(b.id)).toEqual({ id: b.id, state: 'cancelled' });
    expect(await queue.cancel(c.id)).toEqual({ id: c.id, state: 'cancelled' });
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual(['g']);
    expect(await queue.cancel(d.id)).toEqual({ id: d.id, state: 'cancelled' });
    // the group's lane emptied: off the ring; nothing is claimable
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual([]);
    expect(await laneSize(redis.raw, k, 'g')).toBe(0);
    expect(await redis.raw.zcard(k.key('scheduled'))).toBe(0);
    expect((await leases(queue).claim(10, 30_000)).jobs).toEqual([]);
    const record = await queue.getJob(a.id);
    expect(record).toMatchObject({ state: 'cancelled', cancelReason: 'not needed' });
    expect(record!.finishedAt).toBeGreaterThan(0);
    expect((await queue.getJob(b.id))?.cancelReason).toBe('cancelled');
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, scheduled: 0, cancelled: 4 });
    expect((await queue.getJobs('cancelled')).map((j) => j.id)).toEqual([d.id, c.id, b.id, a.id]);
    const { events } = await queue.readEvents();
    expect(events.filter((e) => e.event === 'cancelled').map((e) => ('reason' in e ? [e.jobId, e.reason] : []))).toEqual([
      [a.id, 'not needed'],
      [b.id, 'cancelled'],
      [c.id, 'cancelled'],
      [d.id, 'cancelled'],
    ]);
    await whole(queue);
  });

  it('answers a cancel sent twice as the first, and writes nothing the second time', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    await queue.cancel(id, { reason: 'first' });
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    expect(await queue.cancel(id, { reason: 'second' })).toEqual({ id, state: 'cancelled' });
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
    expect((await queue.getJob(id))?.cancelReason).toBe('first');
  });

  it('refuses a finished job (409), an unknown one (404) and a bad reason, writing nothing', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const { id } = await queue.add('x');
    const dead = await queue.add('y');
    const [job, other] = (await leases(queue).claim(2, 30_000)).jobs;
    await leases(queue).complete([{ id: job!.id, token: job!.token }]);
    await leases(queue).fail([{ id: other!.id, token: other!.token, error: 'boom' }]);
    const before = await snapshotKeys(redis.raw, `${k.prefix}*`);
    await expect(queue.cancel(id)).rejects.toBeInstanceOf(JobStateError);
    await expect(queue.cancel(dead.id)).rejects.toBeInstanceOf(JobStateError);
    await expect(queue.cancel('nope')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.cancel(id, { reason: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.cancel(id, { reason: 'x'.repeat(1001) })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.cancel(id, { reason: 7 as unknown as string })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.cancelJobs({ state: 'completed' as 'pending' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.cancelJobs({ state: 'pending', group: 'bad group' })).rejects.toThrow(/group name/);
    expect(await snapshotKeys(redis.raw, `${k.prefix}*`)).toEqual(before);
  });

  it('keeps a running job leased and in its group slot until its settle, which ends it cancelled whatever it was', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setGroupLimit('g', 1);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await queue.add(i, { group: 'g' })).id);
    const l = leases(queue);
    const settleWith = [
      (h: { id: string; token: number }) => l.complete([h]).then((r) => r.outcomes[0]),
      (h: { id: string; token: number }) => l.retry([{ ...h, error: 'x', delayMs: 0 }]).then((r) => r[0]),
      (h: { id: string; token: number }) => l.retry([{ ...h, error: 'x', delayMs: 60_000 }]).then((r) => r[0]),
      (h: { id: string; token: number }) => l.fail([{ ...h, error: 'x' }]).then((r) => r[0]),
      (h: { id: string; token: number }) => l.release([h]).then((r) => r[0]),
    ];
    for (const settle of settleWith) {
      const [held] = (await l.claim(1, 30_000)).jobs;
      expect(await queue.cancel(held!.id, { reason: 'stop' })).toEqual({ id: held!.id, state: 'cancelling' });
      // still active, still holding the group's only slot
      expect(await queue.getJob(held!.id)).toMatchObject({ state: 'active', cancelReason: 'stop' });
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBe('1');
      expect((await l.claim(1, 30_000)).jobs).toEqual([]);
      expect(await redis.raw.hget(k.key('meta'), 'cx')).toBe('1');
      await whole(queue);
      // a renewal is answered with the reason, and renews
      expect(await l.extend([held!], 30_000)).toEqual([{ cancel: 'stop' }]);
      // a second cancel answers as the first
      expect(await queue.cancel(held!.id)).toEqual({ id: held!.id, state: 'cancelling' });
      expect(await settle(held!)).toBe('cancelled');
      expect(await queue.getJob(held!.id)).toMatchObject({ state: 'cancelled', cancelReason: 'stop' });
      // no run's cancel is pending any more: the settles read no row's cx again
      expect(await redis.raw.hget(k.key('meta'), 'cx')).toBeNull();
      expect(await redis.raw.hget(k.key('gactive'), 'g')).toBeNull();
      // the settle sent again answers the same, whatever settle it is, and so does a renewal
      expect(await settle(held!)).toBe('cancelled');
      expect((await l.complete([held!])).outcomes).toEqual(['cancelled']);
      expect(await l.extend([held!], 30_000)).toEqual([{ cancel: 'stop' }]);
      expect(await queue.cancel(held!.id)).toEqual({ id: held!.id, state: 'cancelled' });
      await whole(queue);
    }
    expect((await queue.stats()).counts).toMatchObject({ cancelled: 5, pending: 0, active: 0, dead: 0, completed: 0 });
  });

  it('ends a running job cancelled when its lease lapses first, and its holder\'s late settle answers cancelled', async () => {
    const queue = redis.queue();
    await queue.add('x', { group: 'g' });
    const l = leases(queue);
    const [held] = (await l.claim(1, 50)).jobs;
    await queue.cancel(held!.id, { reason: 'gone' });
    await new Promise((r) => setTimeout(r, 80));
    await l.beat({ n: 0, leaseMs: 30_000 });
    expect(await queue.getJob(held!.id)).toMatchObject({ state: 'cancelled', cancelReason: 'gone' });
    // a holder that missed the cancel (frozen, its subscription cut) is told by its next renewal, with the reason
    expect(await l.extend([held!], 30_000)).toEqual([{ cancel: 'gone' }]);
    expect((await l.complete([held!])).outcomes).toEqual(['cancelled']);
    expect((await queue.stats()).counts).toMatchObject({ cancelled: 1, pending: 0, active: 0 });
    await whole(queue);
  });

  it('counts the running jobs whose cancel is pending, and a removed one leaves the count', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    const l = leases(queue);
    const [a, b, c] = (await l.claim(3, 30_000)).jobs;
    await queue.cancel(a!.id);
    await queue.cancel(b!.id);
    expect(await redis.raw.hget(k.key('meta'), 'cx')).toBe('2');
    await whole(queue);
    await queue.remove(a!.id);
    expect(await redis.raw.hget(k.key('meta'), 'cx')).toBe('1');
    // a job whose cancel was not asked completes as ever while another's is pending
    expect((await l.complete([c!, b!])).outcomes).toEqual(['completed', 'cancelled']);
    expect(await redis.raw.hget(k.key('meta'), 'cx')).toBeNull();
    await whole(queue);
  });

  it('on the edge: a job cancelled while a bounded beat runs it ends cancelled at its settle, its result not kept', async () => {
    const queue = redis.queue<string>();
    const running = await queue.add('running');
    const waiting = await queue.add('waiting');
    const ran: string[] = [];
    const summary = await boundedBeat(
      queue,
      async (job) => {
        ran.push(job.payload);
        if (job.payload === 'running') {
          // cancelled while it runs, and the second one (claimed by the same beat, not yet started: concurrency 1)
          expect(await queue.cancel(running.id, { reason: 'edge' })).toEqual({ id: running.id, state: 'cancelling' });
          expect(await queue.cancel(waiting.id, { reason: 'edge' })).toEqual({ id: waiting.id, state: 'cancelling' });
        }
        return 'done';
      },
      { deadline: Date.now() + 3_000, jobTimeoutMs: 1_000, concurrency: 1, batchSize: 2 },
    );
    // a beat hears of no cancel: the job it had claimed already starts too, and its settle ends it cancelled as well
    expect(ran).toEqual(['running', 'waiting']);
    expect(summary).toMatchObject({ cancelled: 2, completed: 0 });
    expect(await queue.getJob(running.id)).toMatchObject({ state: 'cancelled', cancelReason: 'edge', result: undefined });
    expect((await queue.getJob(waiting.id))?.state).toBe('cancelled');
    await whole(queue);
  });

  it('ends a wait for the job: waitFor and addAndWait throw JobCancelledError with the reason', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('x');
    // the expectation attached at once: the wait rejects while the cancel is still being answered
    const waiting = expect(queue.waitFor(id, { timeoutMs: 5_000 })).rejects.toMatchObject({ name: 'JobCancelledError', code: 'EMQCANCELLED', reason: 'no longer wanted', jobId: id });
    await new Promise((r) => setTimeout(r, 50));
    await queue.cancel(id, { reason: 'no longer wanted' });
    await waiting;
    // and at once for a job cancelled already
    await expect(queue.waitFor(id, { timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'EMQCANCELLED' });
  });

  it('releases a dedupe key, and the job never runs again', async () => {
    const queue = redis.queue();
    const first = await queue.add('x', { dedupe: { key: 'k' } });
    expect((await queue.add('y', { dedupe: { key: 'k' } })).state).toBe('duplicate');
    await queue.cancel(first.id);
    const again = await queue.add('z', { dedupe: { key: 'k' } });
    expect(again.state).toBe('pending');
    const { jobs } = await leases(queue).claim(10, 30_000);
    expect(jobs.map((j) => j.payload)).toEqual(['z']);
    await whole(queue);
  });

  it('cancels in bulk by state and group, a page at a time', async () => {
    const queue = redis.queue();
    await queue.addBulk(Array.from({ length: 1200 }, (_, i) => ({ payload: i, group: i % 2 === 0 ? 'even' : 'odd' })));
    await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: i })));
    expect(await queue.cancelJobs({ state: 'pending', group: 'even', reason: 'tenant closed' })).toEqual({ cancelled: 600, cancelling: 0 });
    expect(await queue.cancelJobs({ state: 'pending', group: null, limit: 4 })).toEqual({ cancelled: 4, cancelling: 0 });
    expect((await queue.stats()).counts).toMatchObject({ pending: 606, cancelled: 604 });
    const { jobs } = await leases(queue).claim(3, 30_000);
    expect(await queue.cancelJobs({ state: 'active' })).toEqual({ cancelled: 0, cancelling: 3 });
    expect((await leases(queue).complete(jobs)).outcomes).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(await queue.cancelJobs({ state: 'pending' })).toEqual({ cancelled: 603, cancelling: 0 });
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, active: 0, cancelled: 1210 });
    await whole(queue);
    // finished: cleaned like completed and dead jobs
    expect((await queue.clean('cancelled', { limit: 10 })).length).toBe(10);
    expect((await queue.stats()).counts.cancelled).toBe(1200);
    await whole(queue);
  });

  it('lets a flow parent\'s policy read a cancelled child, and cancels a cancelled parent\'s unfinished children', async () => {
    const parents = redis.queue();
    const kids = redis.queue();
    const flows = new Flows(redis.transport);
    await flows.add({ queue: parents.name, id: 'p1', payload: 1, children: [{ queue: kids.name, id: 'c1', payload: 1 }, { queue: kids.name, id: 'c2', payload: 2 }] });
    // a child cancelled under fail-parent fails its parent
    await kids.cancel('c1', { reason: 'not wanted' });
    expect(await parents.getJob('p1')).toMatchObject({ state: 'dead' });
    expect((await parents.getJob('p1'))?.error).toContain('cancelled: not wanted');
    await flows.add({
      queue: parents.name,
      id: 'p2',
      payload: 2,
      children: [
        { queue: kids.name, id: 'i1', payload: 1, onFailure: 'ignore' },
        { queue: kids.name, id: 'i2', payload: 2, onFailure: 'ignore' },
      ],
    });
    // under ignore it counts as finished
    await kids.cancel('i1');
    expect(await parents.getJob('p2')).toMatchObject({ state: 'waiting', flow: { total: 2, done: 1 } });
    // the parent cancelled: its unfinished child is cancelled too, fenced on that parent
    expect(await parents.cancel('p2', { reason: 'order withdrawn' })).toEqual({ id: 'JOB:p2', state: 'cancelled' });
    expect(await kids.getJob('i2')).toMatchObject({ state: 'cancelled', cancelReason: `parent ${parents.name}|JOB:p2 was cancelled` });
    expect(await parents.getJob('p2')).toMatchObject({ state: 'cancelled', cancelReason: 'order withdrawn' });
    await whole(parents, kids);
    expect(await checkFlowLinks(redis.raw, [parents.name, kids.name])).toEqual([]);
    // removing and cleaning cancelled rows tell nobody anything more
    await kids.remove('i2');
    await parents.remove('p2');
    await whole(parents, kids);
  });

  it('ends a sleeping and an awaiting job, and an event sent later resumes nothing', async () => {
    const queue = redis.queue();
    const l = leases(queue);
    await queue.add('sleeper');
    await queue.add('waiter');
    const [sleeper, waiter] = (await l.claim(2, 30_000)).jobs;
    const round = await l.round({
      finished: [
        { job: sleeper!, outcome: { kind: 'suspend', step: { index: 1, how: 's', name: 'nap', number: 60_000, event: '', shape: '', values: '[]' } } },
        { job: waiter!, outcome: { kind: 'suspend', step: { index: 1, how: 'w', name: 'wait', number: -1, event: 'ping', shape: '', values: '[]' } } },
      ],
      leaseMs: 30_000,
    });
    expect(round.settled).toEqual(['scheduled', 'awaiting']);
    expect(await queue.cancel(sleeper!.id)).toEqual({ id: sleeper!.id, state: 'cancelled' });
    expect(await queue.cancel(waiter!.id)).toEqual({ id: waiter!.id, state: 'cancelled' });
    expect((await queue.stats()).counts).toMatchObject({ scheduled: 0, sleeping: 0, awaiting: 0, cancelled: 2 });
    expect(await queue.sendEvent('ping', {})).toMatchObject({ resumed: 0 });
    await whole(queue);
  });
});
