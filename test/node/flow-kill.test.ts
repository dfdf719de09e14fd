import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Flows, type Job } from '../../src/index.js';
import { Consumer } from '../../src/node/consumer/index.js';
import type { Queue } from '../../src/queue/queue.js';
import { checkFlowLinks } from '../flow-links.js';
import { keysOf, leases, sleep, until, useRedis } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

/** How old an outbox entry must be before a beat relays it (lua/beat.lua). */
const STALE_MS = 5_000;
/** The fresh consumers' beat period. */
const BEAT_MS = 500;

/**
 * A crash between a flow child's settle and its relay (docs/design.md, "Flows"): a consumer in a
 * child process (test/fixtures/flow-kill-consumer.ts) completes the last child of a parent and
 * SIGKILLs itself as it is about to send the parent's update (flowApply). The child is completed
 * and its news is in its queue's outbox; the parent waits on. A beat of the child's queue once the
 * entry is 5 s old relays it: the parent is released once, a little over 5 s late, and runs once.
 */
describe('a flow child completed by a consumer SIGKILLed before it relays the news', () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const running: Array<Consumer<never>> = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop(1_000)));
  });

  /** Every event of `queue` about job `id`, by name (a `released` without a children count as `given-back`). */
  const eventsOf = async (queue: Queue<unknown>, id: string): Promise<Array<{ event: string; time: number }>> => {
    const out: Array<{ event: string; time: number }> = [];
    for (let after = '0'; ; ) {
      const page = await queue.readEvents({ after, limit: 1000 });
      for (const e of page.events) {
        if (!('jobId' in e) || e.jobId !== id) continue;
        // a flow parent's release carries its children's count; a job given back unstarted does not
        out.push({ event: e.event === 'released' && e.children === undefined ? 'given-back' : e.event, time: e.time });
      }
      if (page.next === after) return out;
      after = page.next;
    }
  };

  it('leaves the parent waiting with the news in the outbox; a beat after 5 s releases it, and it runs once', async () => {
    const pdf = redis.queue();
    const render = redis.queue<{ page: number }>();
    await new Flows(redis.transport).add({
      queue: pdf.name,
      id: 'report',
      payload: { report: 1 },
      children: [1, 2, 3].map((page) => ({ queue: render.name, payload: { page } })),
    });

    // two children complete here (relayed at once): the parent waits for the third
    const l = leases(render);
    const { jobs } = await l.claim(2, 30_000);
    expect(jobs.map((j) => j.id)).toEqual(['JOB:report.0', 'JOB:report.1']);
    await l.complete(jobs.map((j) => ({ id: j.id, token: j.token, result: JSON.stringify({ page: j.payload.page }) })));
    expect(await pdf.getJob('report')).toMatchObject({ state: 'waiting', flow: { total: 3, done: 2 } });

    // the child process runs the last one and dies as it is about to tell the parent
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'flow-kill-consumer.ts'), url, render.name], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exit = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const timeout = sleep(15_000).then(() => 'timed out' as const);
    const ended = await Promise.race([exit, timeout]);
    if (ended === 'timed out') child.kill('SIGKILL');
    expect(ended).toBe('SIGKILL');
    expect(out).toMatch(/started JOB:report\.2 \d+/);

    // the child is completed, its news waits in its queue's outbox, the parent still waits
    expect(await render.getJob('report.2')).toMatchObject({ state: 'completed', result: { page: 3 } });
    expect(await pdf.getJob('report')).toMatchObject({ state: 'waiting', flow: { total: 3, done: 2 } });
    const outbox = `${keysOf(render).prefix}outbox`;
    const [entry, score] = await redis.raw.zrange(outbox, 0, '-1', 'WITHSCORES');
    expect(await redis.raw.zcard(outbox)).toBe(1);
    expect(entry).toMatch(new RegExp(`^u\\|${render.name}\\|JOB:report\\.2\\|${pdf.name}\\|JOB:report\\|f\\|\\d+\\|c\\|\\{"page":3\\}$`));
    const writtenAt = Number(score);
    expect(await checkFlowLinks(redis.raw, [pdf.name, render.name])).toEqual([]);

    // a beat of the child's queue before the entry is 5 s old leaves it (its writer may still relay it)
    await leases(render).beat({ n: 0, leaseMs: 1_000 });
    expect(await redis.raw.zcard(outbox)).toBe(1);
    expect(await pdf.getJob('report')).toMatchObject({ state: 'waiting' });

    // fresh consumers: the child queue's beat relays the entry once it is old enough, the parent runs
    const parentRuns: Array<Job<unknown>> = [];
    const consume = <P>(queue: Queue<P>, handler: (job: Job<P>) => unknown): void => {
      const consumer = Consumer.connect<P>(url, queue.name, async (job) => handler(job), { beatMs: BEAT_MS, log: false }).start();
      running.push(consumer as unknown as Consumer<never>);
    };
    consume(pdf, (job) => {
      parentRuns.push(job);
      return 'merged';
    });
    consume(render, () => {
      throw new Error('no child is left to run');
    });
    await until(() => parentRuns.length === 1, STALE_MS + 5_000);
    await until(async () => (await pdf.getJob('report'))?.state === 'completed', 2_000);
    // a few beats more: nothing runs it again
    await sleep(3 * BEAT_MS);
    expect(parentRuns).toHaveLength(1);
    expect(parentRuns[0]!.children).toEqual(
      [1, 2, 3].map((page, i) => ({ queue: render.name, id: `JOB:report.${i}`, state: 'completed', result: { page } })),
    );
    const events = await eventsOf(pdf as Queue<unknown>, 'JOB:report');
    expect(events.filter((e) => e.event === 'released')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'active')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'completed')).toHaveLength(1);
    // released by a beat once the entry was 5 s old: not before, and within a beat period or so after
    const releasedAt = events.find((e) => e.event === 'released')!.time;
    const late = releasedAt - writtenAt;
    expect(late).toBeGreaterThanOrEqual(STALE_MS);
    expect(late).toBeLessThan(STALE_MS + BEAT_MS + 1_000);
    console.log(`flow kill: the parent released ${late} ms after its last child's news was written (a beat every ${BEAT_MS} ms)`);

    expect(await redis.raw.zcard(outbox)).toBe(0);
    expect(await checkFlowLinks(redis.raw, [pdf.name, render.name])).toEqual([]);
    expect(await checkInvariants(redis.raw, pdf.name)).toEqual([]);
    expect(await checkInvariants(redis.raw, render.name)).toEqual([]);
  }, 20_000);
});
