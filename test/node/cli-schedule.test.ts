import { describe, expect, inject, it } from 'vitest';
import { queueState } from '../admin-helpers.js';
import { emq, type Run } from '../cli-run.js';
import { checkInvariants } from '../invariants.js';
import { useRedis } from '../helpers.js';

/** The scheduler commands of `emq`: each prints JSON, and what it did is read back through the Queue. */
describe('the emq scheduler commands', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const lines = (run: Run): unknown[] => run.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown);

  // each command is a process of its own started through tsx (about a second on this machine)
  it('schedules, lists, changes in place and unschedules; unscheduling none is exit 2 in one line', { timeout: 90_000 }, async () => {
    const queue = redis.queue<unknown>();
    const tick = await emq(['schedule', queue.name, 'tick', '--every', '60000', '{"kind":"tick"}', '--group', 'g1', '--priority', '3', '--max-attempts', '7', '--limit', '2'], env);
    expect(tick.code, tick.stderr).toBe(0);
    const made = JSON.parse(tick.stdout) as { id: string; nextRunAt: number };
    expect(made).toEqual({ id: 'tick', nextRunAt: expect.any(Number) });
    expect(await queue.getScheduler('tick')).toMatchObject({ every: 60_000, limit: 2, job: { payload: { kind: 'tick' }, group: 'g1', priority: 3, maxAttempts: 7 }, nextRunAt: made.nextRunAt });

    const startAt = '2031-01-01T00:00:00+01:00';
    const nightly = await emq(['schedule', queue.name, 'nightly', '--cron', '0 3 * * *', '--tz', 'Europe/Berlin', '"report"', '--start-at', startAt, '--end-at', '1956524400000'], env);
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(JSON.parse(nightly.stdout)).toEqual({ id: 'nightly', nextRunAt: Date.parse('2031-01-01T03:00:00+01:00') });

    const listed = await emq(['schedules', queue.name], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(lines(listed)).toEqual(JSON.parse(JSON.stringify(await queue.listSchedulers())));
    expect(lines(listed)).toMatchObject([{ id: 'tick' }, { id: 'nightly', cron: '0 3 * * *', tz: 'Europe/Berlin', startAt: Date.parse(startAt), endAt: 1956524400000, job: { payload: 'report' } }]);

    // again: changed in place, still two
    const changed = await emq(['schedule', queue.name, 'nightly', '--cron', '0 0 3 * * *', '"report v2"', '--start-at', String(Date.parse(startAt))], env);
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual({ id: 'nightly', nextRunAt: Date.parse('2031-01-01T03:00:00Z') });
    expect(await queue.getScheduler('nightly')).toMatchObject({ cron: '0 0 3 * * *', job: { payload: 'report v2' } });
    expect(await queue.listSchedulers()).toHaveLength(2);

    const removed = await emq(['unschedule', queue.name, 'nightly'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ id: 'nightly', removed: true });
    expect(await queue.getScheduler('nightly')).toBeNull();
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const before = await queueState(redis.raw, queue);
    const none = await emq(['unschedule', queue.name, 'nightly'], env);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe(`emq unschedule: no scheduler nightly in queue ${queue.name}\n`);
    expect(await queueState(redis.raw, queue)).toEqual(before);
    // a queue with none lists nothing
    expect(await emq(['schedules', redis.queue().name], env)).toMatchObject({ code: 0, stdout: '' });
  });

  it('refuses bad input with exit 2, one clear line, and writes nothing', { timeout: 120_000 }, async () => {
    const queue = redis.queue();
    await queue.upsertScheduler('s', { every: 60_000 }, { payload: 1 });
    const before = await queueState(redis.raw, queue);
    for (const [args, says] of [
      [['schedule', queue.name, 's', '--cron', '* * * * *', '--every', '1000', '1'], /--cron EXPR or --every MS/],
      [['schedule', queue.name, 's', '1'], /--cron EXPR or --every MS/],
      [['schedule', queue.name, 's', '--cron', 'every day', '1'], /cron/],
      [['schedule', queue.name, 's', '--cron', '61 * * * *', '1'], /cron .* is not a valid pattern/],
      [['schedule', queue.name, 's', '--cron', '* * * * *', '--tz', 'Mars/Olympus', '1'], /tz must be an IANA time zone/],
      [['schedule', queue.name, 's', '--every', '99', '1'], /every must be .* at least 100/],
      [['schedule', queue.name, 's', '--every', 'often', '1'], /--every takes an integer/],
      [['schedule', queue.name, 's', '--every', '1000', '{not json'], /the payload is not JSON/],
      [['schedule', queue.name, 's', '--every', '1000', '1', '--start-at', 'soon'], /--start-at takes epoch ms or ISO 8601/],
      [['schedule', queue.name, 's', '--every', '1000', '1', '--limit', '0'], /limit/],
      [['schedule', queue.name, 's', '--every', '1000', '1', '--group', 'has space'], /group/],
      [['schedule', queue.name, 'a@b', '--every', '1000', '1'], /scheduler name/],
      [['schedule', queue.name, 's', '--every', '1000'], /schedule takes <queue> <id> <json>/],
      [['schedule', queue.name, 's', '--evry', '1000', '1'], /did you mean --every\?/],
      [['schedules', queue.name, 'extra'], /schedules takes <queue>/],
      [['unschedule', queue.name], /unschedule takes <queue> <id>/],
    ] as Array<[string[], RegExp]>) {
      const run = await emq(args, env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      const first = run.stderr.trim().split('\n')[0]!;
      expect(first).toMatch(new RegExp(`^emq ${args[0]}: `));
      expect(first, args.join(' ')).toMatch(says);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout).toBe('');
    }
    expect(await queueState(redis.raw, queue)).toEqual(before);
    // nor on a queue that has none: no key, no registration
    const fresh = redis.queue();
    expect((await emq(['schedule', fresh.name, 's', '--cron', 'nope', '1'], env)).code).toBe(2);
    expect(await redis.raw.keys(`emq:{${fresh.name}}:*`)).toEqual([]);
    expect(await redis.raw.sismember('emq:queues', fresh.name)).toBe(0);
  });
});
