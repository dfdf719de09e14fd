import { describe, expect, it } from 'vitest';
import type { Job } from '../../job.js';
import { ConsumerStoppedError, LeaseLostError } from './errors.js';
import type { ConsumerHooks } from './hooks.js';
import { JobsInHand } from './jobs-in-hand.js';

const job = (n: number): Job<number> => ({ id: `JOB:${n}`, payload: n, token: n }) as unknown as Job<number>;

/** A JobsInHand whose onStarted and onFenced hooks record job ids. */
function inHand(): { jobs: JobsInHand<number>; started: string[]; fenced: string[] } {
  const started: string[] = [];
  const fenced: string[] = [];
  const hooks: ConsumerHooks<number> = { onStarted: (j) => started.push(j.id), onFenced: (j) => fenced.push(j.id) };
  return { jobs: new JobsInHand(hooks), started, fenced };
}

describe('JobsInHand', () => {
  it('holds claimed jobs waiting, oldest first, until they start; a started job is held until it leaves', () => {
    const { jobs, started } = inHand();
    [1, 2, 3].forEach((n) => jobs.wait(job(n), new AbortController()));
    expect([jobs.waitingCount, jobs.heldCount]).toEqual([3, 0]);
    const [first, second] = jobs.takeWaiting(2);
    const held = jobs.start(first!);
    jobs.start(second!);
    expect(started).toEqual(['JOB:1', 'JOB:2']);
    expect([jobs.waitingCount, jobs.heldCount]).toEqual([1, 2]);
    expect(held.startedAt).toBeGreaterThan(0);
    expect(held.controller).toBe(first!.controller);
    jobs.leave(held);
    expect(jobs.heldCount).toBe(1);
    expect(jobs.renewable().map((h) => h.job.id)).toEqual(['JOB:2', 'JOB:3']);
  });

  it('fences a lost lease: a waiting job is dropped unrun, a started one aborted, and onFenced tells once it leaves', () => {
    const { jobs, fenced } = inHand();
    jobs.wait(job(1), new AbortController());
    jobs.wait(job(2), new AbortController());
    // a renewal goes out while both wait, and job 1 starts before its reply is back
    const [oneWaiting, twoWaiting] = jobs.renewable();
    const one = jobs.start(jobs.takeWaiting(1)[0]!);
    jobs.leaseLost(oneWaiting!);
    jobs.leaseLost(twoWaiting!);
    expect(one.fenced).toBe(true); // the one in hand, not only the waiting copy the renewal saw
    expect(one.controller.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(jobs.anyWaitingFenced()).toBe(true);
    expect(jobs.dropFenced()).toBe(true);
    expect(jobs.waitingCount).toBe(0);
    expect(fenced).toEqual(['JOB:2']);
    jobs.leave(one);
    expect(fenced).toEqual(['JOB:2', 'JOB:1']);
    expect(jobs.renewable()).toEqual([]);
  });

  it('a settle found fenced marks the job; stop() abandons what is held (no onFenced) and gives back only live waiting jobs', () => {
    const { jobs, fenced } = inHand();
    [1, 2, 3, 4].forEach((n) => jobs.wait(job(n), new AbortController()));
    const [a, b] = jobs.takeWaiting(2).map((w) => jobs.start(w));
    jobs.fence(a!);
    expect(a!.fenced).toBe(true);
    jobs.leaseLost(jobs.renewable().find((h) => h.job.id === 'JOB:4')!);
    // a: fenced, not given back; b: still running, given back
    expect(jobs.abandonAll().map((h) => h.job.id)).toEqual(['JOB:2']);
    expect(b!.abandoned).toBe(true);
    expect(b!.controller.signal.reason).toBeInstanceOf(ConsumerStoppedError);
    expect(jobs.heldCount).toBe(0);
    jobs.leave(b!);
    expect(fenced).toEqual([]);
    expect(jobs.drainWaiting().map((h) => h.job.id)).toEqual(['JOB:3']);
    expect(jobs.waitingCount).toBe(0);
  });

  it('a renewal refused after the settle was recorded changes nothing: no fence, no abort, no onFenced', () => {
    const { jobs, fenced } = inHand();
    jobs.wait(job(1), new AbortController());
    const one = jobs.start(jobs.takeWaiting(1)[0]!);
    const [renewing] = jobs.renewable(); // a renewal goes out, then the settle, then its reply
    jobs.recorded(one);
    expect(jobs.renewable()).toEqual([]);
    jobs.leaseLost(renewing!);
    expect(one.fenced).toBe(false);
    expect(one.controller.signal.aborted).toBe(false);
    jobs.leave(one);
    expect(fenced).toEqual([]);
  });

  it('a renewal of a claim whose settle landed, its reply read after the job was claimed again, leaves the new claim alone', () => {
    const { jobs, fenced } = inHand();
    jobs.wait(job(2), new AbortController());
    const first = jobs.start(jobs.takeWaiting(1)[0]!);
    const [renewing] = jobs.renewable(); // a renewal goes out; the settle (a retry) lands first
    jobs.recorded(first);
    jobs.leave(first);
    // the retry made the job claimable again: claimed (a new token) and started before the renewal's reply
    const again = { ...job(2), token: 7 } as Job<number>;
    jobs.wait(again, new AbortController());
    const second = jobs.start(jobs.takeWaiting(1)[0]!);
    jobs.renewed(renewing!, 1);
    jobs.leaseLost(renewing!);
    expect(second.fenced).toBe(false);
    expect(second.controller.signal.aborted).toBe(false);
    expect(second.leaseEnd).not.toBe(1);
    expect(jobs.renewable()).toEqual([second]);
    jobs.leave(second);
    expect(fenced).toEqual([]);
  });

  it('a settle recorded after a renewal found the lease gone (their replies read out of order) unfences the job', () => {
    const { jobs, fenced } = inHand();
    jobs.wait(job(1), new AbortController());
    const one = jobs.start(jobs.takeWaiting(1)[0]!);
    jobs.leaseLost(one); // the renewal ran after the settle, and its reply was read first
    jobs.recorded(one);
    jobs.leave(one);
    expect(fenced).toEqual([]);
  });

  it('stop() gives back the jobs still running, not those whose settle is on its way', () => {
    const { jobs } = inHand();
    [1, 2].forEach((n) => jobs.wait(job(n), new AbortController()));
    const [a] = jobs.takeWaiting(2).map((w) => jobs.start(w));
    jobs.settling(a!);
    expect(jobs.abandonAll().map((h) => h.job.id)).toEqual(['JOB:2']);
  });

  it('never starts a waiting job whose lease ended by the server clock (a consumer frozen past it); a renewal moves the deadline', () => {
    const { jobs, fenced } = inHand();
    const at = (n: number, leaseUntil: number): Job<number> => ({ ...job(n), leaseUntil }) as Job<number>;
    jobs.wait(at(1, 1_000), new AbortController());
    jobs.wait(at(2, 1_000), new AbortController());
    const [, second] = jobs.renewable();
    jobs.renewed(second!, 5_000);
    jobs.expireWaiting(1_000);
    expect(jobs.dropFenced()).toBe(true);
    expect(fenced).toEqual(['JOB:1']);
    expect(jobs.takeWaiting(5).map((h) => h.job.id)).toEqual(['JOB:2']);
  });

  it('a cancel asked aborts a running job with JobCancelledError, and takes a waiting one out to give back', () => {
    const { jobs } = inHand();
    jobs.wait(job(1), new AbortController());
    jobs.wait(job(2), new AbortController());
    const [running] = jobs.takeWaiting(1).map((w) => jobs.start(w));
    expect(jobs.cancelAsked('JOB:1', 'stop')).toBeUndefined();
    expect(running!.controller.signal.reason).toMatchObject({ name: 'JobCancelledError', reason: 'stop' });
    expect(jobs.cancelAsked('JOB:2', 'stop')?.job.id).toBe('JOB:2');
    expect(jobs.waitingCount).toBe(0);
    expect(jobs.cancelAsked('JOB:3', 'stop')).toBeUndefined();
  });
});
