import { describe, expect, inject, it } from 'vitest';
import { buryJobs, queueState } from '../admin-helpers.js';
import { emq } from '../cli-run.js';
import { checkInvariants } from '../invariants.js';
import { leases, useRedis } from '../helpers.js';

/** The admin commands of `emq`: each prints JSON, exits 0, and its effect is read in Redis. */
describe('the emq admin commands', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('lists jobs, changes a waiting job, reprocesses and cleans dead ones, sets the retention', { timeout: 90_000 }, async () => {
    const queue = redis.queue<unknown>();
    const [a, b] = await queue.addBulk([{ payload: 'a', id: 'a'}, { payload: 'b', id: 'b'}]);
    const listed = await emq(['jobs', queue.name, 'pending', '--limit', '5'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([a!.id, b!.id]);

    expect(JSON.parse((await emq(['change-priority', queue.name, 'a', '4'], env)).stdout)).toEqual({ id: 'JOB:a', priority: 4 });
    expect(JSON.parse((await emq(['update-data', queue.name, 'b', '{"to":"x"}'], env)).stdout)).toEqual({ id: 'JOB:b', updated: true });
    expect((await queue.getJobs('pending')).map((j) => [j.id, j.payload, j.priority])).toEqual([
      ['JOB:b', { to: 'x' }, 0],
      ['JOB:a', 'a', 4],
    ]);

    const retention = await emq(['dead-retention', queue.name, '--max-count', '3'], env);
    expect(JSON.parse(retention.stdout)).toEqual({ maxAgeMs: null, maxCount: 3 });
    expect(JSON.parse((await emq(['dead-retention', queue.name], env)).stdout)).toEqual({ maxAgeMs: null, maxCount: 3 });
    await buryJobs(queue, [1, 2]);
    expect(JSON.parse((await emq(['reprocess-dead', queue.name, '--limit', '1'], env)).stdout)).toEqual({ reprocessed: 1 });
    expect(JSON.parse((await emq(['clean', queue.name, 'dead'], env)).stdout)).toEqual({ removed: 1 });
    expect((await queue.stats()).counts).toMatchObject({ pending: 3, dead: 0 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('drains, and obliterates: refused while a job is active (exit 2, nothing written), then with --force', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2, delayMs: 60_000}, { payload: 3 }]);
    await leases(queue).claim(1, 30_000);
    expect(JSON.parse((await emq(['drain', queue.name], env)).stdout)).toEqual({ removed: 2 });
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    const before = await queueState(redis.raw, queue);
    const refused = await emq(['obliterate', queue.name], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toMatch(/^emq obliterate: queue \S+ has 1 active job\(s\): obliterate with force/);
    expect(await queueState(redis.raw, queue)).toEqual(before);
    const forced = await emq(['obliterate', queue.name, '--force'], env);
    expect(JSON.parse(forced.stdout)).toEqual({ queue: queue.name, obliterated: true });
    expect((await redis.raw.keys(`emq:{${queue.name}}:*`)).filter((key) => !key.includes(':req:'))).toEqual([]);
  });

  it('refuses bad input with exit 2, one line, and writes nothing', async () => {
    const queue = redis.queue();
    await queue.add(1, { id: 'x' });
    const before = await queueState(redis.raw, queue);
    for (const args of [
      ['jobs', queue.name, 'parked'],
      ['jobs', queue.name],
      ['jobs', queue.name, 'pending', '--limit', '0'],
      ['clean', queue.name, 'pending'],
      ['clean', queue.name, 'dead', '--older-than-ms', 'soon'],
      ['change-priority', queue.name, 'x', 'high'],
      ['change-priority', queue.name, 'x', '-1'],
      ['change-priority', queue.name, 'nope', '1'],
      ['update-data', queue.name, 'x', '{not json'],
      ['dead-retention', queue.name, '--max-count', '-2'],
      ['drain', queue.name, 'extra'],
      ['obliterate', 'bad name'],
    ]) {
      const run = await emq(args, env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr.trim().split('\n')[0]).toMatch(new RegExp(`^emq ${args[0]}: `));
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await queueState(redis.raw, queue)).toEqual(before);
  }, 90_000);

  it('says in one line when Redis cannot be reached (exit 1)', async () => {
    const run = await emq(['drain', 'q'], { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '700' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr.trim()).toMatch(/^emq drain: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 within 700 ms: connection refused /);
  });
});
