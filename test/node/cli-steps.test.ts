import { describe, expect, inject, it } from 'vitest';
import { runHandler } from '../../src/handler.js';
import { emq } from '../cli-run.js';
import { keysOf, leases, snapshotKeys, useRedis } from '../helpers.js';

/** `emq send-event` (docs/guides/steps.md): an event to the jobs waiting for it, run as a user runs the CLI. */
describe('emq send-event', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };

  it('resumes the job waiting for the event, once; a repeat with its id answers the same; bad input exits 2 writing nothing', async () => {
    const queue = redis.queue();
    const { id } = await queue.add({ user: 42 });
    const l = leases(queue);
    const [job] = (await l.claim(1, 30_000)).jobs;
    const outcome = await runHandler(
      async (_, { step }) => {
        await step.waitForEvent('verified', { event: 'email.verified', match: { user: 42 } });
      },
      job!,
      { controller: new AbortController(), steps: l.steps },
    );
    expect((await l.round({ finished: [{ job: job!, outcome }], leaseMs: 30_000 })).settled).toEqual(['awaiting']);

    const listed = await emq(['jobs', queue.name, 'awaiting'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string; state: string }).state)).toEqual(['awaiting']);
    const sent = await emq(['send-event', queue.name, 'email.verified', '{"user":42}', '--id', 'v-42'], env);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toEqual({ id: 'v-42', resumed: 1 });
    expect((await queue.getJob(id))!.steps?.[0]).toMatchObject({ state: 'done', eventId: 'v-42', result: { user: 42 } });
    const before = await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`);
    const again = await emq(['send-event', queue.name, 'email.verified', '{"user":42}', '--id', 'v-42'], env);
    expect(JSON.parse(again.stdout)).toEqual({ id: 'v-42', resumed: 1 });
    for (const args of [
      ['send-event', queue.name, 'has space', '{}'],
      ['send-event', queue.name, 'ok', '{not json'],
      ['send-event', queue.name, 'ok', '{}', '--keep-ms', 'soon'],
      ['send-event', queue.name],
    ]) {
      const bad = await emq(args, env);
      expect(bad.code, args.join(' ')).toBe(2);
      // one line that says what is wrong, then where to look
      expect(bad.stderr.split('\n')[0], bad.stderr).toMatch(/^emq send-event: (an event name|the event data is not JSON|--keep-ms|send-event takes)/);
    }
    expect(await snapshotKeys(redis.raw, `${keysOf(queue).prefix}*`)).toEqual(before);
  });
});
