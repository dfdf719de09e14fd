import { afterEach, describe, expect, it } from 'vitest';
import { JobNotFoundError, JobStateError, PartitionError } from '../../src/errors.js';
import type { JobRecord } from '../../src/job.js';
import { openQueue } from '../../src/queue/open-queue.js';
import { PartitionedQueue, type PartitionedQueueOptions } from '../../src/partitions/partitioned-queue.js';
import { partitionName, partitionOf, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { Flows } from '../../src/flows/flows.js';
import { Queue } from '../../src/queue/queue.js';
import { queueOverviews } from '../../src/queue/registry.js';
import { checkInvariants } from '../invariants.js';
import { leases, queueName, sleep, useRedis } from '../helpers.js';

/** A partitioned queue's surface, driven against Redis state (issue 19: partitioned queues). */
describe('PartitionedQueue', () => {
  const redis = useRedis();
  const made: string[] = [];

  afterEach(async () => {
    for (const name of made.splice(0)) {
      const keys = [...(await redis.raw.keys(`emq:{${name}~*}:*`)), ...(await redis.raw.keys(`emq:{${name}}:*`))];
      for (const key of keys) await redis.raw.del(key);
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });

  /** A partitioned queue on a random name (removed after the test). */
  const open = <P = unknown>(partitions = 4, options: Omit<PartitionedQueueOptions, 'partitions'> & { name?: string } = {}): PartitionedQueue<P> => {
    const name = options.name ?? queueName('pq');
    if (!made.includes(name)) made.push(name);
    return new PartitionedQueue<P>(redis.transport, name, { ...options, partitions });
  };

  /** Every key of `name`, partitions included. */
  const keysOfQueue = async (name: string): Promise<string[]> => [...(await redis.raw.keys(`emq:{${name}~*}:*`)), ...(await redis.raw.keys(`emq:{${name}}:*`))].sort();

  /** The keys of `name` an obliterate deletes: all but the request records, left to their TTL. */
  const keysLeft = async (name: string): Promise<string[]> => {
    const out: string[] = [];
    for (const key of await keysOfQueue(name)) if (!key.includes(':req:') || (await redis.raw.pttl(key)) < 0) out.push(key);
    return out;
  };

  /** The invariant checker over every partition. */
  const invariantsHold = async (queue: PartitionedQueue): Promise<void> => {
    for (const part of queue.parts) expect(await checkInvariants(redis.raw, part.name)).toEqual([]);
  };

  /** Claims and fails (for good) every pending job of every partition. */
  const bury = async (queue: PartitionedQueue): Promise<void> => {
    for (const part of queue.parts) {
      const { jobs } = await leases(part).claim(1000, 30_000);
      if (jobs.length > 0) await leases(part).fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'boom' })));
    }
  };

  it('routes a group to one partition, stable across instances; keys only in emq:{q~i}:*; the registry holds the count', async () => {
    const queue = open(8);
    const other = new PartitionedQueue(redis.transport, queue.name, { partitions: 8 });
    const groups = Array.from({ length: 20 }, (_, i) => `g${i}`);
    const added = await Promise.all(groups.map((group) => queue.add({ group }, { group })));
    const again = await Promise.all(groups.map((group) => other.add({ group }, { group })));
    for (const [i, group] of groups.entries()) {
      const p = partitionOf(group, 8);
      expect(added[i]!.id).toMatch(new RegExp(`^JOB:\\d+~${p}$`));
      expect(again[i]!.id).toMatch(new RegExp(`^JOB:\\d+~${p}$`));
      expect(queue.partitionOfGroup(group)).toBe(queue.parts[p]);
      expect((await queue.getJob(added[i]!.id))?.group).toBe(group);
    }
    const ids = [...added, ...again].map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = await keysOfQueue(queue.name);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(new RegExp(`^emq:\\{${queue.name}~[0-7]\\}:`));
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, queue.name)).toBe('8');
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(1);
    for (let i = 0; i < 8; i++) expect(await redis.raw.sismember('emq:queues', partitionName(queue.name, i))).toBe(0);
    expect((await queue.counts()).pending).toBe(40);
    await invariantsHold(queue);
  });

  it('refuses another count or a plain Queue on the name with EMQPARTITION, writing nothing', async () => {
    const queue = open(4);
    await queue.add('first', { group: 'a' });
    const before = await keysOfQueue(queue.name);
    const snapshot = await Promise.all(before.map(async (key) => [key, await redis.raw.type(key)]));

    const wrong = new PartitionedQueue(redis.transport, queue.name, { partitions: 8 });
    await expect(wrong.add('x')).rejects.toBeInstanceOf(PartitionError);
    await expect(wrong.add('y', { group: 'b' })).rejects.toBeInstanceOf(PartitionError);
    const plain = new Queue(redis.transport, queue.name);
    await expect(plain.add('z')).rejects.toBeInstanceOf(PartitionError);
    await expect(plain.addBulk([{ payload: 1 }])).rejects.toMatchObject({ code: 'EMQPARTITION' });
    // a flow naming it as a plain queue, its child's queue a plain one: refused before any write
    const childQueue = queueName('flow-child');
    made.push(childQueue);
    const flows = new Flows(redis.transport);
    await expect(flows.add({ queue: queue.name, payload: 'parent', children: [{ queue: childQueue, payload: 'child' }] })).rejects.toBeInstanceOf(PartitionError);
    expect(await redis.raw.keys(`emq:{${childQueue}}:job:*`)).toEqual([]);

    const after = await keysOfQueue(queue.name);
    expect(after).toEqual(before);
    expect(await Promise.all(after.map(async (key) => [key, await redis.raw.type(key)]))).toEqual(snapshot);
    expect((await queue.counts()).pending).toBe(1);
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, queue.name)).toBe('4');

    // a plain queue's name cannot be partitioned
    const plainName = queueName('plain');
    made.push(plainName);
    await new Queue(redis.transport, plainName).add(1);
    const partitioned = new PartitionedQueue(redis.transport, plainName, { partitions: 2 });
    await expect(partitioned.add(2)).rejects.toBeInstanceOf(PartitionError);
    expect(await redis.raw.keys(`emq:{${plainName}~*}:*`)).toEqual([]);
  });

  it('opens a name as the registry knows it: openQueue', async () => {
    const queue = open(3);
    expect(await openQueue(redis.transport, queue.name)).toBeInstanceOf(Queue); // not registered yet
    await queue.add(1);
    const opened = await openQueue(redis.transport, queue.name);
    expect(opened).toBeInstanceOf(PartitionedQueue);
    expect((opened as PartitionedQueue).partitions).toBe(3);
    expect((await opened.stats()).counts.pending).toBe(1);
  });

  it('acts on a job by id in the partition that holds it: generated ids, caller ids, grouped or not', async () => {
    const queue = open<{ n: number }>(4);
    const a = await queue.add({ n: 1 });
    const b = await queue.add({ n: 2 }, { id: 'mine', group: 'tenant-1' });
    const c = await queue.add({ n: 3 }, { id: 'loose' });
    const d = await queue.add({ n: 4 }, { delayMs: 60_000 });
    expect(b.id).toBe('JOB:mine');
    expect((await queue.getJob('mine'))?.group).toBe('tenant-1');
    expect((await queue.getJob(c.id))?.payload).toEqual({ n: 3 });

    await queue.changePriority(b.id, 5);
    expect((await queue.partitionOfGroup('tenant-1').getJob('mine'))?.priority).toBe(5);
    await queue.updateData('loose', { n: 30 });
    expect((await queue.getJob('loose'))?.payload).toEqual({ n: 30 });
    await queue.changePriority(d.id, 1);
    expect((await queue.getJob(d.id))?.priority).toBe(1);

    await queue.remove(a.id);
    expect(await queue.getJob(a.id)).toBeNull();
    await expect(queue.remove(a.id)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.remove('nobody')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.updateData('nobody', { n: 0 })).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(queue.getJob('JOB:1~9')).resolves.toBeNull(); // no partition 9

    // reprocess: a dead job goes back in its partition
    await bury(queue);
    expect((await queue.getJob('mine'))?.state).toBe('dead');
    await expect(queue.reprocess('JOB:nobody')).rejects.toBeInstanceOf(JobNotFoundError);
    await queue.reprocess('mine');
    expect((await queue.getJob('mine'))?.state).toBe('pending');
    await expect(queue.reprocess('mine')).rejects.toBeInstanceOf(JobStateError);
    await invariantsHold(queue);
  });

  it('routes a caller\'s id as the job is named: 42 and JOB:42 are one job in one partition', async () => {
    const queue = open(8);
    const first = await queue.add('a', { id: '42' });
    expect(await queue.add('b', { id: 'JOB:42' })).toEqual({ id: 'JOB:42', state: 'duplicate' });
    const home = queue.partitionOfAdded(first.id);
    expect(await home.getJob(first.id)).toMatchObject({ payload: 'a' });
    const holders = await Promise.all(queue.parts.map(async (part) => (await part.getJob('42')) !== null));
    expect(holders.filter(Boolean)).toHaveLength(1);
    // a generated id and a group name their partitions as add routed them
    const grouped = await queue.add('c', { group: 'tenant-5' });
    expect(queue.partitionOfAdded(grouped.id, 'tenant-5')).toBe(queue.partitionOfGroup('tenant-5'));
    const turn = await queue.add('d');
    expect(await queue.partitionOfAdded(turn.id).getJob(turn.id)).toMatchObject({ payload: 'd' });
  });

  it('moves a job to a group within its partition, and refuses a move across partitions', async () => {
    const queue = open(4);
    const groups = Array.from({ length: 40 }, (_, i) => `m${i}`);
    const home = groups[0]!;
    const same = groups.find((g) => g !== home && partitionOf(g, 4) === partitionOf(home, 4))!;
    const elsewhere = groups.find((g) => partitionOf(g, 4) !== partitionOf(home, 4))!;
    const { id } = await queue.add('x', { group: home });
    await queue.moveToGroup(id, same);
    expect((await queue.getJob(id))?.group).toBe(same);
    const before = await keysOfQueue(queue.name);
    await expect(queue.moveToGroup(id, elsewhere)).rejects.toBeInstanceOf(PartitionError);
    expect((await queue.getJob(id))?.group).toBe(same);
    expect(await keysOfQueue(queue.name)).toEqual(before);
    await queue.moveToGroup(id, null);
    expect((await queue.getJob(id))?.group).toBeUndefined();
    await expect(queue.moveToGroup('JOB:none', null)).rejects.toBeInstanceOf(JobNotFoundError);
    await invariantsHold(queue);
  });

  it('merges listings across partitions in the state order, offset and limit after the merge', async () => {
    const queue = open(4);
    // scheduled: due times all different, spread over partitions by group
    const delays = Array.from({ length: 30 }, (_, i) => 60_000 + ((i * 7919) % 30) * 1000);
    await queue.addBulk(delays.map((delayMs, i) => ({ payload: i, delayMs, group: `s${i}` })));
    const all = await queue.getJobs('scheduled', { limit: 1000 });
    expect(all).toHaveLength(30);
    const dues = all.map((j) => j.runAt!);
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    const paged: JobRecord[] = [];
    for (let offset = 0; offset < 30; offset += 7) paged.push(...(await queue.getJobs('scheduled', { offset, limit: 7 })));
    expect(paged.map((j) => j.id)).toEqual(all.map((j) => j.id));

    // pending: ungrouped first by priority, then the groups by name, each group's lane in order
    await queue.addBulk([
      { payload: 'u2', priority: 2 },
      { payload: 'u0', priority: 0 },
      { payload: 'u1', priority: 1 },
      { payload: 'b1', group: 'b' },
      { payload: 'a1', group: 'a' },
      { payload: 'b2', group: 'b' },
      { payload: 'c1', group: 'c' },
    ]);
    const pending = await queue.getJobs('pending');
    expect(pending.map((j) => j.payload)).toEqual(['u0', 'u1', 'u2', 'a1', 'b1', 'b2', 'c1']);
    expect((await queue.getJobs('pending', { offset: 2, limit: 3 })).map((j) => j.payload)).toEqual(['u2', 'a1', 'b1']);

    // dead: most recent first, the same through listDead and getJobs('dead')
    const scheduled = await queue.drain();
    expect(scheduled).toBe(37);
    for (let i = 0; i < 12; i++) {
      await queue.add(i, { group: `d${i}`, maxAttempts: 1 });
      await bury(queue);
      await sleep(2);
    }
    const dead = await queue.listDead({ limit: 100 });
    expect(dead.map((j) => j.payload)).toEqual(Array.from({ length: 12 }, (_, i) => 11 - i));
    expect((await queue.getJobs('dead', { limit: 100 })).map((j) => j.id)).toEqual(dead.map((j) => j.id));
    expect((await queue.listDead({ offset: 5, limit: 4 })).map((j) => j.payload)).toEqual([6, 5, 4, 3]);
    await expect(queue.getJobs('nope' as 'dead')).rejects.toMatchObject({ code: 'EMQARG' });
    await expect(queue.listDead({ limit: 0 })).rejects.toMatchObject({ code: 'EMQARG' });
  });

  it('runs bulk admin on every partition: clean, drain, reprocessDead, with limits summed', async () => {
    const queue = open(4);
    await queue.addBulk(Array.from({ length: 12 }, (_, i) => ({ payload: i, group: `g${i}`, maxAttempts: 1 })));
    await bury(queue);
    expect((await queue.counts()).dead).toBe(12);
    expect(await queue.reprocessDead({ limit: 5 })).toBe(5);
    expect((await queue.counts())).toMatchObject({ dead: 7, pending: 5 });
    expect(await queue.reprocessDead()).toBe(7);
    await bury(queue);
    const cleaned = await queue.clean('dead', { limit: 5 });
    expect(cleaned).toHaveLength(5);
    expect((await queue.counts()).dead).toBe(7);
    expect(await queue.clean('dead')).toHaveLength(7);
    await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: i, group: `h${i}` })));
    expect(await queue.drain({ limit: 4 })).toBe(4);
    expect(await queue.drain()).toBe(6);
    expect(await queue.counts()).toMatchObject({ pending: 0, dead: 0, scheduled: 0 });
    await invariantsHold(queue);
  });

  it('obliterates every partition and then its name, refusing while any partition has active jobs', async () => {
    const queue = open(4);
    await queue.addBulk(Array.from({ length: 8 }, (_, i) => ({ payload: i, group: `g${i}` })));
    const holder = queue.partitionOfGroup('g0');
    await leases(holder).claim(1, 30_000);
    const before = await keysOfQueue(queue.name);
    await expect(queue.obliterate()).rejects.toBeInstanceOf(JobStateError);
    expect(await keysOfQueue(queue.name)).toEqual(before);
    expect(await queue.obliterate({ force: true })).toBe(true);
    expect(await keysLeft(queue.name)).toEqual([]);
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, queue.name)).toBeNull();
    expect(await redis.raw.sismember('emq:queues', queue.name)).toBe(0);
    // the name is free again, for any count
    const again = new PartitionedQueue(redis.transport, queue.name, { partitions: 2 });
    await again.add(1);
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, queue.name)).toBe('2');
    // with a limit, partition after partition
    await again.addBulk(Array.from({ length: 20 }, (_, i) => ({ payload: i })));
    let calls = 0;
    while (!(await again.obliterate({ limit: 5 }))) calls++;
    expect(calls).toBeGreaterThan(0);
    expect(await keysLeft(queue.name)).toEqual([]);
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, queue.name)).toBeNull();
  });

  it('pauses and resumes every partition; stats sums them, paused only when every partition is', async () => {
    const queue = open(3);
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3, delayMs: 60_000 }]);
    expect(await queue.pause()).toBe(true);
    for (const part of queue.parts) expect((await part.stats()).paused).toBe(true);
    let stats = await queue.stats();
    expect(stats).toMatchObject({ queue: queue.name, paused: true, counts: { pending: 2, scheduled: 1 } });
    for (const part of queue.parts) expect((await leases(part).claim(10, 30_000)).jobs).toEqual([]);
    await queue.parts[1]!.resume();
    expect((await queue.stats()).paused).toBe(false);
    expect(await queue.resume()).toBe(true);
    expect(await queue.resume()).toBe(false);
    stats = await queue.stats();
    expect(stats.paused).toBe(false);
    expect(await queue.pauseGroup('g')).toBe(true);
    expect(await queue.partitionOfGroup('g').resumeGroup('g')).toBe(true);
  });

  it('sets rate limits: queue-wide on every partition, a group in its own; holds; merges the reads', async () => {
    const queue = open(4);
    await queue.setRateLimit({ limit: 10, periodMs: 60_000 });
    for (const part of queue.parts) expect((await part.rateLimits()).queue).toEqual({ limit: 10, periodMs: 60_000 });
    await queue.setGroupRateLimit('stripe', { limit: 2, periodMs: 1_000 });
    const home = queue.partitionOfGroup('stripe');
    for (const part of queue.parts) expect((await part.rateLimits()).groups.stripe).toEqual(part === home ? { limit: 2, periodMs: 1_000 } : undefined);
    await queue.setGroupRateLimit('paypal', { limit: 3, periodMs: 1_000 });
    const merged = await queue.rateLimits();
    expect(merged.queue).toEqual({ limit: 10, periodMs: 60_000 });
    expect(merged.groups).toEqual({ stripe: { limit: 2, periodMs: 1_000 }, paypal: { limit: 3, periodMs: 1_000 } });

    const held = await queue.holdGroup('stripe', 30_000);
    expect(held).toBeGreaterThan(Date.now() - 5_000);
    const heldAll = await queue.holdGroup(null, 30_000);
    expect(heldAll).toBeGreaterThan(0);
    const throttled = (await queue.rateLimits()).throttled;
    expect(throttled.filter((t) => t.ungrouped)).toHaveLength(4);
    expect(throttled.some((t) => t.group === 'stripe')).toBe(true);
    expect((await queue.stats()).rateLimits.groups).toEqual(merged.groups);
    expect(await queue.sweepGroup('stripe')).toEqual({ stored: 0, counted: 0 });
    await queue.setRateLimit(null);
    expect((await queue.rateLimits()).queue).toBeNull();
    await expect(queue.setRateLimit({ limit: 0, periodMs: 1 })).rejects.toMatchObject({ code: 'EMQARG' });
  });

  it('adds and waits, and waits for a job by id, in its partition', async () => {
    const queue = open(4);
    const waited = queue.addAndWait('work', { group: 'w', timeoutMs: 10_000, pollMs: 20 });
    const part = queue.partitionOfGroup('w');
    let claimed = await leases(part).claim(1, 30_000);
    for (let i = 0; claimed.jobs.length === 0 && i < 200; i++) {
      await sleep(10);
      claimed = await leases(part).claim(1, 30_000);
    }
    await leases(part).complete([{ ...claimed.jobs[0]!, result: JSON.stringify({ ok: 1 }) }]);
    await expect(waited).resolves.toEqual({ id: claimed.jobs[0]!.id, result: { ok: 1 } });
    expect(await queue.waitFor(claimed.jobs[0]!.id)).toEqual({ ok: 1 });

    const { id } = await queue.add('again', { id: 'caller', group: 'w2' });
    const waiting = queue.waitFor('caller', { timeoutMs: 10_000, pollMs: 20 });
    const home = queue.partitionOfGroup('w2');
    const { jobs } = await leases(home).claim(1, 30_000);
    expect(jobs[0]!.id).toBe(id);
    await leases(home).complete([{ ...jobs[0]!, result: '7' }]);
    await expect(waiting).resolves.toBe(7);
    await expect(queue.waitFor('JOB:none', { timeoutMs: 100 })).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('keeps a scheduler in one partition, moving it when its group changes; get, list, remove across', async () => {
    const queue = open(4);
    const groups = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const first = groups[0]!;
    const moved = groups.find((g) => partitionOf(g, 4) !== partitionOf(first, 4))!;
    await queue.upsertScheduler('digest', { every: 60_000 }, { payload: 1, group: first });
    const holders = async (): Promise<number[]> => {
      const found = await Promise.all(queue.parts.map((part) => part.getScheduler('digest')));
      return found.flatMap((s, i) => (s ? [i] : []));
    };
    expect(await holders()).toEqual([partitionOf(first, 4)]);
    await queue.upsertScheduler('digest', { every: 60_000 }, { payload: 2, group: moved });
    expect(await holders()).toEqual([partitionOf(moved, 4)]);
    expect((await queue.getScheduler('digest'))?.job).toMatchObject({ payload: 2, group: moved });
    await queue.upsertScheduler('plain', { every: 30_000 }, { payload: 3 });
    expect((await queue.parts[partitionOf('plain', 4)]!.getScheduler('plain'))?.every).toBe(30_000);
    const listed = await queue.listSchedulers();
    expect(listed.map((s) => s.id).sort()).toEqual(['digest', 'plain']);
    expect(listed[0]!.nextRunAt!).toBeLessThanOrEqual(listed[1]!.nextRunAt!);
    expect(await queue.removeScheduler('digest')).toBe(true);
    expect(await queue.removeScheduler('digest')).toBe(false);
    expect(await queue.getScheduler('digest')).toBeNull();
    // checked before any write: a bad spec removes nothing
    await expect(queue.upsertScheduler('plain', { every: 1 }, { payload: 1, group: moved })).rejects.toMatchObject({ code: 'EMQARG' });
    expect(await queue.getScheduler('plain')).not.toBeNull();
  });

  it('sets dead retention and events settings on every partition, reads them from partition 0', async () => {
    const queue = open(3);
    expect(await queue.setDeadRetention({ maxCount: 10 })).toEqual({ maxAgeMs: null, maxCount: 10 });
    for (const part of queue.parts) expect(await part.deadRetention()).toEqual({ maxAgeMs: null, maxCount: 10 });
    expect(await queue.deadRetention()).toEqual({ maxAgeMs: null, maxCount: 10 });
    const settings = await queue.setEvents({ maxLen: 500 });
    expect(settings.maxLen).toBe(500);
    for (const part of queue.parts) expect((await part.eventsSettings()).maxLen).toBe(500);
    expect(await queue.eventsSettings()).toEqual(settings);
  });

  it('interleaves every partition\'s events; a single cursor is a partition\'s own (the readers of one stream live on the partitions)', async () => {
    const queue = open(3);
    expect('readEvents' in queue).toBe(false);
    expect('eventEntries' in queue).toBe(false);
    const groups = ['e0', 'e1', 'e2', 'e3', 'e4', 'e5'];
    const results = await Promise.all(groups.map((group) => queue.add(group, { group })));
    const stop = new AbortController();
    const seen = new Set<string>();
    for await (const event of queue.events({ after: '0', signal: stop.signal, pollMs: 20 })) {
      if (event.event === 'added') seen.add(event.jobId);
      if (seen.size === results.length) break;
    }
    expect([...seen].sort()).toEqual(results.map((r) => r.id).sort());
    // each partition's stream, paged with its own cursor, holds the adds routed to it
    const paged = (await Promise.all(queue.parts.map((part) => part.readEvents({ after: '0' })))).flatMap((page) => page.events);
    expect(paged.flatMap((e) => (e.event === 'added' ? [e.jobId] : [])).sort()).toEqual(results.map((r) => r.id).sort());
  });

  it('shows as one row of the registry, its partitions summed', async () => {
    const queue = open(4);
    await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: i, group: `o${i}` })));
    await queue.add('later', { delayMs: 60_000 });
    const rows = (await queueOverviews(redis.transport)).filter((row) => row.queue.startsWith(queue.name));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ queue: queue.name, partitions: 4, paused: false, counts: { pending: 10, scheduled: 1 } });
    await queue.pause();
    const paused = (await queueOverviews(redis.transport)).find((row) => row.queue === queue.name);
    expect(paused?.paused).toBe(true);
  });
});
