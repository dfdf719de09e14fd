import { describe, expect, it } from 'vitest';
import { type Finished, Leases, sendRounds } from '../../src/lease/leases.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, sleep, useRedis } from '../helpers.js';

/**
 * Leases.round, the one call both runtimes' consumers make: what finished plus what to claim, in
 * one round trip, answered as typed results.
 */
describe('the lease protocol: one round', () => {
  const redis = useRedis();

  it('records every outcome in one request and says what became of each job', async () => {
    const queue = redis.queue<string>();
    const leases = new Leases(queue);
    await queue.addBulk(['done', 'again', 'later', 'gone', 'lost'].map((payload) => ({ payload, id: payload })));
    const { jobs } = await leases.claim(5, 30_000);
    const job = (id: string) => jobs.find((j) => j.id === `JOB:${id}`)!;
    const finished: Finished[] = [
      { job: job('done'), outcome: { kind: 'complete' } },
      { job: job('again'), outcome: { kind: 'retry', error: 'try now', delayMs: 0 } },
      { job: job('later'), outcome: { kind: 'retry', error: 'try later' } },
      { job: job('gone'), outcome: { kind: 'fail', error: 'for good' } },
      { job: { id: job('lost').id, token: job('lost').token + 1 }, outcome: { kind: 'complete' } },
    ];
    const before = leases.requests;
    const result = await leases.round({ finished, leaseMs: 30_000 });
    expect(leases.requests - before).toBe(1);
    expect(result.settled).toEqual(['completed', 'pending', 'scheduled', 'dead', 'fenced']);
    expect(result.claimed).toBeNull();
    expect(await queue.getJob('done')).toMatchObject({ state: 'completed' });
    expect(await queue.getJob('again')).toMatchObject({ state: 'pending', error: expect.stringContaining('try now') as unknown });
    expect(await queue.getJob('later')).toMatchObject({ state: 'scheduled' });
    expect(await queue.getJob('gone')).toMatchObject({ state: 'dead' });
    expect(await queue.getJob('lost')).toMatchObject({ state: 'active' }); // a fenced settle changes nothing
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('claims after it settles: a job retried now is claimable by the claim of the same round', async () => {
    const queue = redis.queue<number>();
    const leases = new Leases(queue);
    await queue.add(1, { id: 'only' });
    const [held] = (await leases.claim(1, 30_000)).jobs;
    const { settled, claimed } = await leases.round({
      finished: [{ job: held!, outcome: { kind: 'retry', error: 'again', delayMs: 0 } }],
      claim: 5,
      leaseMs: 30_000,
    });
    expect(settled).toEqual(['pending']);
    expect(claimed?.jobs.map((j) => [j.id, j.attempt])).toEqual([['JOB:only', 2]]);
  });

  it('gives back unstarted jobs uncounted, beside what finished', async () => {
    const queue = redis.queue<number>();
    const leases = new Leases(queue);
    await queue.addBulk([1, 2].map((payload) => ({ payload })));
    const [first, second] = (await leases.claim(2, 30_000)).jobs;
    const { settled, givenBack } = await leases.round({
      finished: [{ job: first!, outcome: { kind: 'complete' } }],
      giveBack: [second!],
      leaseMs: 30_000,
    });
    expect(settled).toEqual(['completed']);
    expect(givenBack).toEqual(['released']);
    expect(await queue.getJob(second!.id)).toMatchObject({ state: 'pending', attempt: 0 });
  });

  it('a beat that claims nothing still reaps and promotes, and reports the next due time', async () => {
    const queue = redis.queue<string>();
    const leases = new Leases(queue);
    await queue.add('lapses', { id: 'lapses' });
    await leases.claim(1, 20);
    await queue.add('due', { id: 'due', delayMs: 20 });
    await queue.add('later', { id: 'later', delayMs: 60_000 });
    await sleep(60);
    const { claimed } = await leases.round({ claim: 0, beat: true, leaseMs: 30_000 });
    expect(claimed?.jobs).toEqual([]);
    expect(claimed).toMatchObject({ promoted: 1, requeued: 1 });
    expect(claimed!.nextDueAt! - claimed!.now).toBeGreaterThan(50_000);
    expect((await queue.stats()).counts).toMatchObject({ pending: 2, active: 0, scheduled: 1 });
    expect(await redis.raw.llen(keysOf(queue).key('wake'))).toBeGreaterThan(0);
  });

  it('sends several queues rounds in one request', async () => {
    const a = redis.queue<string>();
    const b = redis.queue<string>();
    await a.add('a');
    await b.add('b');
    let requests = 0;
    const [ra, rb] = await sendRounds(
      redis.transport,
      [new Leases(a).prepare({ claim: 5, beat: true, leaseMs: 30_000 }), new Leases(b).prepare({ claim: 5, beat: true, leaseMs: 30_000 })],
      () => requests++,
    );
    expect(requests).toBe(1);
    expect(ra!.claimed?.jobs.map((j) => j.payload)).toEqual(['a']);
    expect(rb!.claimed?.jobs.map((j) => j.payload)).toEqual(['b']);
  });

  it("runs the README's consumer of its own to completion", async () => {
    const queue = redis.queue<{ to: string }>();
    await queue.addBulk(Array.from({ length: 25 }, (_, i) => ({ payload: { to: i === 3 ? 'bad' : `u${i}@example.com` }, maxAttempts: 1 })));
    const sent: string[] = [];
    const send = async (to: string): Promise<void> => {
      if (!to.includes('@')) throw new Error(`not an address: ${to}`);
      sent.push(to);
    };
    const leases = new Leases(queue);
    let finished: Finished[] = [];
    for (;;) {
      const { claimed } = await leases.round({ finished, claim: 10, leaseMs: 30_000 });
      if (!claimed || claimed.jobs.length === 0) break;
      finished = await Promise.all(
        claimed.jobs.map(async (job) => {
          try {
            await send(job.payload.to);
            return { job, outcome: { kind: 'complete' } } as const;
          } catch (error) {
            return { job, outcome: { kind: 'retry', error: String(error) } } as const;
          }
        }),
      );
    }
    expect(sent).toHaveLength(24);
    expect((await queue.stats()).counts).toMatchObject({ completed: 24, dead: 1, pending: 0, active: 0 });
  });

  it('refuses a bad count or lease before any request', async () => {
    const queue = redis.queue();
    const leases = new Leases(queue);
    await expect(leases.round({ claim: -1, leaseMs: 1000 })).rejects.toMatchObject({ code: 'EMQARG' });
    await expect(leases.round({ claim: 1, leaseMs: 0 })).rejects.toMatchObject({ code: 'EMQARG' });
    expect(leases.requests).toBe(0);
  });
});
