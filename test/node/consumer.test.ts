import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { RetryAfterError, UnrecoverableError } from '../../src/handler.js';
import type { Job } from '../../src/job.js';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Queue } from '../../src/queue/queue.js';
import { BatchConsumer, Consumer, type ConsumerOptions } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { ConsumerStoppedError, LeaseLostError } from '../../src/node/consumer/index.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, laneIds, leaseCount, sleep, until, useRedis, leases } from '../helpers.js';
import { usePrivateRedis } from '../private-redis.js';


describe('the parked consumer', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  // a Redis of the suite's own for the test that flushes its scripts (test/private-redis.ts)
  const own = usePrivateRedis();
  const running: Array<Consumer<never>> = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  /** A started consumer on its own connection; `seen` records each handler start with its time. */
  function consume<P>(
    queue: Queue<P>,
    handler: (job: Job<P>, signal: AbortSignal) => Promise<void> | void,
    options: ConsumerOptions<P> = {},
    redisUrl = url,
  ): { consumer: Consumer<P>; seen: Array<{ job: Job<P>; at: number }> } {
    const seen: Array<{ job: Job<P>; at: number }> = [];
    const transport = IoredisTransport.connect(redisUrl);
    const consumer = new Consumer<P>(
      transport,
      queue.name,
      async (job, { signal }) => {
        seen.push({ job, at: performance.now() });
        await handler(job, signal);
      },
      { beatMs: 10_000, ...options, ownsTransport: true },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    return { consumer, seen };
  }

  /** Parks a consumer (10 s beat), runs `trigger`, and returns ms from the trigger to the handler. */
  async function wakeLatency(queue: Queue<unknown>, trigger: () => Promise<unknown>, seenBefore = 0, redisUrl = url): Promise<number> {
    const { seen } = consume(queue, () => {}, {}, redisUrl);
    await sleep(150); // parked by now: the first beat found nothing
    await until(() => seen.length === seenBefore);
    const t0 = performance.now();
    await trigger();
    await until(() => seen.length > seenBefore, 3_000);
    return seen[seenBefore]!.at - t0;
  }

  it('runs a new ungrouped or grouped job at once while parked with a 10 s beat', async () => {
    const queue = redis.queue();
    expect(await wakeLatency(queue, () => queue.add(1))).toBeLessThan(500);
    const grouped = redis.queue();
    expect(await wakeLatency(grouped, () => grouped.add(1, { group: 'g' }))).toBeLessThan(500);
  });

  it('wakes for a group resumed and a limit raised', async () => {
    const paused = redis.queue();
    await paused.pauseGroup('g');
    await paused.add(1, { group: 'g' });
    expect(await wakeLatency(paused, () => paused.resumeGroup('g'))).toBeLessThan(500);

    const limited = redis.queue();
    await limited.setGroupLimit('g', 0);
    await limited.add(1, { group: 'g' });
    expect(await wakeLatency(limited, () => limited.setGroupLimit('g', 1))).toBeLessThan(500);
  });

  it('still wakes at once when Redis forgot its scripts (the claim sent behind the BLPOP gets NOSCRIPT)', async () => {
    const queue = own.queue();
    const flushedThenAdded = async (): Promise<void> => {
      await own.raw.script('FLUSH');
      await queue.add('after a flush');
    };
    expect(await wakeLatency(queue, flushedThenAdded, 0, own.at.redisUrl)).toBeLessThan(500);
  });

  it('wakes for a reprocessed job', async () => {
    const queue = redis.queue();
    await queue.add(1, { maxAttempts: 1 });
    const [job] = (await leases(queue).claim(1, 30_000)).jobs;
    await leases(queue).retry([{ id: job!.id, token: job!.token, error: 'boom' }]);
    expect(await wakeLatency(queue, () => queue.reprocess(job!.id))).toBeLessThan(500);
  });

  it('starts a delayed job within a few hundred ms of its due time while parked', async () => {
    const queue = redis.queue();
    const { seen } = consume(queue, () => {});
    await sleep(150);
    const offset = (await redis.serverNow()) - performance.now(); // server ms at a local instant
    const { id } = await queue.add('later', { delayMs: 400 });
    await until(() => seen.length === 1, 3_000);
    const due = Number(await redis.raw.hget(keysOf(queue).job(id), 'c')) + 400;
    const startedServer = seen[0]!.at + offset;
    expect(startedServer - due).toBeLessThan(250);
    expect(startedServer - due).toBeGreaterThan(-50);
  });

  /**
   * A consumer busy with a backlog of 3000 'bulk' jobs (10 slots x 5 ms: over a second of work, so
   * its loop never parks). `backlogAt.special` becomes how many bulk jobs had finished when the
   * job whose payload is `special` started.
   */
  async function busyWithBacklog(queue: Queue<string>, special: string, options: ConsumerOptions<string> = {}) {
    await queue.addBulk(Array.from({ length: 3000 }, () => ({ payload: 'bulk' })));
    const backlogAt = { done: 0, special: -1 };
    consume(queue, async (job) => {
      if (job.payload === special) backlogAt.special = backlogAt.done;
      else {
        await sleep(5);
        backlogAt.done++;
      }
    }, { concurrency: 10, ...options });
    return backlogAt;
  }

  it('busy with a backlog, starts a delayed job of another group when it is due, not after the backlog', async () => {
    const queue = redis.queue<string>();
    const backlogAt = await busyWithBacklog(queue, 'delayed');
    await until(() => backlogAt.done > 100, 5_000);
    // scheduled while no consumer is parked to hear the schedule bell: the busy loop's next claim
    // takes its news and arms the due timer
    await queue.add('delayed', { delayMs: 200, group: 'tenant-b' });
    await until(() => backlogAt.special >= 0, 10_000);
    expect(backlogAt.special).toBeLessThan(2000);
  });

  it('busy with a backlog, still beats: a lapsed lease of another holder is reaped and its job runs', async () => {
    const queue = redis.queue<string>();
    // a holder that died: its job (enqueued first, so first in line again once reaped) has a short lease
    await queue.add('orphan');
    const { jobs } = await leases(queue).claim(1, 200);
    expect(jobs).toHaveLength(1);
    const backlogAt = await busyWithBacklog(queue, 'orphan', { beatMs: 300 });
    await until(() => backlogAt.special >= 0, 10_000);
    expect(backlogAt.special).toBeLessThan(2000);
    expect(await queue.getJob(jobs[0]!.id)).toMatchObject({ attempt: 2 });
  });

  it('retries a job whose handler failed and picks it up again at once', async () => {
    const queue = redis.queue();
    let calls = 0;
    const { seen } = consume(queue, () => {
      calls++;
      if (calls === 1) throw new RetryAfterError('not yet', 0);
    });
    await sleep(100);
    await queue.add('x');
    await until(() => seen.length === 2, 3_000);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(500);
    expect(seen.map((s) => s.job.attempt)).toEqual([1, 2]);
    await until(async () => (await queue.stats()).counts.completed === 1);
  });

  it('retries a handler that throws synchronously (a plain function), and the loop goes on', async () => {
    const queue = redis.queue<number>();
    const calls: number[] = [];
    const consumer = new Consumer<number>(
      IoredisTransport.connect(url),
      queue.name,
      (job) => {
        calls.push(job.attempt);
        if (job.attempt === 1) throw new Error('thrown before any await');
      },
      { beatMs: 10_000, ownsTransport: true },
    ).start();
    running.push(consumer as unknown as Consumer<never>);
    await queue.add(1, { backoff: 0 });
    await queue.add(2, { backoff: 0 });
    await until(async () => (await queue.stats()).counts.completed === 2, 5_000);
    expect(calls.sort()).toEqual([1, 1, 2, 2]);
    expect((await queue.getJob('JOB:1'))?.error).toMatch(/thrown before any await/);
  });

  it('never runs more jobs at once than its concurrency, and keeps the loop alive through throws', async () => {
    const queue = redis.queue();
    let now = 0;
    let peak = 0;
    const { seen } = consume(
      queue,
      async (job) => {
        now++;
        peak = Math.max(peak, now);
        await sleep(5);
        now--;
        if ((job.payload as number) % 3 === 0) throw new Error('every third fails');
      },
      { concurrency: 4 },
    );
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ payload: i + 1, maxAttempts: 2, backoff: 0 })));
    await until(async () => {
      const { counts } = await queue.stats();
      return counts.completed === 40 && counts.dead === 20;
    }, 10_000);
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThan(1);
    expect(seen).toHaveLength(80);
  });

  it('setConcurrency while it runs: more start at once, fewer once the running ones finish', async () => {
    const queue = redis.queue();
    let now = 0;
    const peaks = [0, 0, 0];
    let phase = 0;
    let release = (): void => {};
    let gate = new Promise<void>((resolve) => (release = resolve));
    const { consumer, seen } = consume(queue, async () => {
      now++;
      peaks[phase] = Math.max(peaks[phase]!, now);
      if (phase === 1) await gate;
      else await sleep(10);
      now--;
    });
    await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: i })));
    await until(() => seen.length === 6, 5_000);
    expect(peaks[0]).toBe(1);
    phase = 1;
    consumer.setConcurrency(5);
    expect(consumer.concurrency).toBe(5);
    await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ payload: i })));
    // all five held at once: the new slots claimed and started them
    await until(() => now === 5, 5_000);
    consumer.setConcurrency(2);
    phase = 2;
    release();
    gate = Promise.resolve();
    await queue.addBulk(Array.from({ length: 8 }, (_, i) => ({ payload: i })));
    await until(async () => (await queue.stats()).counts.completed === 19, 10_000);
    expect(peaks[2]).toBeLessThanOrEqual(2);
    expect(() => consumer.setConcurrency(0)).toThrow(InvalidArgumentError);
    expect(consumer.concurrency).toBe(2);
  });

  it('sends an UnrecoverableError straight to dead and reports it', async () => {
    const queue = redis.queue();
    const dead: string[] = [];
    const transport = IoredisTransport.connect(url);
    const consumer = new Consumer(transport, queue.name, () => {
      throw new UnrecoverableError('bad payload');
    }, { ownsTransport: true, hooks: { onDead: (job, info) => dead.push(`${job.id}:${info.error.split('\n')[0]}`) } }).start();
    running.push(consumer as unknown as Consumer<never>);
    const { id } = await queue.add(1, { maxAttempts: 5 });
    await until(() => dead.length === 1);
    expect(dead).toEqual([`${id}:UnrecoverableError: bad payload`]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'dead', attempt: 1 });
  });

  it('renews the lease of a long job so it is not run twice', async () => {
    const queue = redis.queue();
    const { seen } = consume(queue, () => sleep(1_000), { leaseMs: 300 });
    const { id } = await queue.add(1);
    await until(async () => (await queue.stats()).counts.completed === 1, 5_000);
    expect(seen).toHaveLength(1);
    expect(await queue.getJob(id)).toMatchObject({ attempt: 1 });
  });

  it('aborts a job whose renewal is fenced off', async () => {
    const queue = redis.queue();
    let reason: unknown;
    const { seen } = consume(
      queue,
      (_job, signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            resolve();
          });
        }),
      { leaseMs: 300 },
    );
    const { id } = await queue.add(1);
    await until(() => seen.length === 1);
    await queue.remove(id);
    await until(() => reason !== undefined, 2_000);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(await queue.getJob(id)).toBeNull();
  });

  it('stops within milliseconds when parked with a 10 s beat', async () => {
    const queue = redis.queue();
    const { consumer } = consume(queue, () => {});
    await sleep(150);
    const t0 = performance.now();
    await consumer.stop();
    expect(performance.now() - t0).toBeLessThan(300);
    expect(consumer.running).toBe(false);
  });

  it('lets a job in hand finish on stop, and gives back one that outlives the timeout, uncounted', async () => {
    const queue = redis.queue();
    const { consumer, seen } = consume(queue, () => sleep(200), { concurrency: 2 });
    await queue.add('short');
    await until(() => seen.length === 1);
    await consumer.stop(2_000);
    expect((await queue.stats()).counts.completed).toBe(1);

    const slow = redis.queue();
    let finish: () => void = () => {};
    let aborted: unknown;
    // a handler that ignores its signal and ends only when told
    const { consumer: stuck, seen: started } = consume(slow, (_job, signal) => {
      signal.addEventListener('abort', () => (aborted = signal.reason));
      return new Promise<void>((resolve) => (finish = resolve));
    }, { leaseMs: 30_000 });
    const { id } = await slow.add('never ends');
    await until(() => started.length === 1);
    const t0 = performance.now();
    await stuck.stop(200);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(aborted).toBeInstanceOf(ConsumerStoppedError);
    // given back at once, not left active until its 30 s lease lapses: claimable, the claim not counted
    const k = keysOf(slow);
    expect(await redis.raw.hmget(k.job(id), 's', 'a')).toEqual(['pending', '0']);
    expect(await leaseCount(redis.raw, k)).toBe(0);
    expect(await laneIds(redis.raw, k)).toEqual([id]);
    expect(await checkInvariants(redis.raw, slow.name)).toEqual([]);

    // the handler that ran on ends now: nothing it does is recorded
    finish();
    await sleep(100);
    expect(await slow.getJob(id)).toMatchObject({ state: 'pending', attempt: 0, attemptsStarted: 0 });

    // and the next consumer runs it at once, as its first attempt
    const { seen: again } = consume(slow, () => {});
    await until(async () => (await slow.stats()).counts.completed === 1, 2_000);
    expect(again.map((s) => s.job)).toMatchObject([{ id, attempt: 1 }]);
  });

  it('re-runs the job of a consumer SIGKILLed mid-job once its lease lapses, exactly once', async () => {
    const queue = redis.queue();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'child-consumer.ts'), url, queue.name, '500'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await until(() => out.includes('ready'), 10_000);
    const { id } = await queue.add('survives');
    await until(() => out.includes(`started ${id}`), 5_000);
    child.kill('SIGKILL');
    const killedAt = performance.now();

    const { seen } = consume(queue, () => {}, { leaseMs: 5_000 });
    await until(() => seen.length === 1, 5_000);
    expect(seen[0]!.job).toMatchObject({ id, attempt: 2 });
    expect(seen[0]!.at - killedAt).toBeLessThan(500 + 1_000);
    await until(async () => (await queue.stats()).counts.completed === 1);
    await sleep(100);
    expect(seen).toHaveLength(1);
    expect((await queue.stats()).counts).toMatchObject({ completed: 1, active: 0, pending: 0, dead: 0 });
  });

  it('shares a queue between two consumers without running one attempt twice', async () => {
    const queue = redis.queue();
    const a = consume(queue, () => sleep(1), { concurrency: 5 });
    const b = consume(queue, () => sleep(1), { concurrency: 5 });
    await queue.addBulk(Array.from({ length: 300 }, (_, i) => ({ payload: i, group: `g${i % 7}` })));
    await until(async () => (await queue.stats()).counts.completed === 300, 15_000);
    const runs = [...a.seen, ...b.seen].map((s) => `${s.job.id}#${s.job.token}`);
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs).toHaveLength(300);
    expect(a.seen.length).toBeGreaterThan(0);
    expect(b.seen.length).toBeGreaterThan(0);
  });

  it('refuses a queue that is not a Queue or a name and a handler that is not a function, at once; connect() closes the connection it made for a refused consumer', async () => {
    const queue = redis.queue();
    const transport = IoredisTransport.connect(url);
    try {
      // null threw a TypeError; an object without a transport was taken, and its loop failed later
      for (const bad of [null, 5, { name: queue.name }]) {
        expect(() => new Consumer(transport, bad as never, async () => {})).toThrow(InvalidArgumentError);
        expect(() => new BatchConsumer(transport, bad as never, async () => {})).toThrow(InvalidArgumentError);
      }
      // a handler that is not a function was taken, and every job it claimed failed with a TypeError
      for (const bad of [null, 5, 'handler.mjs', {}]) {
        expect(() => new Consumer(transport, queue, bad as never)).toThrow(/^the handler must be a function/);
        expect(() => new BatchConsumer(transport, queue, bad as never)).toThrow(/^the handler must be a function/);
      }
    } finally {
      await transport.close();
    }
    expect(() => Consumer.connect(url, queue.name, async () => {}, null as never)).toThrow(InvalidArgumentError);
    const sockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    // connections of the tests before may still be closing: count once the number holds still
    let before = sockets();
    for (let stable = 0; stable < 10; ) {
      await sleep(20);
      stable = sockets() === before ? stable + 1 : 0;
      before = sockets();
    }
    for (const [name, options] of [['a b', {}], [queue.name, { leaseMs: 0 }], [queue.name, { queue: { keepCompletedMs: -5 } }]] as const) {
      expect(() => Consumer.connect(url, name, async () => {}, options)).toThrow(/name|leaseMs|keepCompletedMs/);
    }
    await sleep(20);
    for (let i = 0; i < 100 && sockets() > before; i++) await sleep(10);
    expect(sockets()).toBe(before);
  });
});
