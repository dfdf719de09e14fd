import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import { JobNotFoundError, Queue, type Job } from '../../src/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { keysOf, queueName, sleep, useRedis, leases } from '../helpers.js';
import { checkInvariants, findViolations, flagChecker, snapshotQueue } from '../invariants.js';

const GROUPS = ['a', 'b', 'c'] as const;
type Group = (typeof GROUPS)[number];

const LONG_LEASE = 60_000;
const SHORT_LEASE = 1;
const MAX_ATTEMPTS = 3;
const CLAIMERS = 3;

/** One step of a run: a plain descriptor, so a failing run shrinks to a readable list. */
type Op =
  | { op: 'enqueue'; jobs: Array<{ id: string | null; group: Group | null; delayMs: number; priority: number }> }
  | { op: 'claim'; claimer: number; n: number; short: boolean }
  | { op: 'settle'; how: 'complete' | 'retry' | 'fail'; pick: number; stale: boolean; delayMs: number }
  | { op: 'reap' }
  | { op: 'promote'; waitMs: number }
  | { op: 'limit'; group: Group; limit: number | null }
  | { op: 'pauseGroup'; group: Group }
  | { op: 'resumeGroup'; group: Group }
  | { op: 'pause' }
  | { op: 'resume' }
  | { op: 'remove'; pick: number };

const group = fc.constantFrom(...GROUPS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('enqueue' as const),
      jobs: fc.array(
        fc.record({
          // now and then a given id from a small pool: duplicates, and an id removed then added again
          id: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('u1', 'u2', 'u3') }),
          group: fc.option(group, { nil: null, freq: 4 }),
          delayMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) }),
          priority: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('claim' as const),
      claimer: fc.integer({ min: 0, max: CLAIMERS - 1 }),
      n: fc.integer({ min: 1, max: 5 }),
      short: fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))), // a short lease 1 time in 4
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('settle' as const),
      how: fc.constantFrom('complete' as const, 'retry' as const, 'fail' as const),
      pick: fc.nat({ max: 20 }),
      stale: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      delayMs: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ op: 'reap' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('promote' as const), waitMs: fc.integer({ min: 0, max: 6 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('limit' as const),
      group,
      limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null, freq: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('pauseGroup' as const), group }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('resumeGroup' as const), group }) },
  { weight: 1, arbitrary: fc.constant({ op: 'pause' as const }) },
  { weight: 3, arbitrary: fc.constant({ op: 'resume' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat({ max: 40 }) }) },
);

/** A lease the model believes is valid: the job is active under `token`. */
interface Holding {
  readonly id: string;
  readonly token: number;
  readonly claimer: number;
  readonly short: boolean;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly group: string | undefined;
}

/** What the test knows without asking Redis: who holds what, what is paused, the limits. */
class Model {
  readonly held = new Map<string, Holding>();
  /**
   * (id, token) pairs that were valid once and no longer are: using one is fenced off, except the
   * settle that ended the lease sent again (`settled`, while `trace`: the id not claimed again nor
   * removed since), which answers as it did the first time.
   */
  readonly released: Array<{ id: string; token: number; settled?: { how: string; answer: unknown }; trace: boolean }> = [];
  readonly ids: string[] = [];
  readonly groupOf = new Map<string, string | undefined>();
  readonly removed = new Set<string>();
  readonly pausedGroups = new Set<string>();
  readonly limits = new Map<string, number>();
  paused = false;

  release(id: string, settled?: { how: string; answer: unknown }): void {
    const h = this.held.get(id);
    if (!h) return;
    this.held.delete(id);
    this.released.push({ id, token: h.token, ...(settled ? { settled } : {}), trace: true });
  }

  /** `id` claimed again or removed: no settle of its earlier leases is a repeat any more. */
  forget(id: string): void {
    for (const r of this.released) if (r.id === id) r.trace = false;
  }
}

