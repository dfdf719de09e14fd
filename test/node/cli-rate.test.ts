import { describe, expect, inject, it } from 'vitest';
import { MAX_RATE_MS } from '../../src/queue/rate-limits.js';
import { queueState } from '../admin-helpers.js';
import { emq } from '../cli-run.js';
import { checkInvariants } from '../invariants.js';
import { keysOf, leases, useRedis } from '../helpers.js';

/** The rate-limit commands of `emq`: each prints JSON, and what it did is read back in Redis and through the Queue. */
describe('the emq rate-limit commands', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('sets and lifts limits, holds a group and the ungrouped jobs, and emq stats shows them', { timeout: 90_000 }, async () => {
    const queue = redis.queue();
    const k = keysOf(queue);
    const ok = async (args: string[]): Promise<unknown> => {
      const run = await emq(args, env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(run.stderr).toBe('');
      return JSON.parse(run.stdout) as unknown;
    };

    expect(await ok(['rate', queue.name, '--limit', '100', '--period-ms', '60000'])).toEqual({ queue: queue.name, rate: { limit: 100, periodMs: 60_000 } });
    expect(await redis.raw.hget(k.key('meta'), 'rate')).toBe('100:60000');
    expect(await ok(['rate', queue.name, '--group', 'g', '--limit', '1', '--period-ms', '60000'])).toEqual({
      queue: queue.name,
      group: 'g',
      rate: { limit: 1, periodMs: 60_000 },
    });
    expect(await redis.raw.hget(`${k.prefix}grate`, 'g')).toBe('1:60000');

    // g at its limit after one start: throttled; then h held, and the ungrouped jobs
    await queue.addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }, { payload: 3, group: 'h' }, { payload: 4 }]);
    const claimed = await leases(queue).claim(1, 30_000);
    expect(claimed.jobs.map((j) => j.group)).toEqual(['g']);
    const gUntil = Number(await redis.raw.zscore(k.key('throttled'), 'g'));
    expect(gUntil).toBe(claimed.now + 60_000);
    const h = (await ok(['hold', queue.name, '--group', 'h', '--ms', '30000'])) as { heldUntil: number };
    expect(h).toEqual({ queue: queue.name, group: 'h', heldUntil: expect.any(Number) });
    expect(Number(await redis.raw.hget(`${k.prefix}holds`, 'h'))).toBe(h.heldUntil);
    expect(Number(await redis.raw.zscore(k.key('throttled'), 'h'))).toBe(h.heldUntil);
    const star = (await ok(['hold', queue.name, '--ms', '20000'])) as { heldUntil: number };
    expect(star).toEqual({ queue: queue.name, group: null, heldUntil: expect.any(Number) });
    expect(Number(await redis.raw.zscore(k.key('throttled'), '*'))).toBe(star.heldUntil);
    expect(await redis.raw.lrange(k.key('ring'), 0, -1)).toEqual([]);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // emq stats: the limits, and what is throttled until when, soonest first (Queue.stats() as JSON)
    const stats = await ok(['stats', queue.name]);
    expect(stats).toEqual(JSON.parse(JSON.stringify(await queue.stats())));
    expect((stats as { rateLimits: unknown }).rateLimits).toEqual({
      queue: { limit: 100, periodMs: 60_000 },
      groups: { g: { limit: 1, periodMs: 60_000 } },
      throttled: [
        { group: null, ungrouped: true, until: star.heldUntil, heldUntil: star.heldUntil },
        { group: 'h', ungrouped: false, until: h.heldUntil, heldUntil: h.heldUntil },
        { group: 'g', ungrouped: false, until: gUntil, heldUntil: null },
      ],
    });

    // --off lifts: the group's limit readmits it at once
    expect(await ok(['rate', queue.name, '--group', 'g', '--off'])).toEqual({ queue: queue.name, group: 'g', rate: null });
    expect(await redis.raw.exists(`${k.prefix}grate`, `${k.prefix}starts:g`)).toBe(0);
    expect(await redis.raw.zscore(k.key('throttled'), 'g')).toBeNull();
    expect(await ok(['rate', queue.name, '--off'])).toEqual({ queue: queue.name, rate: null });
    expect(await redis.raw.hexists(k.key('meta'), 'rate')).toBe(0);
    expect((await queue.rateLimits()).queue).toBeNull();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('refuses bad input with exit 2, one clear line, and writes nothing', { timeout: 120_000 }, async () => {
    const queue = redis.queue();
    await queue.setRateLimit({ limit: 10, periodMs: 1000 });
    await queue.setGroupRateLimit('g', { limit: 2, periodMs: 1000 });
    await queue.holdGroup('g', 60_000);
    const before = await queueState(redis.raw, queue);
    const runs: Array<[string[], RegExp]> = [
      [['rate', queue.name], /^emq rate: rate takes --limit N --period-ms MS, or --off$/],
      [['rate', queue.name, '--limit', '5'], /^emq rate: rate takes --limit N and --period-ms MS together$/],
      [['rate', queue.name, '--period-ms', '5'], /^emq rate: rate takes --limit N and --period-ms MS together$/],
      [['rate', queue.name, '--off', '--limit', '5', '--period-ms', '5'], /^emq rate: rate takes --limit N --period-ms MS, or --off: not both$/],
      [['rate', queue.name, '--limit', '0', '--period-ms', '1000'], /^emq rate: limit must be an integer >= 1, got 0$/],
      [['rate', queue.name, '--limit=-3', '--period-ms', '1000'], /^emq rate: limit must be an integer >= 1, got -3$/],
      [['rate', queue.name, '--limit', '1', '--period-ms', '0'], /^emq rate: periodMs must be an integer from 1 to \d+, got 0$/],
      [['rate', queue.name, '--limit', '1', '--period-ms', String(MAX_RATE_MS + 1)], /^emq rate: periodMs must be an integer from 1 to \d+, got \d+$/],
      [['rate', queue.name, '--limit', '1.5', '--period-ms', '1000'], /^emq rate: --limit takes an integer, got "1.5"$/],
      [['rate', queue.name, '--limit', 'ten', '--period-ms', '1000'], /^emq rate: --limit takes an integer, got "ten"$/],
      [['rate', queue.name, '--group', 'has space', '--limit', '1', '--period-ms', '1000'], /group/],
      [['rate', queue.name, '--limt', '1', '--period-ms', '1000'], /^emq rate: unknown option --limt: did you mean --limit\?$/],
      [['rate', queue.name, 'extra', '--off'], /^emq rate: rate takes <queue>/],
      [['rate', 'bad name', '--off'], /queue/],
      [['hold', queue.name], /^emq hold: hold takes --ms MS/],
      [['hold', queue.name, '--ms', '0'], /^emq hold: a hold must be an integer of ms from 1 to \d+, got 0$/],
      [['hold', queue.name, '--ms=-5', '--group', 'g'], /^emq hold: a hold must be an integer of ms from 1 to \d+, got -5$/],
      [['hold', queue.name, '--ms', 'soon'], /^emq hold: --ms takes an integer, got "soon"$/],
      [['hold', queue.name, '--ms', '1000', '--group', '*'], /group/],
      [['hold', queue.name, '--ms', '1000', '--gruop', 'g'], /^emq hold: unknown option --gruop: did you mean --group\?$/],
      [['hold', queue.name, 'g', '--ms', '1000'], /^emq hold: hold takes <queue>/],
    ];
    // two at a time: a process each, and the machine has two cores
    for (let i = 0; i < runs.length; i += 2) {
      await Promise.all(
        runs.slice(i, i + 2).map(async ([args, says]) => {
          const run = await emq(args, env);
          expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
          const first = run.stderr.trim().split('\n')[0]!;
          expect(first, args.join(' ')).toMatch(says);
          expect(first).toMatch(new RegExp(`^emq ${args[0]}: `));
          expect(run.stderr).not.toMatch(/\n\s+at /);
          expect(run.stdout).toBe('');
        }),
      );
    }
    expect(await queueState(redis.raw, queue)).toEqual(before);
    // nor on a queue that has none: no key, no registration
    const fresh = redis.queue();
    expect((await emq(['rate', fresh.name, '--limit', '0', '--period-ms', '1'], env)).code).toBe(2);
    expect((await emq(['hold', fresh.name, '--ms', '0'], env)).code).toBe(2);
    expect(await redis.raw.keys(`emq:{${fresh.name}}:*`)).toEqual([]);
    expect(await redis.raw.sismember('emq:queues', fresh.name)).toBe(0);
  });

  it('lists the commands in emq --help', { timeout: 30_000 }, async () => {
    const help = await emq(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('emq rate <queue> [--group G] (--limit N --period-ms MS | --off)');
    expect(help.stdout).toContain('emq hold <queue> [--group G] --ms MS');
    expect(help.stdout).toMatch(/emq stats <queue>\n\s+Prints \{"queue", "paused", "counts", "rateLimits"\}/);
  });
});
