import { afterEach, describe, expect, inject, it } from 'vitest';
import { decodeEntry } from '../../src/events/decode.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Queue } from '../../src/queue/queue.js';
import { type Run, startEmq } from '../cli-run.js';
import { keysOf, until, useRedis } from '../helpers.js';

const lines = (text: string): unknown[] => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown);

/** `emq job`, `emq events` and `emq enqueue --wait`. */
describe('the emq CLI: job, events, enqueue --wait', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const emq = (args: string[]): Promise<Run> => startEmq(args, env).done;
  const running: Array<{ stop(ms?: number): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  function consume(queue: Queue<unknown>, handler: (payload: unknown) => unknown): void {
    const consumer = new Consumer(IoredisTransport.connect(inject('redisUrl')), queue, (job) => handler(job.payload), { beatMs: 10_000, ownsTransport: true });
    running.push(consumer);
    consumer.start();
  }

  async function streamEvents(queue: Queue<unknown>): Promise<unknown[]> {
    const entries = await redis.raw.xrange(keysOf(queue).key('events'), '-', '+');
    return JSON.parse(JSON.stringify(entries.flatMap(([id, fields]) => decodeEntry(id, fields).events))) as unknown[];
  }

  it('emq job prints the job as JSON, exit 1 when there is none', async () => {
    const queue = redis.queue();
    const { id } = await queue.add({ to: 'a' }, { id: 'one', group: 'g' });
    const run = await emq(['job', queue.name, 'one']);
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([JSON.parse(JSON.stringify(await queue.getJob(id)))]);
    const none = await emq(['job', queue.name, 'nope']);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toMatch(/no job nope/);
    expect((await emq(['job', queue.name])).code).toBe(2);
    expect((await emq(['job', queue.name, 'one', '--verbose'])).code).toBe(2);
  });

  it('emq enqueue --wait prints the outcome: exit 0 completed, 1 dead or not finished in time, 2 for a bad --wait', async () => {
    const queue = redis.queue();
    consume(queue, (payload) => {
      if ((payload as { die?: boolean }).die) throw new Error('asked to die');
      return { echoed: payload };
    });
    const ok = await emq(['enqueue', queue.name, '{"n":1}', '--wait', '10000']);
    expect(ok.code).toBe(0);
    expect(lines(ok.stdout)).toEqual([{ id: expect.stringMatching(/^JOB:/), state: 'completed', result: { echoed: { n: 1 } } }]);
    const dead = await emq(['enqueue', queue.name, '{"die":true}', '--wait', '10000', '--max-attempts', '1']);
    expect(dead.code).toBe(1);
    expect(lines(dead.stdout)).toEqual([{ id: expect.stringMatching(/^JOB:/), state: 'dead', error: expect.stringContaining('asked to die') }]);
    const idle = redis.queue();
    const late = await emq(['enqueue', idle.name, '1', '--wait', '100', '--id', 'late']);
    expect(late.code).toBe(1);
    expect(lines(late.stdout)).toEqual([{ id: 'JOB:late', state: 'pending' }]);
    for (const wait of ['-1', 'soon']) expect((await emq(['enqueue', idle.name, '1', '--wait', wait])).code, wait).toBe(2);
    expect((await idle.stats()).counts.pending).toBe(1);
  });

  it('emq events prints the stream one JSON line per event, from --after; --follow waits for more until SIGTERM', async () => {
    const queue = redis.queue();
    await queue.addBulk([{ payload: 1 }, { payload: 2, delayMs: 60_000 }]);
    await queue.pause();
    const all = await emq(['events', queue.name]);
    expect(all.code).toBe(0);
    const expected = await streamEvents(queue);
    expect(lines(all.stdout)).toEqual(expected);
    const firstId = (expected[0] as { id: string }).id;
    expect(lines((await emq(['events', queue.name, '--after', firstId])).stdout)).toEqual(expected.slice(2));
    expect((await emq(['events', queue.name, '--after', 'yesterday'])).code).toBe(2);

    const follow = startEmq(['events', queue.name, '--after', firstId, '--follow'], env);
    await until(() => lines(follow.stdout()).length === 1, 10_000);
    await queue.resume();
    await until(() => lines(follow.stdout()).length === 2, 10_000);
    follow.child.kill('SIGTERM');
    const run = await follow.done;
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual((await streamEvents(queue)).slice(2));
    const help = await emq(['--help']);
    expect(help.stdout).toMatch(/emq events <queue> \[--after ID\] \[--follow\]/);
    expect(help.stdout).toMatch(/emq job <queue> <id>/);
    expect(help.stdout).toMatch(/--wait MS/);
  });
});
