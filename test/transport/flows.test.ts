import { describe, expect, it } from 'vitest';
import { Flows, InvalidArgumentError, type Job, type Queue } from '../../src/index.js';
import { checkFlowLinks } from '../flow-links.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/**
 * Flows (docs/design.md, "Flows"): a tree written children first, parents `waiting` until their
 * children finish, released once through the outbox, failure policies, removal and reprocess.
 */
describe('flows', () => {
  const redis = useRedis();
  const consistent = async (...queues: Array<Queue<unknown>>): Promise<void> => {
    expect(await checkFlowLinks(redis.raw, queues.map((q) => q.name))).toEqual([]);
  };
  /** Claims and completes every claimable job of `queue`, each with `result(job)`; answers the jobs. */
  const runAll = async (queue: Queue<unknown>, result: (job: Job<unknown>) => unknown = () => undefined): Promise<Array<Job<unknown>>> => {
    const l = leases(queue);
    const { jobs } = await l.claim(1000, 30_000);
    if (jobs.length > 0) await l.complete(jobs.map((job) => ({ id: job.id, token: job.token, result: JSON.stringify(result(job)) })));
    return jobs;
  };

  it('writes a tree children first, and releases the parent once when its last child completes', async () => {
    const pdf = redis.queue();
    const render = redis.queue();
    const flows = new Flows(redis.transport);
    const tree = await flows.add({
      queue: pdf.name,
      id: 'report-7',
      payload: { report: 7 },
      children: [1, 2, 3].map((page) => ({ queue: render.name, payload: { page } })),
    });
    expect(tree).toEqual({
      queue: pdf.name,
      id: 'JOB:report-7',
      state: 'waiting',
      children: [0, 1, 2].map((i) => ({ queue: render.name, id: `JOB:report-7.${i}`, state: 'pending', children: [] })),
    });
    expect((await pdf.stats()).counts).toMatchObject({ pending: 0, waiting: 1 });
    expect(await pdf.getJob('report-7')).toMatchObject({ state: 'waiting', flow: { total: 3, done: 0 } });
    expect(await render.getJob('report-7.0')).toMatchObject({ state: 'pending', parent: { queue: pdf.name, id: 'JOB:report-7', onFailure: 'fail-parent' } });
    await consistent(pdf, render);

    // two children complete: the parent still waits
    const l = leases(render);
    const { jobs } = await l.claim(3, 30_000);
    expect(jobs.map((j) => j.parent?.id)).toEqual(['JOB:report-7', 'JOB:report-7', 'JOB:report-7']);
    await l.complete(jobs.slice(0, 2).map((j) => ({ id: j.id, token: j.token, result: JSON.stringify({ page: (j.payload as { page: number }).page }) })));
    expect(await pdf.getJob('report-7')).toMatchObject({ state: 'waiting', flow: { total: 3, done: 2 } });
    expect(await leases(pdf).claim(1, 30_000)).toMatchObject({ jobs: [] });
    await consistent(pdf, render);

    // the last one releases it, and its handler sees every result
    await l.complete([{ id: jobs[2]!.id, token: jobs[2]!.token, result: '{"page":3}' }]);
    expect(await redis.raw.zcard(keysOf(render).key('meta').replace(/meta$/, 'outbox'))).toBe(0);
    const [parent] = (await leases(pdf).claim(1, 30_000)).jobs;
    expect(parent?.id).toBe('JOB:report-7');
    expect(parent?.children).toEqual([1, 2, 3].map((page, i) => ({ queue: render.name, id: `JOB:report-7.${i}`, state: 'completed', result: { page } })));
    await consistent(pdf, render);
  });

  it('is duplicates when the same tree is added again', async () => {
    const a = redis.queue();
    const b = redis.queue();
    const flows = new Flows(redis.transport);
    const flow = { queue: a.name, id: 'f', payload: 1, children: [{ queue: b.name, payload: 2 }] };
    await flows.add(flow);
    expect(await flows.add(flow)).toEqual({ queue: a.name, id: 'JOB:f', state: 'duplicate', children: [{ queue: b.name, id: 'JOB:f.0', state: 'duplicate', children: [] }] });
    expect((await b.stats()).counts.pending).toBe(1);
    await consistent(a, b);
  });

  it('nests: a middle node waits for its children, and its completion releases the root', async () => {
    const q = [redis.queue(), redis.queue(), redis.queue()] as const;
    const flows = new Flows(redis.transport);
    await flows.add({
      queue: q[0].name,
      id: 'root',
      payload: 0,
      children: [{ queue: q[1].name, payload: 1, children: [{ queue: q[2].name, payload: 2 }, { queue: q[2].name, payload: 3 }] }],
    });
    expect(await q[1].getJob('root.0')).toMatchObject({ state: 'waiting', parent: { id: 'JOB:root' } });
    expect(await runAll(q[2], (j) => j.payload)).toHaveLength(2);
    const [middle] = await runAll(q[1], (j) => (j.children ?? []).map((c) => c.result));
    expect(middle?.children?.map((c) => c.result)).toEqual([2, 3]);
    const [root] = await runAll(q[0]);
    expect(root?.children).toEqual([{ queue: q[1].name, id: 'JOB:root.0', state: 'completed', result: [2, 3] }]);
    await consistent(...q);
  });

  it("fails the parent with a child's error (fail-parent), and a reprocessed child makes it wait again", async () => {
    const p = redis.queue();
    const c = redis.queue();
    await new Flows(redis.transport).add({ queue: p.name, id: 'p', payload: 0, children: [{ queue: c.name, payload: 1, maxAttempts: 1 }, { queue: c.name, payload: 2 }] });
    const l = leases(c);
    const { jobs } = await l.claim(2, 30_000);
    await l.fail([{ id: jobs[0]!.id, token: jobs[0]!.token, error: 'boom' }]);
    expect(await p.getJob('p')).toMatchObject({ state: 'dead', error: `child JOB:p.0 of queue ${c.name} failed: boom` });
    await consistent(p, c);
    await c.reprocess('p.0');
    expect(await p.getJob('p')).toMatchObject({ state: 'waiting', flow: { total: 2, done: 0 } });
    await consistent(p, c);
    await l.complete([{ id: jobs[1]!.id, token: jobs[1]!.token }]);
    await runAll(c);
    const [parent] = (await leases(p).claim(1, 30_000)).jobs;
    expect(parent?.children?.map((x) => x.state)).toEqual(['completed', 'completed']);
    await consistent(p, c);
  });

  it('wait: a dead child leaves its parent waiting, shown failed, until it is reprocessed and completes', async () => {
    const p = redis.queue();
    const c = redis.queue();
    await new Flows(redis.transport).add({
      queue: p.name,
      id: 'p',
      payload: 0,
      children: [
        { queue: c.name, payload: 'flaky', maxAttempts: 1, onFailure: 'wait' },
        { queue: c.name, payload: 'ok' },
      ],
    });
    const l = leases(c);
    const { jobs } = await l.claim(2, 30_000);
    await l.fail([{ id: jobs[0]!.id, token: jobs[0]!.token, error: 'boom' }]);
    await l.complete([{ id: jobs[1]!.id, token: jobs[1]!.token }]);
    expect(await c.getJob('p.0')).toMatchObject({ state: 'dead', parent: { onFailure: 'wait' } });
    // the parent neither dies nor runs: one of its two children is not done
    expect(await p.getJob('p')).toMatchObject({ state: 'waiting', flow: { total: 2, done: 1 } });
    expect((await p.getJob('p'))?.children?.map((x) => x.state)).toEqual(['failed', 'completed']);
    expect((await leases(p).claim(1, 30_000)).jobs).toEqual([]);
    await consistent(p, c);
    await c.reprocess('p.0');
    expect((await p.getJob('p'))?.children?.map((x) => x.state)).toEqual(['unfinished', 'completed']);
    const [again] = (await l.claim(1, 30_000)).jobs;
    await l.complete([{ id: again!.id, token: again!.token, result: '"late"' }]);
    await runAll(c);
    const [parent] = (await leases(p).claim(1, 30_000)).jobs;
    expect(parent?.children?.map((x) => x.state)).toEqual(['completed', 'completed']);
    await consistent(p, c);
  });

  it('wait: a dead child deleted (its dead retention keeps none) lets the parent stop waiting for it', async () => {
    const p = redis.queue();
    const c = redis.queue();
    await c.setDeadRetention({ maxCount: 0 });
    await new Flows(redis.transport).add({
      queue: p.name,
      id: 'p',
      payload: 0,
      children: [
        { queue: c.name, payload: 'gone', maxAttempts: 1, onFailure: 'wait' },
        { queue: c.name, payload: 'ok' },
      ],
    });
    const l = leases(c);
    const { jobs } = await l.claim(2, 30_000);
    await l.complete([{ id: jobs[1]!.id, token: jobs[1]!.token }]);
    await l.fail([{ id: jobs[0]!.id, token: jobs[0]!.token, error: 'boom' }]);
    expect(await c.getJob('p.0')).toBeNull();
    const [parent] = (await leases(p).claim(1, 30_000)).jobs;
    expect(parent?.children?.map((x) => x.state)).toEqual(['completed']);
    await consistent(p, c);
  });

  it('a parent its child failed tells its own parent at once, in the same relay (no beat)', async () => {
    const [root, middle, leaf] = [redis.queue(), redis.queue(), redis.queue()];
    await new Flows(redis.transport).add({
      queue: root.name,
      id: 'r',
      payload: 0,
      children: [{ queue: middle.name, payload: 1, onFailure: 'ignore', children: [{ queue: leaf.name, payload: 2, maxAttempts: 1 }] }],
    });
    const l = leases(leaf);
    const { jobs } = await l.claim(1, 30_000);
    await l.fail([{ id: jobs[0]!.id, token: jobs[0]!.token, error: 'boom' }]);
    expect(await middle.getJob('r.0')).toMatchObject({ state: 'dead', error: `child JOB:r.0.0 of queue ${leaf.name} failed: boom` });
    // the middle's death reached the root in the fail's own relay: released, nothing left in any outbox
    expect(await root.getJob('r')).toMatchObject({ state: 'pending', flow: { total: 1, done: 1 } });
    for (const q of [root, middle, leaf]) expect(await redis.raw.zcard(`emq:{${q.name}}:outbox`)).toBe(0);
    await consistent(root, middle, leaf);
  });

  it('ignore: the parent runs and sees the failure; remove: the parent stops waiting for it', async () => {
    const p = redis.queue();
    const c = redis.queue();
    await new Flows(redis.transport).add({
      queue: p.name,
      id: 'p',
      payload: 0,
      children: [
        { queue: c.name, payload: 'ignored', onFailure: 'ignore' },
        { queue: c.name, payload: 'removed', onFailure: 'remove' },
        { queue: c.name, payload: 'ok' },
      ],
    });
    const l = leases(c);
    const { jobs } = await l.claim(3, 30_000);
    await l.fail(jobs.slice(0, 2).map((j) => ({ id: j.id, token: j.token, error: `no ${String(j.payload)}` })));
    expect(await p.getJob('p')).toMatchObject({ state: 'waiting', flow: { total: 2, done: 1 } });
    await l.complete([{ id: jobs[2]!.id, token: jobs[2]!.token, result: '"fine"' }]);
    const [parent] = (await leases(p).claim(1, 30_000)).jobs;
    expect(parent?.children).toEqual([
      { queue: c.name, id: 'JOB:p.0', state: 'failed', error: 'no ignored' },
      { queue: c.name, id: 'JOB:p.2', state: 'completed', result: 'fine' },
    ]);
    await consistent(p, c);
  });

  it('removing a parent removes its unfinished children; removing a child lets the parent go on', async () => {
    const p = redis.queue();
    const c = redis.queue();
    const flows = new Flows(redis.transport);
    await flows.add({ queue: p.name, id: 'a', payload: 0, children: [{ queue: c.name, payload: 1 }, { queue: c.name, payload: 2 }] });
    await runAll(c).then(() => undefined);
    await flows.add({ queue: p.name, id: 'b', payload: 0, children: [{ queue: c.name, payload: 1 }, { queue: c.name, payload: 2 }] });
    await p.remove('b');
    expect(await c.getJob('b.0')).toBeNull();
    expect(await c.getJob('b.1')).toBeNull();
    expect(await p.getJob('b')).toBeNull();
    await consistent(p, c);

    await flows.add({ queue: p.name, id: 'd', payload: 0, children: [{ queue: c.name, payload: 1 }, { queue: c.name, payload: 2 }] });
    await c.remove('d.1');
    expect(await p.getJob('d')).toMatchObject({ state: 'waiting', flow: { total: 1, done: 0 } });
    await runAll(c);
    expect(await p.getJob('d')).toMatchObject({ state: 'pending' });
    await consistent(p, c);
  });

  it('releases a parent whose children finished before it was written (a tree cut short, sent again)', async () => {
    const p = redis.queue();
    const c = redis.queue();
    // the children alone, as a cut-off write leaves them: they know their parent, which does not exist yet
    await c.addBulk([]);
    const flows = new Flows(redis.transport);
    await flows.add({ queue: c.name, id: 'x', payload: 0 });
    // a child pointing at a parent not yet written completes: its news waits in the parent's slot
    await redis.raw.hset(keysOf(c).job('JOB:x'), 'fp', `${p.name}|JOB:late|f`);
    // and its queue marked as having flow jobs, as the enqueue of a child marks it before its row
    await redis.raw.hset(keysOf(c).key('meta'), 'fl', '1');
    await runAll(c, () => 'early');
    expect(await redis.raw.pttl(`${keysOf(p).prefix}kids:JOB:late`)).toBeGreaterThan(0);
    await consistent(p, c);
    const tree = await flows.add({ queue: p.name, id: 'late', payload: 0, children: [{ queue: c.name, id: 'x', payload: 0 }] });
    expect(tree.state).toBe('pending');
    expect(tree.children[0]?.state).toBe('duplicate');
    const [parent] = (await leases(p).claim(1, 30_000)).jobs;
    expect(parent?.children).toEqual([{ queue: c.name, id: 'JOB:x', state: 'completed', result: 'early' }]);
    await consistent(p, c);
  });

  it('the checker flags a parent waiting on a child that is gone, and counts that disagree', async () => {
    const p = redis.queue();
    const c = redis.queue();
    await new Flows(redis.transport).add({ queue: p.name, id: 'p', payload: 0, children: [{ queue: c.name, payload: 1 }] });
    const row = keysOf(c).job('JOB:p.0');
    const saved = await redis.raw.hgetall(row);
    await redis.raw.del(row);
    const fifo = keysOf(c).fifo();
    await redis.raw.lrem(fifo, 1, 'JOB:p.0');
    expect(await checkFlowLinks(redis.raw, [p.name, c.name])).toContainEqual(expect.stringMatching(/waits on JOB:p\.0 .* no longer exists/));
    await redis.raw.hset(row, saved);
    await redis.raw.rpush(fifo, 'JOB:p.0');
    await consistent(p, c);
    await redis.raw.hset(keysOf(p).job('JOB:p'), 'fd', '1');
    expect(await checkFlowLinks(redis.raw, [p.name, c.name])).toContainEqual(expect.stringMatching(/fd 1 but 0 children finished/));
    await redis.raw.hset(keysOf(p).job('JOB:p'), 'fd', '0');
    await consistent(p, c);
  });

  it('refuses a bad tree before writing anything', async () => {
    const p = redis.queue();
    const flows = new Flows(redis.transport);
    await expect(flows.add({ queue: p.name, payload: 0, delayMs: 5, children: [{ queue: p.name, payload: 1 }] })).rejects.toThrow(InvalidArgumentError);
    await expect(flows.add({ queue: p.name, payload: 0, children: [{ queue: 'bad name', payload: 1 }] })).rejects.toThrow(/children\[0\]/);
    await expect(flows.add({ queue: p.name, payload: 0, onFailure: 'ignore' })).rejects.toThrow(/root/);
    expect(await redis.raw.keys(`emq:{${p.name}}:*`)).toEqual([]);
  });
});
