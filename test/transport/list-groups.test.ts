import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, PartitionedQueue, Queue, type GroupInfo, type GroupsPage, type Reply, type ScriptCall, type Transport } from '../../src/index.js';
import { partitionOf, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { checkInvariants } from '../invariants.js';
import { leases, queueName, scriptsOf, useRedis } from '../helpers.js';
import { queueState } from '../admin-helpers.js';
import { listGroupsOp } from '../../src/ops/list-groups.js';

/** Passes every call to a transport, counting the script calls: "before any Redis call" is 0 of them. */
class Counting implements Transport {
  calls = 0;
  constructor(private readonly inner: Transport) {}
  evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    this.calls += calls.length;
    return this.inner.evalsha(calls);
  }
  eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    this.calls += calls.length;
    return this.inner.eval(calls);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Every page of a walk, from the start until the cursor is null. */
async function walk(list: (cursor: string | undefined) => Promise<GroupsPage>): Promise<GroupsPage[]> {
  const pages: GroupsPage[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    pages.push(page);
    if (page.cursor === null) return pages;
    cursor = page.cursor;
  }
}

const names = (groups: readonly GroupInfo[]): string[] => groups.map((g) => g.group);
const sorted = (list: readonly string[]): string[] => [...list].sort();

/** Queue.groups and PartitionedQueue.groups (lua/list-groups.lua), on every transport. */
describe('groups', () => {
  const redis = useRedis();
  const partitioned: string[] = [];

  afterEach(async () => {
    for (const name of partitioned.splice(0)) {
      const keys = await redis.raw.keys(`emq:{${name}~*}:*`);
      for (const key of keys) await redis.raw.del(key);
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });

  it("answers each group's numbers after enqueues, claims, a limit, a rate, a pause and a hold", async () => {
    const queue = redis.queue();
    await queue.addBulk([
      ...[1, 2, 3].map((i) => ({ payload: i, group: 'a' })),
      ...[1, 2].map((i) => ({ payload: i, group: 'b' })),
      { payload: 1, group: 'c' },
      ...[1, 2, 3, 4].map((i) => ({ payload: i, group: 'd' })),
      // one in the lane's zset (a priority), two in its arrivals list: both are waiting
      { payload: 1, group: 'e', priority: 5 },
      ...[2, 3].map((i) => ({ payload: i, group: 'e' })),
      { payload: 'ungrouped' },
    ]);
    const before = await queue.groups();
    expect(before.cursor).toBeNull();
    expect(names(before.groups)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const idle = { active: 0, limit: null, rate: null, paused: false, heldUntil: null, throttledUntil: null };
    expect(before.groups.find((g) => g.group === 'e')).toEqual({ group: 'e', ...idle, waiting: 3 });

    await queue.setGroupLimit('a', 2);
    await queue.setGroupRateLimit('b', { limit: 1, periodMs: 60_000 });
    await queue.pauseGroup('c');
    const heldUntil = await queue.holdGroup('d', 60_000);
    const claimed = await leases(queue).claim(20, 30_000);
    // a: 2 (its limit), b: 1 (its rate), e: 3, and the ungrouped job
    expect(claimed.jobs).toHaveLength(7);

    const { groups, cursor } = await queue.groups();
    expect(cursor).toBeNull();
    expect(groups).toEqual([
      { group: 'a', ...idle, active: 2, limit: 2, waiting: 1 },
      { group: 'b', ...idle, active: 1, rate: { limit: 1, periodMs: 60_000 }, throttledUntil: claimed.now + 60_000, waiting: 1 },
      { group: 'c', ...idle, paused: true, waiting: 1 },
      { group: 'd', ...idle, heldUntil, throttledUntil: heldUntil, waiting: 4 },
      { group: 'e', ...idle, active: 3, waiting: 0 },
    ]);

    // settled and lifted: the numbers follow
    await leases(queue).complete(claimed.jobs.filter((j) => j.group === 'a' || j.group === 'e'));
    await queue.setGroupLimit('a', null);
    await queue.resumeGroup('c');
    const after = await queue.groups({ prefix: 'a' });
    expect(after.groups).toEqual([{ group: 'a', ...idle, waiting: 1 }]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('walks 250 groups in pages of about 50: every group at least once, none other, each page sorted', async () => {
    const queue = redis.queue();
    const all = Array.from({ length: 250 }, (_, i) => `g-${String(i).padStart(3, '0')}`);
    await queue.addBulk(all.map((group) => ({ payload: group, group })));
    const pages = await walk((cursor) => queue.groups({ limit: 50, ...(cursor === undefined ? {} : { cursor }) }));
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) {
      expect(names(page.groups)).toEqual(sorted(names(page.groups)));
      expect(page.cursor === null || /^\d+$/.test(page.cursor)).toBe(true);
      for (const g of page.groups) expect(g.waiting).toBe(1);
    }
    expect(sorted([...new Set(pages.flatMap((p) => names(p.groups)))])).toEqual(all);
    // a prefix: the hundred g-1xx, in pages of about 10
    const some = await walk((cursor) => queue.groups({ limit: 10, prefix: 'g-1', ...(cursor === undefined ? {} : { cursor }) }));
    expect(sorted([...new Set(some.flatMap((p) => names(p.groups)))])).toEqual(all.filter((g) => g.startsWith('g-1')));
    expect(some.length).toBeGreaterThan(1);
  });

  it('keeps the groups whose name starts with the prefix, glob characters never reaching MATCH', async () => {
    const queue = redis.queue();
    await queue.addBulk(['tenant-1', 'tenant-2', 'tenant.3', 'other', 'Tenant-4'].map((group) => ({ payload: 1, group })));
    expect(names((await queue.groups({ prefix: 'tenant-' })).groups)).toEqual(['tenant-1', 'tenant-2']);
    expect(names((await queue.groups({ prefix: 'tenant' })).groups)).toEqual(['tenant-1', 'tenant-2', 'tenant.3']);
    expect(names((await queue.groups({ prefix: 'tenant-2' })).groups)).toEqual(['tenant-2']);
    expect((await queue.groups({ prefix: 'nobody' })).groups).toEqual([]);
    expect(names((await queue.groups({ prefix: '' })).groups)).toEqual(['Tenant-4', 'other', 'tenant-1', 'tenant-2', 'tenant.3']);
    // an empty queue has none
    expect(await redis.queue().groups()).toEqual({ groups: [], cursor: null });
  });

  it('refuses a bad limit, prefix or cursor before any Redis call, and the script refuses them too', async () => {
    const counting = new Counting(redis.transport);
    const queue = redis.queue();
    await queue.add(1, { group: 'g' });
    const state = await queueState(redis.raw, queue);
    const watched = new Queue(counting, queue.name);
    const bad: unknown[] = [
      { limit: 0 },
      { limit: 1001 },
      { limit: 1.5 },
      { limit: '5' },
      { prefix: 'a*' },
      { prefix: 'a?' },
      { prefix: '[a]' },
      { prefix: 'a b' },
      { prefix: 'x'.repeat(129) },
      { prefix: 5 },
      { cursor: 'abc' },
      { cursor: '-1' },
      { cursor: '' },
      { cursor: '18446744073709551616' },
      { cursor: 5 },
      { cursor: '0:0' },
      null,
      'limit',
    ];
    for (const options of bad) await expect(watched.groups(options as never), JSON.stringify(options)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(counting.calls).toBe(0);
    // the largest cursor SSCAN takes is taken
    expect(await watched.groups({ cursor: '18446744073709551615' })).toMatchObject({ cursor: null });
    // past the core's checks, the script's own: EMQARG, not Redis's error
    const scripts = scriptsOf(queue);
    for (const [cursor, count, prefix] of [['x', 1, ''], ['18446744073709551616', 1, ''], ['0', 0, ''], ['0', 1001, ''], ['0', 1, 'a*']] as const) {
      await expect(scripts.run(listGroupsOp(cursor, count, prefix))).rejects.toMatchObject({ code: 'EMQARG' });
    }
    expect(await queueState(redis.raw, queue)).toEqual(state);
  });

  it("walks a partitioned queue's groups partition after partition, with a composite cursor", async () => {
    const name = queueName('pq');
    partitioned.push(name);
    const queue = new PartitionedQueue(redis.transport, name, { partitions: 4 });
    const all = Array.from({ length: 40 }, (_, i) => `t-${String(i).padStart(2, '0')}`);
    await queue.addBulk(all.map((group) => ({ payload: group, group })));
    // every partition holds some of them
    expect(new Set(all.map((g) => partitionOf(g, 4))).size).toBe(4);
    await queue.pauseGroup('t-07');
    await queue.setGroupLimit('t-08', 3);

    const pages = await walk((cursor) => queue.groups({ limit: 7, ...(cursor === undefined ? {} : { cursor }) }));
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const page of pages.slice(0, -1)) expect(page.cursor).toMatch(/^[0-3]:\d+$/);
    const seen = pages.flatMap((p) => p.groups);
    expect(sorted([...new Set(names(seen))])).toEqual(all);
    for (const page of pages) expect(names(page.groups)).toEqual(sorted(names(page.groups)));
    expect(seen.find((g) => g.group === 't-07')).toMatchObject({ paused: true, waiting: 1 });
    expect(seen.find((g) => g.group === 't-08')).toMatchObject({ limit: 3, paused: false });

    // one page of everything, and a prefix across partitions
    const whole = await queue.groups({ limit: 1000 });
    expect(whole.cursor).toBeNull();
    expect(names(whole.groups)).toEqual(all);
    expect(names((await queue.groups({ prefix: 't-1' })).groups)).toEqual(all.filter((g) => g.startsWith('t-1')));

    // a cursor that is no page's
    for (const cursor of ['4:0', '0', 'a:b', '1:x', '1:18446744073709551616', '00000:0']) {
      await expect(queue.groups({ cursor }), cursor).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    // a page's cursor goes on where it left off
    expect((await queue.groups({ cursor: '3:0', limit: 1000 })).groups.every((g) => partitionOf(g.group, 4) === 3)).toBe(true);
  });
});
