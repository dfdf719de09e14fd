import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type Handler, type Queue, UnrecoverableError } from '../../src/index.js';
import type { Settled } from '../../src/lease/leases.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, sleep, snapshotKeys, useRedis } from '../helpers.js';
import { runHandler } from '../../src/handler.js';
import { stepPass } from '../step-passes.js';

/**
 * Durable steps (docs/design/steps.md): lua/step.lua records a step under the job's lease,
 * lua/suspend.lua parks a job at a sleep, a wait or an invoke, lua/send-event.lua resumes
 * waiters, and the beat resumes sleepers and times waits out. Each test drives the handlers the
 * way both runtimes do (a claim, runHandler with the leases' step host, a round), and checks the
 * keyspace after every step.
 */
describe('durable steps', () => {
  const redis = useRedis();

  const pass = <P>(queue: Queue<P>, handler: Handler<P>): Promise<Map<string, Settled>> => stepPass(redis.raw, queue, handler);

  it('a step done never runs again: a retry replays it, and each step has the job’s attempts', async () => {
    const queue = redis.queue<{ n: number }>();
    const ran = { a: 0, b: 0 };
    let failB = 2;
    const handler: Handler<{ n: number }> = async (job, { step }) => {
      const a = await step.run('a', () => {
        ran.a++;
        return { doubled: job.payload.n * 2, at: new Date(0) };
      });
      const b = await step.run('b', () => {
        ran.b++;
        if (failB-- > 0) throw new Error('b is flaky');
        return a.doubled + 1;
      });
      return { a, b };
    };
    const { id } = await queue.add({ n: 5 }, { maxAttempts: 3, backoff: 0 });
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'pending']]));
    // step a is recorded (as JSON carries it) and restarted the attempts: b's first failure is attempt 1 of 3
    let job = (await queue.getJob(id))!;
    expect(job.steps).toMatchObject([
      { index: 1, name: 'a', kind: 'run', state: 'done', result: { doubled: 10, at: '1970-01-01T00:00:00.000Z' }, attempts: 1 },
      { index: 2, name: 'b', kind: 'run', state: 'failed', attempts: 1 },
    ]);
    expect(job.steps![1]!.error).toContain('b is flaky');
    expect(job.steps![0]!.finishedAt).toBeGreaterThanOrEqual(job.steps![0]!.startedAt!);
    expect(job.attempt).toBe(1);
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'pending']]));
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'completed']]));
    expect(ran).toEqual({ a: 1, b: 3 });
    job = (await queue.getJob(id))!;
    expect(job).toMatchObject({ state: 'completed', result: { a: { doubled: 10 }, b: 11 } });
    expect(job.steps![1]).toMatchObject({ state: 'done', result: 11, attempts: 3 });
  });

  it('a sleep holds no slot and no lease, is not an attempt, and never resumes before its due time', async () => {
    const queue = redis.queue<null>();
    await queue.setGroupLimit('g', 1);
    const ran: string[] = [];
    const handler: Handler<null> = async (job, { step }) => {
      await step.run('before', () => void ran.push(`before ${job.id}`));
      await step.sleep('nap', 300);
      await step.run('after', () => void ran.push(`after ${job.id}`));
    };
    const first = await queue.add(null, { group: 'g', maxAttempts: 1 });
    const second = await queue.add(null, { group: 'g', maxAttempts: 1 });
    const started = Date.now();
    // the first sleeps and frees the group's one slot: the second runs in the next pass
    expect(await pass(queue, handler)).toEqual(new Map([[first.id, 'scheduled']]));
    expect(await queue.stats()).toMatchObject({ counts: { scheduled: 1, sleeping: 1, active: 0, pending: 1 } });
    const asleep = (await queue.getJob(first.id))!;
    expect(asleep.steps![1]).toMatchObject({ name: 'nap', kind: 'sleep', state: 'sleeping' });
    expect(asleep.steps![1]!.until).toBe(asleep.runAt);
    expect(await pass(queue, handler)).toEqual(new Map([[second.id, 'scheduled']]));
    // not due yet: nothing to claim
    expect(await pass(queue, handler)).toEqual(new Map());
    while (Date.now() - started < 320) await sleep(20);
    let settled = new Map<string, Settled>();
    while (settled.size < 2) {
      for (const [id, how] of await pass(queue, handler)) settled.set(id, how);
      await sleep(20);
    }
    expect(settled).toEqual(new Map([[first.id, 'completed'], [second.id, 'completed']]));
    // maxAttempts 1, and two claims each: the sleep's claim was not an attempt
    expect(ran).toEqual([`before ${first.id}`, `before ${second.id}`, `after ${first.id}`, `after ${second.id}`]);
    const done = (await queue.getJob(first.id))!;
    expect(done.steps![1]).toMatchObject({ state: 'done' });
    expect(done.steps![1]!.finishedAt).toBeGreaterThanOrEqual(done.steps![1]!.until!);
    expect((await queue.stats()).counts.sleeping).toBe(0);
  });

  it('a wait for an event resumes the jobs whose match it meets, once each; the others time out with null', async () => {
    const queue = redis.queue<{ user: number }>();
    const seen: Array<[number, unknown]> = [];
    const handler: Handler<{ user: number }> = async (job, { step }) => {
      const got = await step.waitForEvent('verified', { event: 'email.verified', match: { 'user.id': job.payload.user }, timeoutMs: 400 });
      seen.push([job.payload.user, got]);
      return got;
    };
    const one = await queue.add({ user: 1 });
    const two = await queue.add({ user: 2 });
    expect(await pass(queue, handler)).toEqual(new Map([[one.id, 'awaiting'], [two.id, 'awaiting']]));
    expect(await queue.stats()).toMatchObject({ counts: { awaiting: 2, pending: 0, active: 0 } });
    expect((await queue.getJob(one.id))!.timeoutAt).toBeGreaterThan(Date.now() - 1000);
    // an event for nobody waiting, then user 1's (1.0 matches 1), then the same send again
    expect(await queue.sendEvent('email.verified', { user: { id: 3 } }, { keepMs: 0 })).toMatchObject({ resumed: 0 });
    expect(await queue.sendEvent('email.verified', { user: { id: 1.0 }, at: 'now' }, { id: 'v-1' })).toEqual({ id: 'v-1', resumed: 1 });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect(await queue.sendEvent('email.verified', { user: { id: 1 } }, { id: 'v-1' })).toEqual({ id: 'v-1', resumed: 1 });
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect(await pass(queue, handler)).toEqual(new Map([[one.id, 'completed']]));
    expect((await queue.getJob(one.id))!.steps![0]).toMatchObject({ kind: 'wait', state: 'done', event: 'email.verified', eventId: 'v-1', result: { user: { id: 1 }, at: 'now' } });
    await sleep(450);
    expect(await pass(queue, handler)).toEqual(new Map([[two.id, 'completed']]));
    expect(seen).toEqual([[1, { user: { id: 1 }, at: 'now' }], [2, null]]);
    expect((await queue.getJob(two.id))!.steps![0]).toMatchObject({ state: 'timed-out' });
  });

  it('an event sent a moment before its wait is recorded is kept, and taken once per wait', async () => {
    const queue = redis.queue<null>();
    const { id } = await queue.add(null);
    // the event arrives while the job is still on its way to the wait
    expect(await queue.sendEvent('paid', { order: 7 })).toMatchObject({ resumed: 0 });
    const got: unknown[] = [];
    const handler: Handler<null> = async (_, { step }) => {
      got.push(await step.waitForEvent('first', { event: 'paid', match: { order: 7 } }));
      got.push(await step.waitForEvent('second', { event: 'paid', match: { order: 7 }, timeoutMs: 100 }));
    };
    // the first wait takes the kept event at once; the second may not take it again and times out
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'pending']]));
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'awaiting']]));
    await sleep(150);
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'completed']]));
    expect(got.slice(-2)).toEqual([{ order: 7 }, null]);
  });

  it('a wait never takes an event sent before its job was created, even in the same millisecond', async () => {
    const queue = redis.queue<{ n: number }>();
    const handler: Handler<{ n: number }> = async (job, { step }) => step.waitForEvent('w', { event: 'paid', match: { n: job.payload.n }, timeoutMs: 60_000 });
    const ids: string[] = [];
    // each job's event sent just before it: often in the same server millisecond
    for (let n = 0; n < 20; n++) {
      await queue.sendEvent('paid', { n });
      ids.push((await queue.add({ n })).id);
    }
    const settled = await pass(queue, handler);
    expect(ids.map((id) => settled.get(id))).toEqual(ids.map(() => 'awaiting'));
  });

  it('a handler that calls its steps in another order than the recorded one dies with a StepError naming both', async () => {
    const queue = redis.queue<null>();
    const { id } = await queue.add(null, { backoff: 0 });
    let names = ['charge', 'ship'];
    const handler: Handler<null> = async (_, { step }) => {
      await step.run(names[0]!, () => 1);
      throw new Error('deploy in between');
    };
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'pending']]));
    names = ['bill'];
    expect(await pass(queue, handler)).toEqual(new Map([[id, 'dead']]));
    const dead = (await queue.getJob(id))!;
    expect(dead.error).toContain('StepError');
    expect(dead.error).toContain('"charge"');
    expect(dead.error).toContain('"bill"');
  });

  it('an invoke runs a child job and resumes with its result; a child that dies is an InvokedJobError', async () => {
    const parents = redis.queue<{ x: number }>();
    const children = redis.queue<{ x: number }>();
    const handler: Handler<{ x: number }> = async (job, { step }) => {
      const squared = await step.invoke<number>('square', { queue: children.name, payload: { x: job.payload.x } });
      return squared + 1;
    };
    const child: Handler<{ x: number }> = async (job) => {
      if (job.payload.x < 0) throw new UnrecoverableError('no negatives');
      return job.payload.x * job.payload.x;
    };
    const ok = await parents.add({ x: 3 });
    const bad = await parents.add({ x: -1 });
    expect(await pass(parents, handler)).toEqual(new Map([[ok.id, 'waiting'], [bad.id, 'waiting']]));
    expect(await parents.stats()).toMatchObject({ counts: { waiting: 2, active: 0 } });
    expect(await pass(children, child)).toEqual(new Map([[`${ok.id}.s1`, 'completed'], [`${bad.id}.s1`, 'dead']]));
    expect(await pass(parents, handler)).toEqual(new Map([[ok.id, 'completed'], [bad.id, 'dead']]));
    expect(await parents.getJob(ok.id)).toMatchObject({ result: 10, steps: [{ kind: 'invoke', state: 'done', child: { queue: children.name, id: `${ok.id}.s1` } }] });
    expect((await parents.getJob(bad.id))!.error).toContain('InvokedJobError');
    expect(await checkInvariants(redis.raw, children.name)).toEqual([]);
  });

  it('an invoke cut off before it suspended finds its child finished on the next run, and records the step done', async () => {
    const parents = redis.queue<null>();
    const kids = redis.queue<null>();
    const handler: Handler<null> = async (_, { step }) => (await step.invoke<number>('child', { queue: kids.name, payload: null })) + 1;
    const { id } = await parents.add(null);
    const l = leases(parents);
    const [job] = (await l.claim(1, 50)).jobs;
    // the child is enqueued, then the runtime dies before its settle: the suspension never lands
    expect((await runHandler(handler, job!, { controller: new AbortController(), steps: l.steps })).kind).toBe('suspend');
    expect(await pass(kids, async () => 9)).toEqual(new Map([[`${id}.s1`, 'completed']]));
    await sleep(80);
    expect(await pass(parents, handler)).toEqual(new Map([[id, 'completed']]));
    expect(await parents.getJob(id)).toMatchObject({ result: 10, steps: [{ kind: 'invoke', state: 'done', child: { queue: kids.name, id: `${id}.s1` } }] });
  });

  it('removing a job that waits for an event takes its steps and its place among the waiters with it', async () => {
    const queue = redis.queue<null>();
    const { id } = await queue.add(null);
    await pass(queue, async (_, { step }) => {
      await step.run('a', () => 'x');
      await step.waitForEvent('w', { event: 'e', match: { k: 'v' } });
    });
    expect((await queue.getJob(id))!.state).toBe('awaiting');
    expect(await queue.getJobs('awaiting')).toMatchObject([{ id }]);
    await queue.remove(id);
    const left = await redis.raw.keys(`${keysOf(queue).prefix}*`);
    expect(left.filter((k) => /:(steps|on|awaiting|sleeping)/.test(k))).toEqual([]);
    expect(await queue.sendEvent('e', { k: 'v' }, { keepMs: 0 })).toMatchObject({ resumed: 0 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a bad event or option is refused before any write', async () => {
    const queue = redis.queue<null>();
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    await expect(queue.sendEvent('has space', {})).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.sendEvent('ok', 10n)).rejects.toMatchObject({ code: 'EMQPAYLOAD' });
    await expect(queue.sendEvent('ok', {}, { keepMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.sendEvent('ok', {}, { id: 'a b' })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
  });
});