describe('groups, limits and pauses under random interleavings', () => {
  const redis = useRedis();

  /** Active jobs per group, read from Redis (the active set and the rows). */
  async function activeByGroup(queue: Queue<unknown>): Promise<Map<string, number>> {
    const snap = await snapshotQueue(redis.raw, queue.name);
    const out = new Map<string, number>();
    for (const id of snap.active.keys()) {
      const g = snap.rows.get(id)?.g;
      if (g !== undefined) out.set(g, (out.get(g) ?? 0) + 1);
    }
    return out;
  }

  async function step(queues: ReadonlyArray<Queue<unknown>>, model: Model, op: Op): Promise<void> {
    const queue = queues[0]!;
    switch (op.op) {
      case 'enqueue': {
        // one call for all of them: admission of a mixed batch in one script
        const results = await queue.addBulk(
          op.jobs.map((job, i) => ({
            payload: model.ids.length + i,
            ...(job.id === null ? {} : { id: job.id }),
            ...(job.group === null ? {} : { group: job.group }),
            ...(job.delayMs > 0 ? { delayMs: job.delayMs } : {}),
            priority: job.priority,
            maxAttempts: MAX_ATTEMPTS,
          })),
        );
        const live = new Set(model.ids.filter((id) => !model.removed.has(id)));
        const want = op.jobs.map((j) => {
          if (j.id !== null && live.has(`JOB:${j.id}`)) return 'duplicate';
          if (j.id !== null) live.add(`JOB:${j.id}`);
          return j.delayMs > 0 ? 'scheduled' : 'pending';
        });
        expect(results.map((r) => r.state)).toEqual(want);
        for (const [i, result] of results.entries()) {
          if (result.state === 'duplicate') continue;
          // a removed id added again starts a new life; the tokens of its old one stay in `released`
          if (!model.removed.delete(result.id)) model.ids.push(result.id);
          model.groupOf.set(result.id, op.jobs[i]!.group ?? undefined);
        }
        return;
      }
      case 'claim': {
        const claimer = queues[op.claimer]!;
        const result = await leases(claimer).claim(op.n, op.short ? SHORT_LEASE : LONG_LEASE);
        expect(result.paused).toBe(model.paused);
        if (model.paused) expect(result.jobs, 'a paused queue handed out work').toEqual([]);
        expect(result.jobs.length).toBeLessThanOrEqual(op.n);
        const got = new Set<string>();
        for (const job of result.jobs) {
          expect(got.has(job.id), `${job.id} handed out twice in one claim`).toBe(false);
          got.add(job.id);
          expect(model.held.has(job.id), `${job.id} handed out while still validly held`).toBe(false);
          expect(model.removed.has(job.id), `${job.id} was removed`).toBe(false);
          model.forget(job.id);
          expect(job.group).toBe(model.groupOf.get(job.id));
          if (job.group !== undefined) {
            expect(model.pausedGroups.has(job.group), `${job.id} of paused group ${job.group} handed out`).toBe(false);
          }
          expect(job.attempt).toBeGreaterThanOrEqual(1);
          expect(job.attempt).toBeLessThanOrEqual(job.maxAttempts);
          model.held.set(job.id, {
            id: job.id,
            token: job.token,
            claimer: op.claimer,
            short: op.short,
            attempt: job.attempt,
            maxAttempts: job.maxAttempts,
            group: job.group,
          });
        }
        // the limit holds for every group this claim served, counted from Redis itself
        const served = new Set(result.jobs.map((j) => j.group).filter((g): g is string => g !== undefined));
        if (served.size > 0) {
          const counts = await activeByGroup(queue);
          for (const g of served) {
            const limit = model.limits.get(g);
            if (limit !== undefined) {
              expect(counts.get(g) ?? 0, `group ${g} over its limit ${limit}`).toBeLessThanOrEqual(limit);
            }
          }
        }
        // a claim that came back short left nothing serviceable behind
        if (!model.paused && result.jobs.length < op.n) {
          expect(await redis.raw.lrange(keysOf(queue).key('ring'), 0, -1)).toEqual([]);
        }
        return;
      }
      case 'settle': {
        const held = [...model.held.values()];
        let target: { id: string; token: number; claimer: number } | undefined;
        let holding: Holding | undefined;
        // what a stale settle answers: fenced, or, sent again by the holder that settled, its first answer
        let repeat: unknown;
        if (op.stale) {
          if (model.released.length > 0) {
            const r = model.released[op.pick % model.released.length]!;
            target = { id: r.id, token: r.token, claimer: op.pick % CLAIMERS };
            if (r.trace && r.settled?.how === op.how) repeat = r.settled.answer;
          } else if (held.length > 0) {
            const h = held[op.pick % held.length]!;
            target = { id: h.id, token: h.token + 1, claimer: h.claimer };
          }
        } else if (held.length > 0) {
          holding = held[op.pick % held.length]!;
          target = holding;
        }
        if (!target) return;
        const via = queues[target.claimer]!;
        const item = { id: target.id, token: target.token };
        const before = await redis.raw.hgetall(keysOf(queue).job(target.id));
        let answer: unknown;
        if (op.how === 'complete') {
          answer = (await leases(via).complete([item])).completed[0];
          expect(answer).toEqual(holding !== undefined || (repeat ?? false));
        } else if (op.how === 'retry') {
          answer = (await leases(via).retry([{ ...item, error: 'boom', delayMs: op.delayMs }]))[0];
          const want = !holding
            ? (repeat ?? 'fenced')
            : holding.attempt >= holding.maxAttempts
              ? 'dead'
              : op.delayMs > 0
                ? 'scheduled'
                : 'pending';
          expect(answer).toEqual(want);
        } else {
          answer = (await leases(via).fail([{ ...item, error: 'fatal' }]))[0];
          expect(answer).toEqual(holding ? 'dead' : (repeat ?? 'fenced'));
        }
        if (holding) model.release(holding.id, { how: op.how, answer });
        else expect(await redis.raw.hgetall(keysOf(queue).job(target.id)), 'a fenced or repeated call changed the row').toEqual(before);
        return;
      }
      case 'reap': {
        await sleep(3); // every 1 ms lease is over by now; 60 s ones are not
        const expired = [...model.held.values()].filter((h) => h.short);
        const { requeued, buried } = await leases(queue).reap();
        expect({ requeued, buried }).toEqual({
          requeued: expired.filter((h) => h.attempt < h.maxAttempts).length,
          buried: expired.filter((h) => h.attempt >= h.maxAttempts).length,
        });
        for (const h of expired) model.release(h.id);
        return;
      }
      case 'promote':
        if (op.waitMs > 0) await sleep(op.waitMs);
        await leases(queue).promote();
        return;
      case 'limit':
        await queue.setGroupLimit(op.group, op.limit);
        if (op.limit === null) model.limits.delete(op.group);
        else model.limits.set(op.group, op.limit);
        return;
      case 'pauseGroup':
        expect(await queue.pauseGroup(op.group)).toBe(!model.pausedGroups.has(op.group));
        model.pausedGroups.add(op.group);
        return;
      case 'resumeGroup':
        expect(await queue.resumeGroup(op.group)).toBe(model.pausedGroups.has(op.group));
        model.pausedGroups.delete(op.group);
        return;
      case 'pause':
        expect(await queue.pause()).toBe(!model.paused);
        model.paused = true;
        return;
      case 'resume':
        expect(await queue.resume()).toBe(model.paused);
        model.paused = false;
        return;
      case 'remove': {
        if (model.ids.length === 0) return;
        const id = model.ids[op.pick % model.ids.length]!;
        if (model.removed.has(id)) {
          await expect(queue.remove(id)).rejects.toBeInstanceOf(JobNotFoundError);
        } else {
          await queue.remove(id);
          model.release(id);
          model.forget(id);
          model.removed.add(id);
        }
        return;
      }
    }
  }

  it('keeps every invariant, never serves a paused group or queue, never passes a limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 50, size: 'max' }), async (ops) => {
        const name = queueName('prop');
        const queues = Array.from({ length: CLAIMERS }, () => redis.queue({ name }));
        const model = new Model();
        try {
          for (const [i, op] of ops.entries()) {
            try {
              await step(queues, model, op);
              expect(await checkInvariants(redis.raw, name)).toEqual([]);
            } catch (error) {
              if (error instanceof Error) error.message = `step ${i} ${JSON.stringify(op)}: ${error.message}`;
              throw error;
            }
          }
        } finally {
          const keys = await redis.raw.keys(`emq:{${name}}:*`);
          if (keys.length > 0) await redis.raw.del(...keys);
        }
      }),
      { numRuns: 50 },
    );
  }, 120_000);

  it('a paused group at its limit stays off the ring when any way of leaving active frees a slot', async () => {
    type Free = (queue: Queue<unknown>, job: Job<unknown>) => Promise<unknown>;
    const ways: Record<string, Free> = {
      complete: (q, j) => leases(q).complete([{ id: j.id, token: j.token }]),
      retry: (q, j) => leases(q).retry([{ id: j.id, token: j.token, error: 'e', delayMs: 0 }]),
      fail: (q, j) => leases(q).fail([{ id: j.id, token: j.token, error: 'e' }]),
      remove: (q, j) => q.remove(j.id),
      reap: async (q) => {
        await sleep(3);
        return leases(q).reap();
      },
    };
    for (const [way, free] of Object.entries(ways)) {
      const queue = redis.queue();
      const k = keysOf(queue);
      await queue.setGroupLimit('g', 1);
      await queue.addBulk([1, 2, 3].map((payload) => ({ payload, group: 'g' })));
      const { jobs } = await leases(queue).claim(1, way === 'reap' ? SHORT_LEASE : LONG_LEASE);
      expect(jobs).toHaveLength(1);
      await queue.pauseGroup('g');
      await free(queue, jobs[0]!);
      expect(await redis.raw.lrange(k.key('ring'), 0, -1), way).toEqual([]);
      expect((await leases(queue).claim(5, LONG_LEASE)).jobs, way).toEqual([]);
      expect(await checkInvariants(redis.raw, queue.name), way).toEqual([]);
      // resumed, the group is served again, one at a time
      await queue.resumeGroup('g');
      expect(await redis.raw.lrange(k.key('ring'), 0, -1), way).toEqual(['g']);
      expect((await leases(queue).claim(5, LONG_LEASE)).jobs, way).toHaveLength(1);
      expect(await checkInvariants(redis.raw, queue.name), way).toEqual([]);
    }
  });

  it('parallel claimers through separate connections never put more than the limit active', async () => {
    // ioredis connections of their own (a cluster client in the cluster project), also in the upstash project
    const nodes = inject('clusterNodes');
    const transports = Array.from({ length: 5 }, () => (nodes ? IoredisTransport.connectCluster(nodes) : IoredisTransport.connect(inject('redisUrl'))));
    const name = queueName('race');
    const main = redis.queue({ name });
    const queues = Array.from({ length: 10 }, (_, i) => new Queue<number>(transports[i % transports.length]!, name));
    const LIMIT = 2;
    const TOTAL = 50;
    try {
      await main.setGroupLimit('g', LIMIT);
      await main.addBulk(Array.from({ length: TOTAL }, (_, i) => ({ payload: i, group: 'g' })));

      let held: Array<Job<number>> = [];
      const everClaimed = new Set<string>();
      let done = 0;
      const take = (jobs: ReadonlyArray<Job<number>>): void => {
        for (const job of jobs) {
          expect(everClaimed.has(job.id), `${job.id} handed out twice`).toBe(false);
          everClaimed.add(job.id);
        }
        held.push(...jobs);
      };
      const activeInRedis = async (): Promise<number> => (await activeByGroup(main)).get('g') ?? 0;

      for (let round = 0; done < TOTAL; round++) {
        expect(round, 'no progress').toBeLessThan(TOTAL);
        // only claims in flight: the holders after them are exactly what Redis let out
        const claims = await Promise.all(queues.map((q) => leases(q).claim(3, 30_000)));
        take(claims.flatMap((c) => c.jobs));
        expect(held.length).toBe(Math.min(LIMIT, TOTAL - done));
        expect(await activeInRedis()).toBe(held.length);

        // completes racing claims: whatever order Redis ran them in, the limit held
        const settling = held;
        held = [];
        const [completions, more] = await Promise.all([
          Promise.all(settling.map((job, i) => leases(queues[i % queues.length]!).complete([{ id: job.id, token: job.token }]))),
          Promise.all(queues.map((q) => leases(q).claim(3, 30_000))),
        ]);
        for (const c of completions) expect(c.completed).toEqual([true]);
        done += settling.length;
        take(more.flatMap((c) => c.jobs));
        expect(held.length).toBeLessThanOrEqual(LIMIT);
        expect(await activeInRedis()).toBe(held.length);
        expect(Number((await redis.raw.hget(keysOf(main).key('gactive'), 'g')) ?? '0')).toBe(held.length);
        expect(await checkInvariants(redis.raw, name)).toEqual([]);
        if (held.length > 0) {
          await Promise.all(held.map((job) => leases(main).complete([{ id: job.id, token: job.token }])));
          done += held.length;
          held = [];
        }
      }
      expect(everClaimed.size).toBe(TOTAL);
      expect((await main.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: TOTAL, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
      expect(await checkInvariants(redis.raw, name)).toEqual([]);
    } finally {
      await Promise.all(transports.map((t) => t.close()));
    }
  });
});

