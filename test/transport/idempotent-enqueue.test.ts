import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError, InvalidArgumentError, Leases, PartitionedQueue, Queue, type Reply, type ScriptCall, type Transport } from '../../src/index.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, sleep, snapshotKeys, useRedis } from '../helpers.js';

/**
 * A transport whose every request runs twice, as when a reply is lost and the client sends the
 * request again (@upstash/redis retries a request whose fetch throws; ioredis resends what was
 * unanswered after a reconnect): the caller sees the second reply only.
 */
class TwiceTransport implements Transport {
  /** The replies of each request's two runs, [first, second], in order. */
  readonly runs: Array<[Array<Reply | Error>, Array<Reply | Error>]> = [];

  constructor(private readonly inner: Transport) {}

  async evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    const first = await this.inner.evalsha(calls);
    const second = await this.inner.evalsha(calls);
    this.runs.push([first, second]);
    return second;
  }

  async eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    await this.inner.eval(calls);
    return this.inner.eval(calls);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('one enqueue is one job, however often its request runs', () => {
  const redis = useRedis();

  it('a request that runs twice makes one job, and answers as the first run did', async () => {
    const name = redis.queue().name;
    const queue = new Queue<number>(new TwiceTransport(redis.transport), name);
    // (a repeat spends sequence numbers: generated ids stay unique, not consecutive)
    expect(await queue.add(1)).toEqual({ id: 'JOB:1', state: 'pending' });
    expect(await queue.add(2, { delayMs: 60_000 })).toMatchObject({ state: 'scheduled' });
    expect(await queue.add(3, { id: 'mine' })).toEqual({ id: 'JOB:mine', state: 'pending' });
    const bulk = await queue.addBulk(Array.from({ length: 1500 }, (_, i) => ({ payload: 10 + i })));
    expect(bulk.map((r) => r.state)).toEqual(Array.from({ length: 1500 }, () => 'pending'));
    expect(new Set(bulk.map((r) => r.id)).size).toBe(1500);
    const { counts } = await queue.stats();
    expect(counts).toMatchObject({ pending: 1502, scheduled: 1 });
    expect(await checkInvariants(redis.raw, name)).toEqual([]);
  });

  it('a bulk of generated ids that runs twice answers as its first run did, each job pending or scheduled, from a record of a few bytes', async () => {
    const name = redis.queue().name;
    const twice = new TwiceTransport(redis.transport);
    const queue = new Queue<number>(twice, name);
    await queue.add(-1); // registered (a request of its own): the requests counted below are the enqueues
    twice.runs.length = 0;
    const mixed = await queue.addBulk(Array.from({ length: 1000 }, (_, i) => ({ payload: i, ...(i % 3 === 0 ? { delayMs: 60_000 } : {}) })));
    expect(mixed.map((r) => r.state)).toEqual(Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? 'scheduled' : 'pending')));
    const pending = await queue.addBulk(Array.from({ length: 1000 }, (_, i) => ({ payload: i })));
    expect(new Set([...mixed, ...pending].map((r) => r.id)).size).toBe(2000);
    expect(twice.runs).toHaveLength(2);
    for (const [first, second] of twice.runs) expect(second).toEqual(first);
    expect(await queue.stats()).toMatchObject({ counts: { pending: 1667, scheduled: 334 } });
    // the record of a request is its ids' first number and a letter a job, or one for all: what
    // stays in memory the request key's 2 minutes is a few bytes a call, not 25 a job
    const records = await redis.raw.keys(`${keysOf(queue).prefix}req:*`);
    const sizes = (await Promise.all(records.map((key) => redis.raw.strlen(key)))).sort((a, b) => a - b);
    expect(sizes).toHaveLength(3); // the warm-up's, the pending bulk's, the mixed one's
    expect(sizes[1]).toBeLessThan(40);
    expect(sizes[2]).toBeLessThan(1040);
    expect(await checkInvariants(redis.raw, name)).toEqual([]);
  });

  it('so does one of a partitioned queue, whose generated ids name their partition', async () => {
    const twice = new TwiceTransport(redis.transport);
    const queue = new PartitionedQueue<number>(twice, redis.queue().name, { partitions: 2 });
    await queue.addBulk([{ payload: -1 }, { payload: -2 }]); // both partitions registered
    twice.runs.length = 0;
    const added = [await queue.add(1), await queue.add(2), ...(await queue.addBulk([{ payload: 3 }, { payload: 4, delayMs: 60_000 }]))];
    expect(added.map((r) => r.id)).toEqual([expect.stringMatching(/^JOB:\d+~\d$/), expect.stringMatching(/^JOB:\d+~\d$/), expect.stringMatching(/^JOB:\d+~\d$/), expect.stringMatching(/^JOB:\d+~\d$/)]);
    expect(added.map((r) => r.state)).toEqual(['pending', 'pending', 'pending', 'scheduled']);
    expect(twice.runs.length).toBeGreaterThanOrEqual(3);
    for (const [first, second] of twice.runs) expect(second).toEqual(first);
    expect(await queue.stats()).toMatchObject({ counts: { pending: 5, scheduled: 1 } });
  });

  it('an idempotency key answers the first call again, with the same jobs only', async () => {
    const queue = redis.queue<{ to: string }>();
    const first = await queue.add({ to: 'a' }, { idempotencyKey: 'welcome-a', group: 'g' });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    expect(await queue.add({ to: 'a' }, { idempotencyKey: 'welcome-a', group: 'g' })).toEqual(first);
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    await expect(queue.add({ to: 'b' }, { idempotencyKey: 'welcome-a', group: 'g' })).rejects.toBeInstanceOf(IdempotencyConflictError);
    await expect(queue.add({ to: 'a' }, { idempotencyKey: 'welcome-a' })).rejects.toMatchObject({ code: 'EMQCONFLICT', status: 409 });
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    // another key is another enqueue
    expect((await queue.add({ to: 'a' }, { idempotencyKey: 'welcome-a2', group: 'g' })).id).not.toBe(first.id);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('a key of a bulk enqueue covers all its jobs, over several script calls', async () => {
    const queue = redis.queue<number>();
    const jobs = Array.from({ length: 1200 }, (_, i) => ({ payload: i }));
    const first = await queue.addBulk(jobs, { idempotencyKey: 'import-7' });
    expect(await queue.addBulk(jobs, { idempotencyKey: 'import-7' })).toEqual(first);
    expect((await queue.stats()).counts.pending).toBe(1200);
  });

  it('forgets a key after idempotencyTtlMs', async () => {
    const queue = redis.queue<number>({ idempotencyTtlMs: 50 });
    const first = await queue.add(1, { idempotencyKey: 'k' });
    await sleep(80);
    const again = await queue.add(1, { idempotencyKey: 'k' });
    expect(again.id).not.toBe(first.id);
  });

  it('refuses a malformed key before any write', async () => {
    const queue = redis.queue<number>();
    for (const key of ['', 'a b', 'x'.repeat(201), 'é']) {
      await expect(queue.add(1, { idempotencyKey: key })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await redis.raw.keys(`${keysOf(queue).prefix}*`)).toEqual([]);
  });

  it('a request of duplicates alone writes nothing, however often it runs', async () => {
    const queue = redis.queue<number>();
    await queue.add(1, { id: 'd' });
    const row = await redis.raw.hgetall(keysOf(queue).job('JOB:d'));
    const requests = await redis.raw.keys(`${keysOf(queue).prefix}req:*`);
    const twice = new Queue<number>(new TwiceTransport(redis.transport), queue.name);
    expect(await twice.add(2, { id: 'd' })).toEqual({ id: 'JOB:d', state: 'duplicate' });
    expect(await redis.raw.hgetall(keysOf(queue).job('JOB:d'))).toEqual(row);
    // no record of the request: it wrote nothing to answer for
    expect(await redis.raw.keys(`${keysOf(queue).prefix}req:*`)).toEqual(requests);
  });
});

describe('a claim whose request runs twice answers the same jobs', () => {
  const redis = useRedis();

  it('the repeat renews the leases to the deadline its reply reports: a holder never believes a lease longer than Redis keeps it', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
    /** Runs each request twice, 200 ms apart: the repeat's `now` is later than the first run's. */
    class LateTwiceTransport extends TwiceTransport {
      override async evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
        await redis.transport.evalsha(calls);
        await sleep(200);
        return redis.transport.evalsha(calls);
      }
    }
    const late = new Leases(new Queue<number>(new LateTwiceTransport(redis.transport), queue.name));
    await new Leases(queue).claim(1, 1_000); // the claim script loaded (job 1 held elsewhere)
    const claimed = await late.claim(1, 30_000);
    expect(claimed.jobs).toHaveLength(1);
    const deadline = Number(await redis.raw.zscore(keysOf(queue).key('active'), claimed.jobs[0]!.id));
    expect(deadline).toBe(claimed.jobs[0]!.leaseUntil);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('claim, beat and complete-and-claim: the repeat hands out the first run\'s jobs, none left to lapse', async () => {
    const queue = redis.queue<number>();
    await queue.addBulk(Array.from({ length: 9 }, (_, i) => ({ payload: i })));
    const twice = new Leases(new Queue<number>(new TwiceTransport(redis.transport), queue.name));

    const claimed = await twice.claim(2, 30_000);
    expect(claimed.jobs.map((j) => j.payload)).toEqual([0, 1]);
    expect((await queue.stats()).counts).toMatchObject({ active: 2, pending: 7 });

    const beat = await twice.beat({ n: 2, leaseMs: 30_000 });
    expect(beat.jobs.map((j) => j.payload)).toEqual([2, 3]);
    expect((await queue.stats()).counts).toMatchObject({ active: 4, pending: 5 });

    const finished = [...claimed.jobs, ...beat.jobs].map((job) => ({ job, outcome: { kind: 'complete' } as const }));
    const round = await twice.round({ finished, claim: 2, leaseMs: 30_000 });
    expect(round.settled).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(round.claimed?.jobs.map((j) => j.payload)).toEqual([4, 5]);
    expect((await queue.stats()).counts).toMatchObject({ completed: 4, active: 2, pending: 3 });
    // the jobs handed out are the ones held: settling them leaves nothing active
    const last = await new Leases(queue).complete(round.claimed!.jobs.map((j) => ({ id: j.id, token: j.token })));
    expect(last.completed).toEqual([true, true]);
    expect((await queue.stats()).counts).toMatchObject({ completed: 6, active: 0, pending: 3 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });
});
