/**
 * `npm start`'s look at issue 36: BullMQ code running on echomq through `echomq/bullmq` (a job
 * retried by BullMQ's attempts, a flow whose parent waits in `waiting-children` for a failed child
 * until `job.retry()`, as BullMQ's does), and bull-board showing the queue through
 * `echomq/bull-board`, its counts read from the board's own API.
 */
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { HonoAdapter } from '@bull-board/hono';
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import type { Cluster, Redis } from 'ioredis';
import { EchoMQAdapter } from '../src/bull-board/index.js';
import { FlowProducer, type Job, Queue, QueueEvents, Worker } from '../src/bullmq/index.js';

/** What the demo needs: a client of the stack's Redis (closed by the caller), and the log line writer. */
export interface BullMQDemoOptions {
  readonly connection: Redis | Cluster;
  readonly say: (line: string) => void;
}

/** Runs the demo; answers its summary line. */
export async function runBullMQDemo({ connection, say }: BullMQDemoOptions): Promise<string> {
  const name = 'bullmq-emails';
  const queue = new Queue(name, { connection });
  await queue.obliterate({ force: true });
  const events = new QueueEvents(name, { connection });
  await events.waitUntilReady();
  const flows = new FlowProducer({ connection });
  const failedOnce = new Set<string>();
  const worker = new Worker(
    name,
    async (job: Job) => {
      // every job but a parent fails its first run: `attempts` retries one that has them, a flow
      // child without leaves its parent waiting
      if (job.name !== 'digest' && !failedOnce.has(job.id!)) {
        failedOnce.add(job.id!);
        throw new Error('mail server busy');
      }
      return job.name === 'digest' ? Object.keys(await job.getChildrenValues()).length : `sent to ${String(job.data.to)}`;
    },
    { connection, concurrency: 4 },
  );
  const board = await startBoard(queue);
  try {
    const welcome = await queue.add('welcome', { to: 'ada@example.com' }, { attempts: 2 });
    const sent = await welcome.waitUntilFinished(events, 10_000);
    const { job: digest, children } = await flows.add({
      name: 'digest',
      queueName: name,
      children: [1, 2].map((n) => ({ name: 'part', queueName: name, data: { to: `part-${n}` }, opts: { attempts: 2 } })),
    });
    // the children retry (attempts 2) and complete; a third, added failing for good, holds the parent
    const held = await flows.add({ name: 'digest', queueName: name, children: [{ name: 'part', queueName: name, data: { to: 'late' } }] });
    const child = held.children![0]!.job;
    for (let i = 0; i < 100 && (await child.getState()) !== 'failed'; i++) await new Promise((r) => setTimeout(r, 50));
    const waited = await held.job.getState();
    await (await queue.getJob(child.id!))!.retry();
    const merged = await held.job.waitUntilFinished(events, 10_000);
    await digest.waitUntilFinished(events, 10_000);
    const counts = await boardCounts(board.url, name);
    say(
      `echomq/bullmq: "${String(sent)}" after a retry (attempts 2); a flow of ${children!.length} children ran its parent; a parent whose child failed waited (${waited}) until job.retry(), then merged ${String(merged)} part`,
    );
    return `bull-board at ${board.url}/board shows "${name}": ${JSON.stringify(counts)}`;
  } finally {
    await worker.close();
    await events.close();
    await flows.close();
    await queue.close();
    await board.close();
  }
}

/** bull-board (hono) on a free loopback port, showing `queue` through EchoMQAdapter. */
async function startBoard(queue: Queue): Promise<{ url: string; close(): Promise<void> }> {
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath('/board');
  createBullBoard({ queues: [new EchoMQAdapter(queue)], serverAdapter });
  const app = new Hono();
  app.route('/board', serverAdapter.registerPlugin());
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The queue's counts as the board's own API answers them (what its page shows). */
async function boardCounts(url: string, name: string): Promise<Record<string, number>> {
  const res = await fetch(`${url}/board/api/queues?activeQueue=${name}&status=latest&page=1`);
  const body = (await res.json()) as { queues: Array<{ name: string; counts: Record<string, number> }> };
  const counts = body.queues.find((q) => q.name === name)?.counts ?? {};
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
}
