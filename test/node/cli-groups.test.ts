import { afterEach, describe, expect, inject, it } from 'vitest';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { queueState } from '../admin-helpers.js';
import { emq } from '../cli-run.js';
import { leases, queueName, useRedis } from '../helpers.js';

/** `emq groups`: every group with its numbers, a table or JSON lines, read back through Queue.groups. */
describe('the emq groups command', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const partitioned: string[] = [];

  afterEach(async () => {
    for (const name of partitioned.splice(0)) {
      const keys = await redis.raw.keys(`emq:{${name}~*}:*`);
      if (keys.length > 0) await redis.raw.del(...keys);
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });

  /** Runs `emq`, expecting exit 0 and nothing on stderr; resolves with its stdout lines. */
  const ok = async (args: string[]): Promise<string[]> => {
    const run = await emq(args, env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    expect(run.stderr).toBe('');
    return run.stdout.trimEnd().split('\n').filter((line) => line !== '');
  };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('walks every page, prints a table or JSON lines, keeps a prefix and stops at --limit', { timeout: 90_000 }, async () => {
    const queue = redis.queue();
    const all = Array.from({ length: 150 }, (_, i) => `g-${String(i).padStart(3, '0')}`);
    await queue.addBulk(all.map((group) => ({ payload: 1, group })));
    await queue.setGroupLimit('g-001', 4);
    await queue.setGroupRateLimit('g-002', { limit: 50, periodMs: 1_000 });
    await queue.pauseGroup('g-003');
    const heldUntil = await queue.holdGroup('g-004', 60_000);
    await queue.addBulk([{ payload: 2, group: 'g-000' }]);
    await leases(queue).claim(1, 30_000);

    // --json: one line a group, each as Queue.groups answers it, every group once, by name
    const lines = (await ok(['groups', queue.name, '--json'])).map((line) => JSON.parse(line) as { group: string });
    expect(lines.map((g) => g.group)).toEqual(all);
    const byName = new Map(lines.map((g) => [g.group, g]));
    const page = await queue.groups({ prefix: 'g-00' });
    for (const group of page.groups) expect(byName.get(group.group)).toEqual(JSON.parse(JSON.stringify(group)));
    expect(byName.get('g-004')).toMatchObject({ heldUntil, throttledUntil: heldUntil, waiting: 1 });

    // the table: a header, then a row a group
    const table = await ok(['groups', queue.name, '--prefix', 'g-00']);
    expect(table[0]).toMatch(/^GROUP\s+ACTIVE\s+LIMIT\s+RATE\s+PAUSED\s+HELD-UNTIL\s+THROTTLED-UNTIL\s+WAITING$/);
    expect(table).toHaveLength(11);
    expect(table[2]).toMatch(/^g-001\s+0\s+4\s+-\s+no\s+-\s+-\s+1$/);
    expect(table[3]).toMatch(/^g-002\s+0\s+-\s+50\/1000ms\s+no\s+-\s+-\s+1$/);
    expect(table[4]).toMatch(/^g-003\s+0\s+-\s+-\s+yes\s+-\s+-\s+1$/);
    expect(table[5]).toContain(new Date(heldUntil).toISOString());
    expect(table[1]).toMatch(/^g-000\s+1\s+/);

    // --limit: at most N groups
    expect(await ok(['groups', queue.name, '--json', '--limit', '5'])).toHaveLength(5);
    // a queue with no group: the header alone, or nothing
    const empty = redis.queue();
    expect(await ok(['groups', empty.name])).toHaveLength(1);
    expect(await ok(['groups', empty.name, '--json'])).toEqual([]);
  });

  it("lists a partitioned queue's groups by its name", { timeout: 60_000 }, async () => {
    const name = queueName('pq');
    partitioned.push(name);
    const queue = new PartitionedQueue(redis.transport, name, { partitions: 3 });
    const all = Array.from({ length: 20 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    await queue.addBulk(all.map((group) => ({ payload: 1, group })));
    const lines = (await ok(['groups', name, '--json'])).map((line) => JSON.parse(line) as { group: string });
    expect(lines.map((g) => g.group)).toEqual(all);
  });

  it('refuses bad input with exit 2, one clear line, and writes nothing', { timeout: 90_000 }, async () => {
    const queue = redis.queue();
    await queue.add(1, { group: 'g' });
    const before = await queueState(redis.raw, queue);
    const runs: Array<[string[], RegExp]> = [
      [['groups'], /^emq groups: groups takes <queue>$/],
      [['groups', queue.name, 'extra'], /^emq groups: groups takes <queue>$/],
      [['groups', queue.name, '--limit', '0'], /^emq groups: limit must be an integer from 1 to 1000, got 0$/],
      [['groups', queue.name, '--limit', '1001'], /^emq groups: limit must be an integer from 1 to 1000, got 1001$/],
      [['groups', queue.name, '--limit', 'many'], /^emq groups: --limit takes an integer, got "many"$/],
      [['groups', queue.name, '--prefix', 'a*'], /^emq groups: prefix must be up to 128 letters/],
      [['groups', queue.name, '--prefx', 'a'], /^emq groups: unknown option --prefx: did you mean --prefix\?$/],
      [['groups', 'bad name'], /queue/],
    ];
    // two at a time: a process each, and the machine has two cores
    for (let i = 0; i < runs.length; i += 2) {
      await Promise.all(
        runs.slice(i, i + 2).map(async ([args, says]) => {
          const run = await emq(args, env);
          expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
          const first = run.stderr.trim().split('\n')[0]!;
          expect(first, args.join(' ')).toMatch(says);
          expect(run.stderr).not.toMatch(/\n\s+at /);
          expect(run.stdout).toBe('');
        }),
      );
    }
    expect(await queueState(redis.raw, queue)).toEqual(before);
    const help = await emq(['--help'], env);
    expect(help.stdout).toContain('emq groups <queue> [--prefix P] [--limit N] [--json]');
  });
});
