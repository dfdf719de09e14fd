import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { scripts as SCRIPTS } from '../../src/generated/scripts.js';
import { RateLimitedError } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { Queue } from '../../src/queue/queue.js';
import { Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type LocalRedis, startLocalRedis } from '../../src/node/local-redis.js';
import { queueName, sleep, until, useRedis } from '../helpers.js';
import { checkInvariants } from '../invariants.js';
import { windowsOverLimit } from '../rate-windows.js';

/** The consumers' lease: a job's claim ran at `leaseUntil - LEASE_MS` on the server's clock, exactly. */
const LEASE_MS = 30_000;

/** One handler run: the job as the handler saw it, and when its claim ran (server ms). */
interface Run<P> {
  readonly job: Job<P>;
  readonly startedAt: number;
}

/**
 * Rate limits and holds on the parked Node consumer (issue 17, "Tests"): a limited group keeps to
 * its limit and still uses all of it, other groups do not wait for it, a hold ends on time, and a
 * consumer left with only throttled work polls nothing. Start times are the claims' server times:
 * a job's `leaseUntil` less the consumer's lease.
 */
describe('the parked consumer under rate limits and holds', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const running: Array<Consumer<never>> = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  /** A started consumer on a connection of its own, recording every handler run. */
  function consume<P>(
    queue: Queue<P>,
    handler: (job: Job<P>) => Promise<unknown> | unknown = () => undefined,
    options: ConsumerOptions<P> = {},
    redisUrl = url,
  ): { consumer: Consumer<P>; runs: Array<Run<P>> } {
    const runs: Array<Run<P>> = [];
    const consumer = new Consumer<P>(
      IoredisTransport.connect(redisUrl),
      queue.name,
      async (job) => {
        runs.push({ job, startedAt: job.leaseUntil - LEASE_MS });
        return handler(job);
      },
      { leaseMs: LEASE_MS, beatMs: 10_000, log: false, ...options, ownsTransport: true },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    return { consumer, runs };
  }

  /**
   * Runs a backlog of 400 jobs of group g (or ungrouped, for the queue's own limit) under 20 starts
   * per 200 ms for 3 s from the first start on a consumer running 32 at once, with `busy` jobs of
   * an unlimited group beside them (50 ms each: 2,500 keep its slots full past the 3 s), so it never
   * parks: its timer for the group's due time, armed from the replies, is all that brings it back.
   */
  async function saturate(limit: 'group' | 'queue', busy: number): Promise<void> {
    const RATE = { limit: 20, periodMs: 200 };
    const RUN_MS = 3_000;
    const queue = redis.queue<string>();
    if (limit === 'group') await queue.setGroupRateLimit('g', RATE);
    else await queue.setRateLimit(RATE);
    await queue.addBulk(Array.from({ length: 400 }, () => ({ payload: 'limited', ...(limit === 'group' ? { group: 'g' } : {}) })));
    await queue.addBulk(Array.from({ length: busy }, () => ({ payload: 'busy', group: 'busy' })));
    const { consumer, runs } = consume(queue, (job) => (job.payload === 'busy' ? sleep(50) : undefined), { concurrency: 32 });
    const limited = (): Array<Run<string>> => runs.filter((r) => r.job.payload === 'limited');
    await until(() => limited().length > 0);
    const first = limited()[0]!.startedAt;
    await until(async () => (await redis.serverNow()) >= first + RUN_MS, RUN_MS + 2_000);
    await consumer.stop();
    // busy to the end: the other group's backlog outlasted the run
    if (busy > 0) expect(runs.filter((r) => r.job.payload === 'busy').length).toBeLessThan(busy);

    // with the queue's own limit every start counts against it, the busy group's too
    const starts = (limit === 'queue' ? runs : limited()).map((r) => r.startedAt);
    expect(windowsOverLimit(starts, RATE)).toEqual([]);
    // the most the limit allows from the first start on: a full burst at the start of each period
    const inRun = starts.filter((s) => s < first + RUN_MS).length;
    const most = (RUN_MS / RATE.periodMs) * RATE.limit;
    // each claim after a full window waits for one start to leave it: how late it came (ms past that)
    const sorted = [...starts].sort((a, b) => a - b);
    const lateness: number[] = [];
    for (let i = RATE.limit; i < sorted.length; i++) {
      if (sorted[i] !== sorted[i - 1]) lateness.push(sorted[i]! - (sorted[i - RATE.limit]! + RATE.periodMs));
    }
    lateness.sort((a, b) => a - b);
    console.log(
      `rate saturation (${limit} limit${busy > 0 ? `, the consumer busy with ${busy} jobs of another group` : ', parked between windows'}): ` +
        `${inRun} starts in ${RUN_MS} ms under ${RATE.limit} per ${RATE.periodMs} ms (${((100 * inRun) / most).toFixed(1)}% of ${most}); ` +
        `a claim after a full window: median ${lateness[lateness.length >> 1]} ms, max ${lateness.at(-1)} ms after it could`,
    );
    expect(inRun).toBeGreaterThanOrEqual(0.9 * most);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  }

  it('uses at least 90% of a group limit of 20 per 200 ms over 3 s of backlog, and never more', () => saturate('group', 0), 30_000);

  it('so it does while other groups keep the consumer busy (it never parks)', () => saturate('group', 2_500), 30_000);

  it('and under the queue’s own limit', () => saturate('queue', 0), 30_000);

  it('a group at its rate limit does not delay the other groups: their jobs finish while it waits', async () => {
    const queue = redis.queue<string>();
    await queue.setGroupRateLimit('slow', { limit: 1, periodMs: 60_000 });
    // the limited group's jobs first: ahead of the others in the ring and in arrival
    await queue.addBulk(Array.from({ length: 5 }, () => ({ payload: 'slow', group: 'slow' })));
    await queue.addBulk([
      ...Array.from({ length: 40 }, (_, i) => ({ payload: 'fast', group: `f${i % 4}` })),
      ...Array.from({ length: 10 }, () => ({ payload: 'ungrouped' })),
    ]);
    const { runs } = consume(queue, () => sleep(2), { concurrency: 4 });
    await until(async () => (await queue.stats()).counts.completed === 51, 10_000);
    expect(runs.filter((r) => r.job.payload === 'slow')).toHaveLength(1);
    expect(runs.filter((r) => r.job.payload !== 'slow')).toHaveLength(50);
    // the others never waited for it: they all started within a second of the first start
    const others = runs.filter((r) => r.job.payload !== 'slow').map((r) => r.startedAt);
    expect(Math.max(...others) - runs[0]!.startedAt).toBeLessThan(1_000);
    const { rateLimits, counts } = await queue.stats();
    expect(counts).toMatchObject({ pending: 4, active: 0, completed: 51 });
    expect(rateLimits.throttled.map((t) => t.group)).toEqual(['slow']);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a group held with holdGroup starts again within a few tens of ms of the hold’s end, and others run meanwhile', async () => {
    const queue = redis.queue<string>();
    const { runs } = consume(queue);
    await sleep(100); // parked: its 10 s beat is not what wakes it
    const heldUntil = await queue.holdGroup('g', 400);
    await queue.addBulk([{ payload: 'held', group: 'g' }, { payload: 'free', group: 'h' }, { payload: 'free' }]);
    await until(() => runs.length === 3, 3_000);
    const held = runs.find((r) => r.job.payload === 'held')!;
    const late = held.startedAt - heldUntil;
    console.log(`holdGroup: the held job's claim ${late} ms after the hold's end (server clock)`);
    expect(held.startedAt).toBeGreaterThanOrEqual(heldUntil);
    expect(late).toBeLessThan(60);
    // the others did not wait
    for (const r of runs.filter((r) => r.job.payload === 'free')) expect(r.startedAt).toBeLessThan(heldUntil);
    expect((await queue.rateLimits()).throttled).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a handler’s RateLimitedError gives its job back unspent and holds its group: the rerun comes on time, as attempt 1', async () => {
    const queue = redis.queue<string>();
    let thrown = 0;
    const { runs } = consume(
      queue,
      (job) => {
        if (job.payload === 'limited' && thrown++ === 0) throw new RateLimitedError(300);
      },
      { concurrency: 2 },
    );
    await sleep(100);
    await queue.add('limited', { group: 'api', maxAttempts: 1 });
    const heldEvent = async () => (await queue.readEvents({ after: '0', limit: 1000 })).events.find((e) => e.event === 'held');
    await until(async () => (await heldEvent()) !== undefined);
    // while the group is held: another of its jobs waits, other groups run
    await queue.addBulk([{ payload: 'same group', group: 'api' }, { payload: 'other', group: 'web' }]);
    await until(() => runs.length === 4, 3_000);
    const held = await heldEvent();
    expect(held).toMatchObject({ event: 'held', group: 'api' });
    const heldUntil = held!.event === 'held' ? held!.heldUntil : NaN;
    const [first, ...later] = runs;
    expect(first!.job.payload).toBe('limited');
    // held from the release, which came after the handler's run: 300 ms and a little from its claim
    expect(heldUntil - first!.startedAt).toBeGreaterThanOrEqual(300);
    const other = later.find((r) => r.job.payload === 'other')!;
    expect(other.startedAt).toBeLessThan(heldUntil);
    const rerun = later.find((r) => r.job.payload === 'limited')!;
    expect(rerun.job.id).toBe(first!.job.id);
    // not spent: its one attempt is still the first, and the rerun completes it
    expect([first!.job.attempt, rerun.job.attempt]).toEqual([1, 1]);
    const late = rerun.startedAt - heldUntil;
    console.log(`RateLimitedError(300): the rerun's claim ${late} ms after the hold's end (server clock)`);
    expect(rerun.startedAt).toBeGreaterThanOrEqual(heldUntil);
    expect(late).toBeLessThan(60);
    expect(later.find((r) => r.job.payload === 'same group')!.startedAt).toBeGreaterThanOrEqual(heldUntil);
    await until(async () => (await queue.stats()).counts.completed === 3);
    expect(await queue.getJob(first!.job.id)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});

/**
 * The cost of waiting: a consumer left with only rate-limited work parks until the throttle's
 * due time (or its beat), so over a quiet stretch it sends what an idle consumer sends. Read from
 * INFO commandstats on a Redis of this suite's own, so no other suite's traffic counts.
 */
describe('a parked consumer with only rate-limited work left', () => {
  const running: Array<Consumer<never>> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  it('sends no more commands than the same consumer idle on an empty queue', async () => {
    const BEAT_MS = 500;
    const STRETCH_MS = 3_000;
    const server: LocalRedis = await startLocalRedis({ env: { PATH: process.env.PATH } });
    const raw = new Redis(server.url);
    const transport = IoredisTransport.connect(server.url);
    try {
      /** Commands Redis ran over a quiet stretch, this suite's INFO and CONFIG left out, by command. */
      const stretch = async (): Promise<Record<string, number>> => {
        await raw.config('RESETSTAT');
        await sleep(STRETCH_MS);
        const info = await raw.info('commandstats');
        const out: Record<string, number> = {};
        for (const [, name, calls] of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
          if (name !== 'info' && name !== 'config') out[name!] = Number(calls);
        }
        return out;
      };
      const total = (stats: Record<string, number>): number => Object.values(stats).reduce((a, b) => a + b, 0);
      const start = (name: string): Consumer<unknown> => {
        // prefetch 0: how much an 'auto' prefetch holds moves with its averages, and with room for
        // more than one job a park that ends at the beat sends a claim beside the beat (both
        // idle and throttled), which would make the two stretches differ by chance
        const consumer = new Consumer(IoredisTransport.connect(server.url), name, () => undefined, {
          beatMs: BEAT_MS,
          prefetch: 0,
          log: false,
          ownsTransport: true,
        }).start();
        running.push(consumer as unknown as Consumer<never>);
        return consumer;
      };

      // every script cached, as on a Redis in use: on a fresh one the claim a park sends behind its
      // BLPOP is refused (NOSCRIPT; the loop then claims the ordinary way) until a claim loads it
      for (const script of Object.values(SCRIPTS)) await raw.script('LOAD', script.lua);
      // the same consumer in the same state: it ran a job (which teaches 'auto' prefetch its
      // round trip), and its queue is now empty. Its queue has throttled an entry once (a hold of
      // 1 ms, long over), as the limited one has: a queue that never did reads no throttled entries
      // at all (meta `th`, lua/includes/queue_meta.lua), two commands a beat period less
      const idleQueue = new Queue(transport, queueName('idle'));
      await idleQueue.holdGroup('other', 1);
      await idleQueue.add(0);
      const idle = start(idleQueue.name);
      await until(async () => (await idleQueue.stats()).counts.completed === 1);
      await sleep(BEAT_MS * 2);
      const idleStats = await stretch();
      await idle.stop();

      const limited = new Queue<number>(transport, queueName('throttled'));
      await limited.setGroupRateLimit('g', { limit: 1, periodMs: 60_000 });
      await limited.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: i, group: 'g' })));
      start(limited.name);
      await until(async () => (await limited.stats()).counts.completed === 1);
      await sleep(BEAT_MS * 2);
      const limitedStats = await stretch();
      expect((await limited.stats()).counts).toMatchObject({ pending: 4, completed: 1 });

      console.log(`quiet ${STRETCH_MS} ms, beat ${BEAT_MS} ms: idle consumer ${total(idleStats)} commands ${JSON.stringify(idleStats)}; with only rate-limited work ${total(limitedStats)} ${JSON.stringify(limitedStats)}`);
      // as many parks and script calls as idle (a park, the claim behind it and a beat per beat
      // period), give or take the one period the stretch's ends cut; and no command more per period
      const scripts = (s: Record<string, number>): number => (s.evalsha ?? 0) + (s.eval ?? 0);
      const parks = (s: Record<string, number>): number => s.blpop ?? 0;
      expect(parks(limitedStats)).toBeLessThanOrEqual(parks(idleStats) + 1);
      expect(scripts(limitedStats)).toBeLessThanOrEqual(scripts(idleStats) + 2);
      const perPeriod = total(idleStats) / Math.max(1, parks(idleStats));
      expect(total(limitedStats)).toBeLessThanOrEqual(total(idleStats) + Math.ceil(perPeriod));
    } finally {
      await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
      await transport.close();
      raw.disconnect();
      await server.stop();
    }
  }, 30_000);
});
