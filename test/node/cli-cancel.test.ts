import { describe, expect, inject, it } from 'vitest';
import { emq } from '../cli-run.js';
import { keysOf, leases, snapshotKeys, useRedis } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

/**
 * `emq cancel` (docs/guides/job-controls.md), one job or a state's jobs in bulk, and the cancelled
 * state in `emq jobs` and `emq clean`, run as a user runs the CLI: what it prints, its exit codes,
 * and what Redis holds after.
 */
describe('emq cancel', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const stateOf = async (queue: { name: string }, id: string): Promise<string | null> => redis.raw.hget(keysOf(queue).job(id), 's');

  it('cancels one job, keeps its reason, answers a repeat as the first; a finished or unknown job and bad input exit 2 writing nothing', async () => {
    const queue = redis.queue();
    const { id } = await queue.add({ upload: 7 });
    const done = await queue.add('done');

    const cancelled = await emq(['cancel', queue.name, id, '--reason', 'the user deleted the upload'], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toEqual({ id, state: 'cancelled' });
    expect(await redis.raw.hgetall(keysOf(queue).job(id))).toMatchObject({ s: 'cancelled', cx: 'the user deleted the upload' });
    const again = await emq(['cancel', queue.name, id.slice('JOB:'.length)], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ id, state: 'cancelled' });

    const l = leases(queue);
    const [held] = (await l.claim(1, 30_000)).jobs;
    expect(held!.id).toBe(done.id);
    await l.complete([{ id: held!.id, token: held!.token }]);
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    for (const [args, says] of [
      [['cancel', queue.name, done.id], /^emq cancel: job \S+ has finished/],
      [['cancel', queue.name, 'JOB:nope'], /^emq cancel: no job JOB:nope/],
      [['cancel', queue.name, id, '--reason', ''], /^emq cancel: a cancel's reason must be/],
      [['cancel', queue.name, id, '--state', 'pending'], /^emq cancel: cancel takes a job id, or --state/],
      [['cancel', queue.name], /^emq cancel: cancel takes <queue> <id>, or <queue> --state/],
      [['cancel', queue.name, '--state', 'completed'], /^emq cancel: state must be one of pending, scheduled, active, waiting, awaiting/],
      [['cancel', queue.name, '--state', 'pending', '--group', 'a', '--ungrouped'], /^emq cancel: cancel takes --group G or --ungrouped, not both/],
      [['cancel', queue.name, '--state', 'pending', '--limit', 'many'], /^emq cancel: --limit takes an integer/],
      [['cancel', queue.name, '--state', 'pending', '--limit', '0'], /^emq cancel: limit must be an integer >= 1/],
      [['cancel', queue.name, '--reasn', 'typo'], /^emq cancel: unknown option --reasn: did you mean --reason\?/],
    ] as const) {
      const bad = await emq(args, env);
      expect(bad.code, `${args.join(' ')}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr.split('\n')[0], bad.stderr).toMatch(says);
    }
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('cancels a state’s jobs in bulk, by group or the ungrouped ones, within a limit; jobs and clean take the cancelled state', async () => {
    const queue = redis.queue();
    const added = await queue.addBulk([
      { payload: 'u1' },
      { payload: 'a1', group: 'tenant-a' },
      { payload: 'a2', group: 'tenant-a' },
      { payload: 'b1', group: 'tenant-b' },
      { payload: 'b2', group: 'tenant-b' },
      { payload: 's1', delayMs: 60_000 },
    ]);
    const [u1, a1, a2, b1, b2, s1] = added.map((r) => r.id) as [string, string, string, string, string, string];

    const byGroup = await emq(['cancel', queue.name, '--state', 'pending', '--group', 'tenant-a', '--reason', 'tenant closed'], env);
    expect(byGroup.code, byGroup.stderr).toBe(0);
    expect(JSON.parse(byGroup.stdout)).toEqual({ cancelled: 2, cancelling: 0 });
    expect(await Promise.all([a1, a2, u1, b1].map((id) => stateOf(queue, id)))).toEqual(['cancelled', 'cancelled', 'pending', 'pending']);
    expect(await redis.raw.hget(keysOf(queue).job(a1), 'cx')).toBe('tenant closed');

    const ungrouped = await emq(['cancel', queue.name, '--state', 'pending', '--ungrouped'], env);
    expect(JSON.parse(ungrouped.stdout)).toEqual({ cancelled: 1, cancelling: 0 });
    expect(await stateOf(queue, u1)).toBe('cancelled');
    const limited = await emq(['cancel', queue.name, '--state', 'pending', '--limit', '1'], env);
    expect(JSON.parse(limited.stdout)).toEqual({ cancelled: 1, cancelling: 0 });
    expect((await Promise.all([b1, b2].map((id) => stateOf(queue, id)))).sort()).toEqual(['cancelled', 'pending']);
    const rest = await emq(['cancel', queue.name, '--state', 'pending'], env);
    expect(JSON.parse(rest.stdout)).toEqual({ cancelled: 1, cancelling: 0 });
    expect(await stateOf(queue, s1)).toBe('scheduled');

    const listed = await emq(['jobs', queue.name, 'cancelled'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; state: string; cancelReason?: string });
    expect(rows.map((r) => r.state)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(rows.map((r) => r.id).sort()).toEqual([u1, a1, a2, b1, b2].sort());
    expect(rows.find((r) => r.id === a1)?.cancelReason).toBe('tenant closed');

    const cleaned = await emq(['clean', queue.name, 'cancelled'], env);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(JSON.parse(cleaned.stdout)).toEqual({ removed: 5 });
    expect(await redis.raw.zcard(`${keysOf(queue).prefix}cancelled`)).toBe(0);
    expect((await queue.stats()).counts).toMatchObject({ pending: 0, scheduled: 1, cancelled: 0 });
    const badClean = await emq(['clean', queue.name, 'pending'], env);
    expect(badClean.code).toBe(2);
    expect(badClean.stderr.split('\n')[0]).toBe('emq clean: clean takes completed, dead, cancelled; got "pending"');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('lists cancel in --help', async () => {
    const help = await emq(['--help'], env);
    expect(help.stdout).toContain('emq cancel <queue> <id> [--reason TEXT]');
    expect(help.stdout).toContain('emq cancel <queue> --state <pending|scheduled|active|waiting|awaiting> [--group G | --ungrouped]');
    expect(help.stdout).toContain('emq jobs <queue> <pending|scheduled|active|completed|dead|waiting|awaiting|cancelled>');
  });
});
