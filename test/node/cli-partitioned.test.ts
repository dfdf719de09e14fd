import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionOf, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import { emq, startEmq } from '../cli-run.js';
import { queueName, until, useRedis } from '../helpers.js';

/** The CLI addresses a partitioned queue by its name; `emq enqueue --partitions N` makes one. */
describe('emq on a partitioned queue', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const made: string[] = [];

  afterEach(async () => {
    for (const name of made.splice(0)) {
      const keys = [...(await redis.raw.keys(`emq:{${name}~*}:*`)), ...(await redis.raw.keys(`emq:{${name}}:*`))];
      if (keys.length > 0) await redis.raw.del(...keys);
      await redis.raw.srem('emq:queues', name);
      await redis.raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });

  /** `emq ...args`, its one JSON line parsed (exit 0 asserted). */
  const json = async (args: string[]): Promise<Record<string, unknown>> => {
    const run = await emq(args, env);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Record<string, unknown>;
  };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('makes one with enqueue --partitions, refuses another count writing nothing, then reads and runs admin by the name', { timeout: 120_000 }, async () => {
    const name = queueName('cli-pq');
    made.push(name);
    const first = await json(['enqueue', name, '{"n":1}', '--group', 'tenant-3', '--partitions', '4']);
    expect(first.id).toMatch(new RegExp(`^JOB:\\d+~${partitionOf('tenant-3', 4)}$`));
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, name)).toBe('4');

    const keys = (await redis.raw.keys(`emq:{${name}~*}:*`)).sort();
    const refused = await emq(['enqueue', name, '2', '--partitions', '8'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('4 partitions');
    expect((await redis.raw.keys(`emq:{${name}~*}:*`)).sort()).toEqual(keys);
    expect(await redis.raw.keys(`emq:{${name}}:*`)).toEqual([]);

    // without --partitions the registry tells: the job goes to its group's partition
    const second = await json(['enqueue', name, '"b"', '--group', 'tenant-9', '--id', 'second']);
    expect(second).toEqual({ id: 'JOB:second', state: 'pending' });
    const queue = new PartitionedQueue(redis.transport, name, { partitions: 4 });
    expect(await queue.partitionOfGroup('tenant-9').getJob('second')).not.toBeNull();

    expect(await json(['stats', name])).toMatchObject({ queue: name, paused: false, counts: { pending: 2 } });
    const listed = (await json(['queues'])).queues as Array<{ queue: string }>;
    expect(listed.filter((row) => row.queue.startsWith(name))).toEqual([expect.objectContaining({ queue: name, partitions: 4, counts: expect.objectContaining({ pending: 2 }) })]);
    expect(await json(['job', name, first.id as string])).toMatchObject({ id: first.id, group: 'tenant-3', payload: { n: 1 } });

    const jobs = await emq(['jobs', name, 'pending'], env);
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(jobs.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { group: string }).group)).toEqual(['tenant-3', 'tenant-9']);

    // every partition's events, one after the other
    const events = await emq(['events', name], env);
    expect(events.code, events.stderr).toBe(0);
    const added = events.stdout.trim().split('\n').map((line) => JSON.parse(line) as { event: string; jobId?: string }).filter((e) => e.event === 'added');
    expect(added.map((e) => e.jobId).sort()).toEqual([first.id, 'JOB:second'].sort());

    expect(await json(['drain', name])).toEqual({ removed: 2 });
    expect(await json(['obliterate', name])).toEqual({ queue: name, obliterated: true });
    expect(await redis.raw.hget(PARTITIONS_REGISTRY, name)).toBeNull();
  });

  it('consume runs every partition of a queue found partitioned by its name, on one subscriber connection', { timeout: 120_000 }, async () => {
    const name = queueName('cli-pq-consume');
    made.push(name);
    const queue = new PartitionedQueue<{ n: number }>(redis.transport, name, { partitions: 4 });
    const jobs = await queue.addBulk(Array.from({ length: 12 }, (_, n) => ({ payload: { n }, group: `tenant-${n % 6}` })));
    expect(new Set(jobs.map((job) => job.id.split('~')[1])).size).toBeGreaterThan(1);
    const dir = mkdtempSync(join(tmpdir(), 'emq-handler-'));
    writeFileSync(join(dir, 'double.mjs'), 'export default async (job) => job.payload.n * 2;\n');
    const consumer = startEmq(['consume', name, '--handler', join(dir, 'double.mjs'), '--concurrency', '3'], env);
    try {
      await until(async () => (await queue.counts()).completed === 12, 60_000);
      expect(consumer.stderr()).toContain(`consuming ${name} (concurrency 3, its 4 partitions)`);
      for (const { id } of jobs) expect((await queue.getJob(id))?.result).toBe(Number((await queue.getJob(id))?.payload.n) * 2);
      const clients = (await redis.raw.call('CLIENT', 'LIST')) as string;
      expect(clients.split('\n').filter((line) => line.includes(`name=emq-doorbell:${name} `) || line.endsWith(`name=emq-doorbell:${name}`))).toHaveLength(1);
    } finally {
      consumer.child.kill('SIGTERM');
      await consumer.done;
    }
  });

  it('consume --partitions refuses a count the registry does not hold, and a plain queue, before consuming anything', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-handler-'));
    writeFileSync(join(dir, 'noop.mjs'), 'export default async () => {};\n');
    const partitioned = queueName('cli-pq-count');
    const plain = queueName('cli-pq-plain');
    made.push(partitioned, plain);
    await new PartitionedQueue(redis.transport, partitioned, { partitions: 4 }).add({ n: 1 }, { group: 'g' });
    expect((await emq(['enqueue', plain, '1'], env)).code).toBe(0);
    const wrong = await emq(['consume', partitioned, '--handler', join(dir, 'noop.mjs'), '--partitions', '2'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`queue ${partitioned} has 4 partitions, not 2`);
    const onPlain = await emq(['consume', plain, '--handler', join(dir, 'noop.mjs'), '--partitions', '2'], env);
    expect(onPlain.code).toBe(2);
    expect(onPlain.stderr).toContain(`queue ${plain} exists unpartitioned`);
    // nothing was claimed
    expect((await new PartitionedQueue(redis.transport, partitioned, { partitions: 4 }).counts()).pending).toBe(1);
  });

  it('refuses --partitions out of range as a usage error, connecting to nothing', async () => {
    const run = await emq(['enqueue', 'q', '1', '--partitions', '0'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--partitions takes 1 to 1024');
  });
});
