import { describe, expect, inject, it } from 'vitest';
import { type QueueOverview, queueOverviews } from '../../src/queue/registry.js';
import { emq } from '../cli-run.js';
import { leases, rawClient, useRedis } from '../helpers.js';

/** `emq queues`: every queue of the registry with its counts, one JSON line, the body `GET /v1/queues` answers. */
describe('emq queues', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('prints {"queues": [...]}: every queue sorted by name, with the counts and paused flag its stats give', { timeout: 60_000 }, async () => {
    const [a, b] = [redis.queue(), redis.queue()].sort((x, y) => (x.name < y.name ? -1 : 1));
    if (!a || !b) throw new Error('two queues');
    await a.addBulk([{ payload: 1 }, { payload: 2, delayMs: 60_000 }]);
    await b.addBulk([{ payload: 'dies', maxAttempts: 1 }, { payload: 'runs' }]);
    const [dies] = (await leases(b).claim(2, 60_000)).jobs;
    expect(await leases(b).fail([{ id: dies!.id, token: dies!.token, error: 'boom' }])).toEqual(['dead']);
    await b.pause();

    const run = await emq(['queues'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout, 'one JSON line').toMatch(/^[^\n]+\n$/);
    const printed = JSON.parse(run.stdout) as { queues: QueueOverview[] };
    expect(Object.keys(printed)).toEqual(['queues']);
    const names = printed.queues.map((row) => row.queue);
    expect(names).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    expect(names.indexOf(a.name)).toBeGreaterThanOrEqual(0);
    expect(names.indexOf(a.name)).toBeLessThan(names.indexOf(b.name));

    // the same rows as queueOverviews (other suites' queues come and go meanwhile: ours only)
    const ours = (rows: readonly QueueOverview[]) => rows.filter((row) => row.queue === a.name || row.queue === b.name);
    // (the last hour apart: a minute may turn between the two reads, shifting its buckets)
    const sansHour = (rows: readonly QueueOverview[]) => ours(rows).map(({ lastHour: _, ...row }) => row);
    expect(sansHour(printed.queues)).toEqual(JSON.parse(JSON.stringify(sansHour(await queueOverviews(redis.transport)))));
    for (const queue of [a, b]) {
      const { paused, counts } = await queue.stats();
      expect(printed.queues.find((row) => row.queue === queue.name)).toMatchObject({ paused, counts });
    }
    expect(ours(printed.queues)).toEqual([
      {
        queue: a.name,
        paused: false,
        counts: { pending: 1, scheduled: 1, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 },
        deadTotal: 0,
        retriedTotal: 0,
        stalledTotal: 0,
        firedTotal: 0,
        rateLimitedTotal: 0,
        lastHour: { minute: expect.any(Number), completed: new Array(60).fill(0), dead: new Array(60).fill(0) },
      },
      {
        queue: b.name,
        paused: true,
        counts: { pending: 0, scheduled: 0, active: 1, dead: 1, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 },
        deadTotal: 1,
        retriedTotal: 0,
        stalledTotal: 0,
        firedTotal: 0,
        rateLimitedTotal: 0,
        lastHour: { minute: expect.any(Number), completed: new Array(60).fill(0), dead: expect.any(Array) },
      },
    ]);
    // b's dead job in the minute it died: the last or, across a minute's turn, the one before
    const dead = printed.queues.find((row) => row.queue === b.name)!.lastHour.dead;
    expect(dead.slice(58).reduce((x, y) => x + y, 0)).toBe(1);
  });

  it('prints an answer longer than a pipe takes at once whole (it exits once stdout has drained)', { timeout: 60_000 }, async () => {
    // a database of its own, whose registry holds 3000 names: about 900 KiB of JSON (an exit as
    // soon as main resolved printed about 200 KiB of it)
    const url = `${inject('redisUrl')}/13`;
    const raw = rawClient();
    await raw.select(13);
    await raw.flushdb();
    await raw.sadd('emq:queues', ...Array.from({ length: 3000 }, (_, i) => `many-${String(i).padStart(4, '0')}`));
    try {
      const run = await emq(['queues'], { REDIS_URL: url });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.length).toBeGreaterThan(256 * 1024);
      const printed = JSON.parse(run.stdout) as { queues: QueueOverview[] };
      expect(printed.queues).toHaveLength(3000);
      expect(printed.queues.at(-1)!.queue).toBe('many-2999');
    } finally {
      await raw.flushdb();
      raw.disconnect();
    }
  });

  it('refuses arguments (exit 2), says in one line when Redis cannot be reached (exit 1), and is in emq --help', { timeout: 60_000 }, async () => {
    const [extra, option, away, help] = await Promise.all([
      emq(['queues', 'mail'], env),
      emq(['queues', '--prefix', 'm'], env),
      emq(['queues'], { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '300' }),
      emq(['--help'], env),
    ]);
    expect(extra).toMatchObject({ code: 2, stdout: '' });
    expect(extra.stderr.split('\n')[0]).toBe('emq queues: queues takes no arguments');
    expect(option).toMatchObject({ code: 2, stdout: '' });
    expect(option.stderr.split('\n')[0]).toBe('emq queues: unknown option --prefix');
    expect(away).toMatchObject({ code: 1, stdout: '' });
    expect(away.stderr.trim()).toMatch(/^emq queues: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 within 300 ms: connection refused \(/);
    expect(away.stderr.trim().split('\n')).toHaveLength(1);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/emq queues\n\s+Prints \{"queues": \[\.\.\.\]\}: every queue of the registry/);
  });
});
