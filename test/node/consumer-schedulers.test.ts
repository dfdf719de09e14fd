import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Job } from '../../src/job.js';
import type { Queue } from '../../src/queue/queue.js';
import { Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { checkInvariants } from '../invariants.js';
import { sleep, until, useRedis } from '../helpers.js';

/**
 * The Node consumer fires scheduler slots as it promotes delayed jobs: a slot is the queue's next
 * due time, so a parked consumer's timer runs a beat at the slot (which fires it and rings the
 * doorbell it is parked on), and a busy one arms the same timer from its beats' replies.
 */
describe('the Node consumer and schedulers', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const running: Array<Consumer<never>> = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  /** A started consumer on its own connection; `seen` records each handler start (Date.now(): the test's Redis runs on this host). */
  function consume<P>(
    queue: Queue<P>,
    handler: (job: Job<P>) => Promise<void> | void = () => {},
    options: ConsumerOptions<P> = {},
  ): Array<{ job: Job<P>; at: number }> {
    const seen: Array<{ job: Job<P>; at: number }> = [];
    const consumer = new Consumer<P>(
      IoredisTransport.connect(url),
      queue.name,
      async (job) => {
        seen.push({ job, at: Date.now() });
        await handler(job);
      },
      { beatMs: 10_000, ...options, ownsTransport: true },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    return seen;
  }

  it('a parked consumer with a 10 s beat runs each slot at its time, each once, none missed', async () => {
    const queue = redis.queue<string>();
    const seen = consume(queue);
    await sleep(150); // parked: its first beat found nothing
    const { nextRunAt } = await queue.upsertScheduler('tick', { every: 600 }, { payload: 'tick' });
    await until(() => seen.length >= 4, 5_000);
    const slots = seen.slice(0, 4).map(({ job }) => job.scheduler!.slot);
    expect(slots).toEqual([0, 1, 2, 3].map((i) => nextRunAt! + i * 600));
    expect(seen.slice(0, 4).map(({ job }) => job.id)).toEqual(slots.map((slot) => `JOB:tick@${slot}`));
    // each started at its slot, long before the beat: the timer fired it (the bound is loose on purpose: the figure is bench/'s)
    for (const { job, at } of seen.slice(0, 4)) {
      expect(at - job.scheduler!.slot).toBeGreaterThanOrEqual(-5);
      expect(at - job.scheduler!.slot).toBeLessThan(500);
    }
    expect(new Set(seen.map(({ job }) => job.id)).size).toBe(seen.length);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a consumer started on a queue whose scheduler is due runs that slot and each next one at its time', async () => {
    // its first beat fires the due slot: a beat that fired carries no reading of the server's
    // clock, and the timer it arms for the next slot must still fire then, not at the 10 s beat
    const queue = redis.queue<string>();
    const { nextRunAt } = await queue.upsertScheduler('tick', { every: 400, limit: 4 }, { payload: 'tick' });
    const seen = consume(queue);
    await until(() => seen.length >= 4, 5_000);
    expect(seen.map(({ job }) => job.scheduler!.slot)).toEqual([0, 1, 2, 3].map((i) => nextRunAt! + i * 400));
    for (const { job, at } of seen.slice(1)) expect(at - job.scheduler!.slot).toBeLessThan(300);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a cron scheduler with seconds runs on whole seconds, and an upsert moves a parked consumer’s timer', async () => {
    const queue = redis.queue<string>();
    const seen = consume(queue);
    await sleep(150);
    // far in the future first: nothing fires
    await queue.upsertScheduler('c', { cron: '0 0 1 1 *' }, { payload: 'new year' });
    await sleep(300);
    expect(seen).toHaveLength(0);
    // changed in place to every second: the upsert rings the schedule bell, the parked consumer re-arms
    await queue.upsertScheduler('c', { cron: '* * * * * *' }, { payload: 'second' });
    await until(() => seen.length >= 2, 4_000);
    for (const { job, at } of seen.slice(0, 2)) {
      expect(job.payload).toBe('second');
      expect(job.scheduler!.slot % 1000).toBe(0);
      expect(at - job.scheduler!.slot).toBeLessThan(500);
    }
    expect(seen[1]!.job.scheduler!.slot - seen[0]!.job.scheduler!.slot).toBe(1000);
  });

  it('a busy consumer fires slots on time while it works through a backlog', async () => {
    const queue = redis.queue<string>();
    // a backlog of 40 jobs of 50 ms on one slot: two seconds of work
    await queue.addBulk(Array.from({ length: 40 }, () => ({ payload: 'work' })));
    const seen = consume(queue, async (job) => {
      if (job.payload === 'work') await sleep(50);
    }, { concurrency: 1, beatMs: 10_000 });
    await until(() => seen.length > 0);
    const { nextRunAt } = await queue.upsertScheduler('s', { every: 400 }, { payload: 'tick' });
    await sleep(1_300);
    // its slots were fired on time (their jobs wait their turn behind the backlog)
    const record = (await queue.getScheduler('s'))!;
    expect(record.fired).toBeGreaterThanOrEqual(3);
    expect(record.lastRunAt).toBeGreaterThanOrEqual(nextRunAt! + 800);
    expect(seen.filter(({ job }) => job.payload === 'work').length).toBeLessThan(40);
    await until(() => seen.filter(({ job }) => job.payload === 'tick').length >= 3, 5_000);
  });
});
