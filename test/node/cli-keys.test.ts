import { describe, expect, inject, it } from 'vitest';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { MAX_RATE_MS } from '../../src/queue/rate-limits.js';
import { emq } from '../cli-run.js';
import { keysOf, leases, queueName, snapshotKeys, useRedis } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

/**
 * `emq key-limit`, `emq key-rate` and `emq keys` (docs/guides/job-controls.md, "Several
 * concurrency keys"), run as a user runs the CLI: what they print, their exit codes, and what
 * Redis holds after. Jobs enqueued with `emq enqueue --keys` park on a full key (or one at its
 * rate); a raised limit (or rate) readmits them.
 */
describe('emq key-limit, emq key-rate and emq keys', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  /** The command's one JSON line per row, after it exited 0. */
  async function lines(args: readonly string[]): Promise<unknown[]> {
    const run = await emq(args, env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run.stdout.trim() === '' ? [] : run.stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown);
  }

  it('sets, raises and lifts a key limit, lists the keys, and readmits jobs parked on it', async () => {
    const queue = redis.queue();
    expect(await lines(['keys', queue.name])).toEqual([]);
    expect(await lines(['key-limit', queue.name, 'org:7', '1'])).toEqual([{ key: 'org:7', limit: 1, readmitted: 0 }]);
    for (const payload of ['1', '2', '3']) expect((await lines(['enqueue', queue.name, payload, '--group', `user-${payload}`, '--keys', 'org:7,plan:free']))[0]).toMatchObject({ state: 'pending' });

    const l = leases(queue);
    expect((await l.claim(10, 30_000)).jobs).toHaveLength(1);
    expect(await lines(['keys', queue.name])).toEqual([
      { key: 'org:7', limit: 1, running: 1, parked: 2, rate: null, throttledUntil: null },
      { key: 'plan:free', limit: null, running: 1, parked: 0, rate: null, throttledUntil: null },
    ]);

    expect(await lines(['key-limit', queue.name, 'org:7', '2'])).toEqual([{ key: 'org:7', limit: 2, readmitted: 1 }]);
    expect(await redis.raw.hget(`${keysOf(queue).prefix}klimit`, 'org:7')).toBe('2');
    expect((await l.claim(10, 30_000)).jobs).toHaveLength(1);
    expect(await lines(['key-limit', queue.name, 'org:7', 'none'])).toEqual([{ key: 'org:7', limit: null, readmitted: 1 }]);
    expect(await redis.raw.hexists(`${keysOf(queue).prefix}klimit`, 'org:7')).toBe(0);
    expect((await l.claim(10, 30_000)).jobs).toHaveLength(1);
    expect(await lines(['keys', queue.name])).toEqual([
      { key: 'org:7', limit: null, running: 3, parked: 0, rate: null, throttledUntil: null },
      { key: 'plan:free', limit: null, running: 3, parked: 0, rate: null, throttledUntil: null },
    ]);
    expect(await lines(['keys', queue.name])).toEqual(JSON.parse(JSON.stringify(await queue.keyLimits())));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('sets, raises and lifts a key rate, shows it and its throttle in emq keys, and readmits jobs parked on it', async () => {
    const queue = redis.queue();
    const rate = { limit: 1, periodMs: 60_000 };
    expect(await lines(['key-rate', queue.name, 'org:7', '1/60000'])).toEqual([{ key: 'org:7', rate, readmitted: 0 }]);
    expect(await redis.raw.hget(`${keysOf(queue).prefix}krate`, 'org:7')).toBe('1:60000');
    for (const payload of ['1', '2', '3']) expect((await lines(['enqueue', queue.name, payload, '--group', `user-${payload}`, '--keys', 'org:7']))[0]).toMatchObject({ state: 'pending' });

    // one start a minute: one runs, two park, the key throttled until the window has room
    const l = leases(queue);
    const first = await l.claim(10, 30_000);
    expect(first.jobs).toHaveLength(1);
    const listed = (await lines(['keys', queue.name])) as Array<{ throttledUntil: number }>;
    expect(listed).toEqual([{ key: 'org:7', limit: null, running: 1, parked: 2, rate, throttledUntil: expect.any(Number) }]);
    expect(listed[0]!.throttledUntil).toBeGreaterThan(first.now);
    expect(listed[0]!.throttledUntil).toBeLessThanOrEqual(first.now + rate.periodMs);

    // raised: room for one more start in the window; lifted: the rest
    expect(await lines(['key-rate', queue.name, 'org:7', '2/60000'])).toEqual([{ key: 'org:7', rate: { limit: 2, periodMs: 60_000 }, readmitted: 1 }]);
    expect(await redis.raw.hget(`${keysOf(queue).prefix}krate`, 'org:7')).toBe('2:60000');
    expect((await l.claim(10, 30_000)).jobs).toHaveLength(1);
    expect(await lines(['key-rate', queue.name, 'org:7', 'none'])).toEqual([{ key: 'org:7', rate: null, readmitted: 1 }]);
    expect(await redis.raw.hexists(`${keysOf(queue).prefix}krate`, 'org:7')).toBe(0);
    expect((await l.claim(10, 30_000)).jobs).toHaveLength(1);
    expect(await lines(['keys', queue.name])).toEqual([{ key: 'org:7', limit: null, running: 3, parked: 0, rate: null, throttledUntil: null }]);
    expect(await lines(['keys', queue.name])).toEqual(JSON.parse(JSON.stringify(await queue.keyLimits())));
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('refuses bad input with exit 2 before writing anything, and a partitioned queue with exit 2', async () => {
    const queue = redis.queue();
    await queue.setKeyLimit('org:7', 3);
    await queue.setKeyRateLimit('org:7', { limit: 5, periodMs: 1000 });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    for (const [args, says] of [
      [['key-limit', queue.name, 'org:7'], /^emq key-limit: key-limit takes <queue> <key> <limit\|none>/],
      [['key-limit', queue.name, 'org:7', '2', 'more'], /^emq key-limit: key-limit takes <queue> <key> <limit\|none>/],
      [['key-limit', queue.name, 'org:7', 'many'], /^emq key-limit: key-limit takes a limit: an integer >= 0, or none; got "many"/],
      [['key-limit', queue.name, 'org:7', '1.5'], /^emq key-limit: key-limit takes a limit/],
      [['key-limit', queue.name, 'org:7', '-1'], /^emq key-limit: unknown option -1/],
      [['key-limit', queue.name, 'a,b', '1'], /^emq key-limit: a concurrency key is 1 to 128 letters, digits/],
      [['key-limit', queue.name, 'x'.repeat(129), '1'], /^emq key-limit: a concurrency key is 1 to 128/],
      [['key-limit', queue.name, 'org:7', '1', '--limt', '2'], /^emq key-limit: unknown option --limt/],
      [['key-rate', queue.name, 'org:7'], /^emq key-rate: key-rate takes <queue> <key> <limit>\/<periodMs>\|none$/],
      [['key-rate', queue.name, 'org:7', '1/1000', 'more'], /^emq key-rate: key-rate takes <queue> <key>/],
      [['key-rate', queue.name, 'org:7', '100'], /^emq key-rate: key-rate takes a rate: <limit>\/<periodMs> \(e\.g\. 100\/60000\), or none; got "100"$/],
      [['key-rate', queue.name, 'org:7', '100/'], /^emq key-rate: key-rate takes a rate/],
      [['key-rate', queue.name, 'org:7', 'fast'], /^emq key-rate: key-rate takes a rate/],
      [['key-rate', queue.name, 'org:7', '1.5/1000'], /^emq key-rate: key-rate takes a rate/],
      [['key-rate', queue.name, 'org:7', '100/60000ms'], /^emq key-rate: key-rate takes a rate/],
      // the numbers checked by the Queue's own check, in its words
      [['key-rate', queue.name, 'org:7', '0/1000'], /^emq key-rate: limit must be an integer >= 1, got 0$/],
      [['key-rate', queue.name, 'org:7', '1/0'], /^emq key-rate: periodMs must be an integer from 1 to \d+, got 0$/],
      [['key-rate', queue.name, 'org:7', `1/${MAX_RATE_MS + 1}`], /^emq key-rate: periodMs must be an integer from 1/],
      [['key-rate', queue.name, 'org:7', '-1/1000'], /^emq key-rate: unknown option -1/],
      [['key-rate', queue.name, 'a,b', '1/1000'], /^emq key-rate: a concurrency key is 1 to 128 letters, digits/],
      [['keys'], /^emq keys: keys takes <queue>/],
      [['keys', queue.name, 'extra'], /^emq keys: keys takes <queue>/],
    ] as const) {
      const bad = await emq(args, env);
      expect(bad.code, `${args.join(' ')}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr.split('\n')[0], bad.stderr).toMatch(says);
    }
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);

    // bad input never connects: refused the same with no Redis to reach
    for (const args of [
      ['key-limit', queue.name, 'org:7', 'x'],
      ['key-rate', queue.name, 'org:7', 'x'],
      ['key-rate', queue.name, 'org:7', '0/1000'],
    ]) {
      const offline = await emq(args, { REDIS_URL: 'redis://127.0.0.1:1' });
      expect(offline.code, `${args.join(' ')}: ${offline.stderr}`).toBe(2);
    }

    const name = queueName('cli-keys-pq');
    try {
      await new PartitionedQueue(redis.transport, name, { partitions: 2 }).add('y', { group: 'g' });
      const partitioned = await snapshotKeys(redis.raw, `emq:{${name}~*}:*`);
      for (const args of [
        ['key-limit', name, 'org:7', '1'],
        ['key-rate', name, 'org:7', '1/1000'],
        ['key-rate', name, 'org:7', 'none'],
        ['keys', name],
      ]) {
        const refused = await emq(args, env);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toMatch(new RegExp(`^emq ${args[0]}: queue ${name} is partitioned: concurrency keys span groups`));
      }
      expect(await snapshotKeys(redis.raw, `emq:{${name}~*}:*`)).toEqual(partitioned);
    } finally {
      const keys = await redis.raw.keys(`emq:{${name}~*}:*`);
      if (keys.length > 0) await redis.raw.del(...keys);
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });

  it('is in emq --help', async () => {
    const help = await emq(['--help'], env);
    expect(help.stdout).toContain('emq key-limit <queue> <key> <limit|none>');
    expect(help.stdout).toContain('emq key-rate <queue> <key> <limit>/<periodMs>|none');
    expect(help.stdout).toContain('emq keys <queue>');
  });
});