describe('checkInvariants itself', () => {
  const redis = useRedis();

  it('is quiet on a consistent queue and names each kind of corruption', async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    await queue.setGroupLimit('g', 1);
    await queue.addBulk([
      { payload: 1 },
      { payload: 2, group: 'g' },
      { payload: 3, group: 'g' },
      { payload: 4, group: 'h' },
    ]);
    await leases(queue).claim(2, 60_000); // JOB:1 (ungrouped) and JOB:2 (g, now at its limit)
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const expectFlag = flagChecker(redis.raw, queue.name);

    // (a) a job in two places; a state that disagrees; a row without a place; group mismatch
    await expectFlag(
      () => redis.raw.zadd(k.key('dead'), 1, 'JOB:3'),
      () => redis.raw.zrem(k.key('dead'), 'JOB:3'),
      /JOB:3: in 2 places/,
    );
    await expectFlag(
      () => redis.raw.hset(k.job('JOB:4'), 's', 'scheduled'),
      () => redis.raw.hset(k.job('JOB:4'), 's', 'pending'),
      /JOB:4: in fifo:h but its row says "scheduled"/,
    );
    await expectFlag(
      () => redis.raw.hset(k.job('JOB:4'), 'g', 'x'),
      () => redis.raw.hset(k.job('JOB:4'), 'g', 'h'),
      /JOB:4: in fifo:h but its row has group "x"/,
    );
    await expectFlag(
      () => redis.raw.hset(k.job('JOB:99'), 's', 'pending'),
      () => redis.raw.del(k.job('JOB:99')),
      /JOB:99: in no set/,
    );
    await expectFlag(
      () => redis.raw.hset(k.job('JOB:1'), 'g', 'h'),
      () => redis.raw.hdel(k.job('JOB:1'), 'g'),
      /gactive/,
    );
    // (b) a drifted count
    await expectFlag(
      () => redis.raw.hset(k.key('gactive'), 'g', 2),
      () => redis.raw.hset(k.key('gactive'), 'g', 1),
      /group g: gactive says 2 but 1/,
    );
    // (c) a duplicate entry, an unserviceable entry, a missing entry
    await expectFlag(
      () => redis.raw.rpush(k.key('ring'), 'h'),
      () => redis.raw.lrem(k.key('ring'), 1, 'h'),
      /h is on the ring 2 times/,
    );
    await expectFlag(
      () => redis.raw.rpush(k.key('ring'), 'g'),
      () => redis.raw.lrem(k.key('ring'), 0, 'g'),
      /g is on the ring but not serviceable/,
    );
    await expectFlag(
      () => redis.raw.lrem(k.key('ring'), 0, 'h'),
      () => redis.raw.rpush(k.key('ring'), 'h'),
      /h is serviceable but not on the ring/,
    );
    // (d) the doorbell
    await expectFlag(
      () => redis.raw.lpush(k.key('wake'), 'x'),
      () => redis.raw.lrem(k.key('wake'), 0, 'x'),
      /wake: tokens other than/,
    );
    await expectFlag(
      () => redis.raw.lpush(k.key('wake'), ...Array.from({ length: 70 }, () => '1')),
      () => redis.raw.ltrim(k.key('wake'), 0, 63),
      /over the cap/,
    );
    // the pure half works on a snapshot too
    expect(findViolations(await snapshotQueue(redis.raw, queue.name))).toEqual([]);
  });
});
