import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scripts } from '../../src/generated/scripts.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { Leases } from '../../src/lease/leases.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { Queue } from '../../src/queue/queue.js';
import { describeHttpAdmin } from '../http-admin.suite.js';
import { describeHttpApi } from '../http-api.suite.js';
import { describeHttpFlows } from '../http-flows.suite.js';
import { describeHttpSteps } from '../http-steps.suite.js';
import { describeHttpCancel } from '../http-cancel.suite.js';
import { describeHttpGroups } from '../http-groups.suite.js';
import { describeHttpKeys } from '../http-keys.suite.js';
import { describeHttpRate } from '../http-rate.suite.js';
import { describeHttpSchedulers } from '../http-schedulers.suite.js';
import type { ApiTarget } from '../http-call.js';
import { sleep, until } from '../helpers.js';
import { usePrivateRedis } from '../private-redis.js';
import { type MiniflareWorker, startMiniflareWorker } from './miniflare-worker.js';
import { buildWorker } from './worker-bundle.js';

const BRIDGE_TOKEN = 'bridge-token-for-tests';
const EMQ_TOKEN = 'worker-token-for-tests';

let bundle: ReturnType<typeof buildWorker> | undefined;
const workerBundle = (): ReturnType<typeof buildWorker> => (bundle ??= buildWorker());

/** The real Worker bundle under miniflare (workerd), talking to Redis through the bridge. */
function startWorker(bridgeUrl: string, bindings: Record<string, string>): Promise<MiniflareWorker> {
  return startMiniflareWorker({ bundlePath: workerBundle().path, bridgeUrl, bridgeToken: BRIDGE_TOKEN, bindings });
}

let sharedBridge: RunningBridge | undefined;
const bridgeFor = async (): Promise<RunningBridge> => (sharedBridge ??= await startBridge({ redisUrl: inject('redisUrl'), token: BRIDGE_TOKEN }));

/** The HTTP API of the Worker under miniflare, with a token, no drain after an enqueue. */
async function workerApi(): Promise<ApiTarget> {
  const bridge = await bridgeFor();
  const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
  return { baseUrl: url, token: EMQ_TOKEN, close: () => mf.dispose() };
}

describeHttpApi('the HTTP API on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpAdmin('the admin routes on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpSchedulers('the scheduler routes on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpRate('the rate-limit routes on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpGroups('the groups route on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpFlows('the flows route on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpSteps('the steps route on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpCancel('the cancel routes on the Worker under miniflare', () => inject('redisUrl'), workerApi);
describeHttpKeys('the key routes on the Worker under miniflare', () => inject('redisUrl'), workerApi);

describe('the Worker', () => {
  let bridge: RunningBridge;
  let transport: IoredisTransport;
  const queueName = 'demo';
  let demo: Queue<Record<string, unknown>>;

  beforeAll(async () => {
    bridge = await bridgeFor();
    transport = IoredisTransport.connect(inject('redisUrl'));
    demo = new Queue(transport, queueName);
  }, 60_000);
  afterAll(async () => {
    await transport.close();
    await sharedBridge?.close();
  });

  /** A clean demo queue before each scenario (the Worker's handlers serve only `demo`). */
  async function reset(): Promise<void> {
    const keys = await transport.redis.keys(`emq:{${queueName}}:*`);
    if (keys.length > 0) await transport.redis.del(...keys);
  }

  async function scheduled(mf: Miniflare): Promise<number> {
    const worker = await mf.getWorker();
    const t0 = performance.now();
    await worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
    return performance.now() - t0;
  }

  it('builds with wrangler deploy --dry-run and carries the same scripts as Node', () => {
    const { source, report } = workerBundle();
    expect(report).toMatch(/Total Upload: [\d.]+ KiB/);
    console.log(`worker bundle: ${/Total Upload: .*/.exec(report)?.[0]}`);
    for (const script of Object.values(scripts)) expect(source).toContain(script.sha1);
  });

  it('refuses to serve without EMQ_TOKEN, except in local dev where every response says so', async () => {
    const refused = await startWorker(bridge.url, {});
    try {
      const res = await fetch(`${refused.url}/v1/queues/${queueName}`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: 'EMQCONFIG' } });
    } finally {
      await refused.mf.dispose();
    }
    const dev = await startWorker(bridge.url, { EMQ_LOCAL_DEV: '1' });
    try {
      const res = await fetch(`${dev.url}/v1/queues/${queueName}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-emq-warning')).toMatch(/no EMQ_TOKEN/);
      expect((await fetch(`${dev.url}/healthz`)).headers.get('x-emq-warning')).toMatch(/no EMQ_TOKEN/);
    } finally {
      await dev.mf.dispose();
    }
  });

  it('answers 503 EMQREDIS, not 500, when Redis does not answer', async () => {
    // a port nothing listens on: one the system gave out and took back
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { mf, url } = await startWorker(`http://127.0.0.1:${port}`, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    try {
      const headers = { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' };
      // at once: each waits out the client's retries (about 4.3 s)
      const answers = await Promise.all([
        fetch(`${url}/v1/queues/${queueName}/jobs`, { method: 'POST', headers, body: JSON.stringify({ payload: 1 }) }),
        fetch(`${url}/v1/queues/${queueName}`, { headers }),
      ]);
      for (const res of answers) {
        const body = (await res.json()) as { error?: { code: string; message: string } };
        expect(res.status, JSON.stringify(body)).toBe(503);
        expect(body.error?.code).toBe('EMQREDIS');
        expect(body.error?.message).toContain(`127.0.0.1:${port}`);
        expect(body.error?.message).not.toContain(BRIDGE_TOKEN);
      }
    } finally {
      await mf.dispose();
    }
  });

  it('costs exactly one Redis request for an idle beat', async () => {
    await reset();
    const { mf } = await startWorker(bridge.url, { EMQ_TOKEN });
    try {
      await scheduled(mf); // warms the script cache: a cold first call may add an EVAL request
      bridge.reset();
      await scheduled(mf);
      expect(bridge.stats().requests).toBe(1);
    } finally {
      await mf.dispose();
    }
  });

  it('drains a backlog at under 0.1 requests per job, each job once', async () => {
    await reset();
    const { mf } = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_BATCH_SIZE: '20', EMQ_CONCURRENCY: '20' });
    try {
      await scheduled(mf); // warm
      await demo.addBulk(Array.from({ length: 200 }, (_, i) => ({ payload: { message: `job ${i}` } })));
      bridge.reset();
      await scheduled(mf);
      expect((await demo.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 200, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
      expect(bridge.stats().requests / 200).toBeLessThanOrEqual(0.1);
    } finally {
      await mf.dispose();
    }
  });

  it('retries and buries at the edge like on Node', async () => {
    await reset();
    const { mf } = await startWorker(bridge.url, { EMQ_TOKEN });
    try {
      const retry = await demo.add({ fail: 'retry' }, { maxAttempts: 2, backoff: 0 });
      const dead = await demo.add({ fail: 'dead' }, { maxAttempts: 5 });
      await scheduled(mf);
      expect(await demo.getJob(retry.id)).toMatchObject({ state: 'dead', attempt: 2, error: expect.stringMatching(/asked to retry/) });
      expect(await demo.getJob(dead.id)).toMatchObject({ state: 'dead', attempt: 1, error: expect.stringMatching(/^UnrecoverableError: asked to die/) });
    } finally {
      await mf.dispose();
    }
  });

  it("stores a handler's result and progress at the edge as on Node; a result over the cap goes dead, saying so", async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    try {
      const done = await demo.add({ result: { sent: 3, note: 'héllo ✓' }, progress: { stage: 'sent', pct: 100 } });
      const plain = await demo.add({ message: 'no result' });
      const big = await demo.add({ result: 'x'.repeat(70_000) }, { maxAttempts: 5 });
      await scheduled(mf);
      expect(await demo.getJob(done.id)).toMatchObject({ state: 'completed', result: { sent: 3, note: 'héllo ✓' }, progress: { stage: 'sent', pct: 100 } });
      expect(await demo.getJob(plain.id)).toMatchObject({ state: 'completed', result: undefined, progress: undefined });
      expect(await demo.getJob(big.id)).toMatchObject({
        state: 'dead',
        attempt: 1,
        error: "PayloadTooLargeError (EMQTOOLARGE): the handler's result is 70002 bytes of JSON, over maxResultBytes (65536); failed for good: running the job again would redo its work",
      });
      // the Worker's own API shows them too
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs/${done.id}`, { headers: { Authorization: `Bearer ${EMQ_TOKEN}` } });
      expect(await res.json()).toMatchObject({ state: 'completed', result: { sent: 3, note: 'héllo ✓' }, progress: { stage: 'sent', pct: 100 } });
    } finally {
      await mf.dispose();
    }
  });

  it('stops at its deadline, starts no job that cannot finish, and gives back what it did not start', async () => {
    await reset();
    const { mf } = await startWorker(bridge.url, {
      EMQ_TOKEN,
      EMQ_BEAT_DEADLINE_MS: '1500',
      EMQ_JOB_TIMEOUT_MS: '400',
      EMQ_CONCURRENCY: '2',
      EMQ_BATCH_SIZE: '20',
    });
    try {
      await demo.addBulk(Array.from({ length: 20 }, () => ({ payload: { sleepMs: 250 } })));
      const took = await scheduled(mf);
      expect(took).toBeLessThan(1500 + 1000);
      const { counts } = await demo.stats();
      expect(counts.active).toBe(0);
      expect(counts.completed).toBeGreaterThan(2);
      expect(counts.completed).toBeLessThan(20);
      expect(counts.completed + counts.pending).toBe(20);
      // the ones given back were never started: no attempt counted
      const left = await Promise.all(Array.from({ length: 20 }, (_, i) => demo.getJob(`JOB:${i + 1}`)));
      for (const job of left.filter((j) => j?.state === 'pending')) expect(job!.attempt).toBe(0);
    } finally {
      await mf.dispose();
    }
  });

  it('still reaps and promotes when no job can start in time, and claims nothing', async () => {
    await reset();
    const tooShort = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_BEAT_DEADLINE_MS: '300', EMQ_JOB_TIMEOUT_MS: '400' });
    try {
      await scheduled(tooShort.mf); // warms the script cache: a cold first call may add an EVAL request
      // a lease that lapsed (its holder died) and a delayed job now due
      await demo.add({ message: 'held by a consumer that died' }, { id: 'lapsed' });
      expect((await new Leases(demo).claim(1, 50)).jobs.map((j) => j.id)).toEqual(['JOB:lapsed']);
      await demo.add({ message: 'due' }, { id: 'due', delayMs: 50 });
      await sleep(120);
      bridge.reset();
      await scheduled(tooShort.mf);
      // one request: the beat reaped the lapsed lease and promoted the due job, and claimed nothing
      expect(bridge.stats().requests).toBe(1);
      expect(await demo.getJob('lapsed')).toMatchObject({ state: 'pending', attempt: 1 });
      expect(await demo.getJob('due')).toMatchObject({ state: 'pending', attempt: 0 });
      expect((await demo.stats()).counts).toMatchObject({ active: 0, scheduled: 0, pending: 2 });
    } finally {
      await tooShort.mf.dispose();
    }
  });

  it('promotes while it drains: a job of another group due mid-backlog runs before the backlog ends', async () => {
    await reset();
    const { mf } = await startWorker(bridge.url, {
      EMQ_TOKEN,
      EMQ_BEAT_DEADLINE_MS: '10000',
      EMQ_CONCURRENCY: '2',
      EMQ_BATCH_SIZE: '4',
      EMQ_REAP_EVERY_MS: '100',
      EMQ_JOB_TIMEOUT_MS: '1000',
    });
    try {
      // the backlog: 40 jobs of 30 ms on 2 handlers, over half a second of work
      const backlog = await demo.addBulk(Array.from({ length: 40 }, () => ({ payload: { sleepMs: 30 } })));
      const delayed = await demo.add({ message: 'due mid-backlog' }, { delayMs: 200, group: 'tenant-b' });
      await scheduled(mf);
      expect((await demo.stats()).counts).toMatchObject({ completed: 41, scheduled: 0, pending: 0, active: 0 });
      const finished = async (id: string): Promise<number> => (await demo.getJob(id))!.finishedAt!;
      const lastOfBacklog = Math.max(...(await Promise.all(backlog.map((b) => finished(b.id)))));
      expect(await finished(delayed.id)).toBeLessThan(lastOfBacklog);
    } finally {
      await mf.dispose();
    }
  });

  it('loses nothing when a beat is cut off mid-drain: its leases lapse and the next beat runs them', async () => {
    await reset();
    const cut = await startWorker(bridge.url, {
      EMQ_TOKEN,
      EMQ_BEAT_DEADLINE_MS: '1500',
      EMQ_JOB_TIMEOUT_MS: '1000',
      EMQ_LEASE_MARGIN_MS: '300',
      EMQ_CONCURRENCY: '5',
    });
    await demo.addBulk(Array.from({ length: 5 }, () => ({ payload: { sleepMs: 800 } })));
    const worker = await cut.mf.getWorker();
    const beat = worker.scheduled({ cron: '* * * * *', scheduledTime: new Date() }).catch(() => 'cut off');
    for (let i = 0; i < 200 && (await demo.stats()).counts.active < 5; i++) await sleep(10);
    expect((await demo.stats()).counts.active).toBe(5);
    await cut.mf.dispose(); // the isolate dies mid-job
    await beat;
    expect((await demo.stats()).counts).toMatchObject({ active: 5, completed: 0 });

    await sleep(2_000); // lease = time left to the deadline + 300 ms
    const next = await startWorker(bridge.url, { EMQ_TOKEN });
    try {
      await scheduled(next.mf);
      expect((await demo.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 5, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
    } finally {
      await next.mf.dispose();
    }
  });

  it('runs jobs enqueued at the edge on Node, and jobs enqueued on Node at the edge', async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    const ran: string[] = [];
    const consumer = Consumer.connect<Record<string, unknown>>(inject('redisUrl'), queueName, (job) => void ran.push(job.id), { beatMs: 10_000 }).start();
    try {
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload: { message: 'from the edge' } }),
      });
      const { id } = (await res.json()) as { id: string };
      for (let i = 0; i < 200 && ran.length === 0; i++) await sleep(10);
      expect(ran).toEqual([id]);
    } finally {
      await consumer.stop();
    }
    try {
      const { id } = await demo.add({ message: 'from Node' });
      await scheduled(mf);
      expect(await demo.getJob(id)).toMatchObject({ state: 'completed' });
    } finally {
      await mf.dispose();
    }
  });

  it('in workerd too, enqueues one at a time and in a burst share the isolate: a completion rides with the next claim', async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '1000', EMQ_ACK_WITHIN_MS: '300' });
    const enqueue = async (payload: unknown): Promise<string> => {
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    try {
      await enqueue({ message: 'warm' }); // the isolate loads the scripts
      await until(async () => (await demo.stats()).counts.completed === 1, 3_000);
      bridge.reset();
      for (let i = 0; i < 5; i++) {
        await enqueue({ message: `one ${i}` });
        await sleep(50);
      }
      await Promise.all(Array.from({ length: 20 }, (_, i) => enqueue({ message: `burst ${i}` })));
      await until(async () => (await demo.stats()).counts.completed === 26, 5_000);
      // 25 enqueues; the five one at a time cost one claim each (carrying the completion before
      // it), the burst one claim per few jobs (as its requests reach the isolate: 8 claims here
      // unloaded), the last completion one: at most 2 a job and 1 more, where it was 3 a job
      expect(bridge.stats().requests).toBeLessThanOrEqual(2 * 25 + 1);
      expect((await demo.stats()).counts).toMatchObject({ pending: 0, active: 0, dead: 0 });
    } finally {
      await mf.dispose();
    }
  });

  it('drains right after an enqueue through the Worker, without waiting for the cron', async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN });
    try {
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload: { message: 'now please' } }),
      });
      const { id } = (await res.json()) as { id: string };
      let state: string | undefined;
      for (let i = 0; i < 300 && state !== 'completed'; i++) {
        state = (await demo.getJob(id))?.state;
        await sleep(10);
      }
      expect(state).toBe('completed');
    } finally {
      await mf.dispose();
    }
  });

  it('a scheduler upserted through the Worker fires its first slot in the drain the upsert starts, due now or a second on, without the cron', async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN });
    const put = async (id: string, body: unknown): Promise<number> => {
      const res = await fetch(`${url}/v1/queues/${queueName}/schedulers/${id}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { nextRunAt: number }).nextRunAt;
    };
    const completed = async (id: string): Promise<boolean> => {
      for (let i = 0; i < 400; i++) {
        if ((await demo.getJob(id))?.state === 'completed') return true;
        await sleep(10);
      }
      return false;
    };
    try {
      // an every scheduler's first slot is due at once
      const now = await put('tick', { every: 3_600_000, job: { payload: { message: 'tick' } } });
      expect(await completed(`JOB:tick@${now}`)).toBe(true);
      // one due a second on, inside the drain window: the drain sleeps until it, then fires it
      const soon = await put('soon', { every: 3_600_000, startAt: Date.now() + 1000, job: { payload: { message: 'soon' } } });
      expect(await completed(`JOB:soon@${soon}`)).toBe(true);
      expect((await demo.getScheduler('tick'))?.fired).toBe(1);
      expect((await demo.getScheduler('soon'))?.fired).toBe(1);
      expect(await demo.removeScheduler('tick')).toBe(true);
      expect(await demo.removeScheduler('soon')).toBe(true);
    } finally {
      await mf.dispose();
      await reset();
    }
  });

  it('waitFor resolves for a job the Worker completes and rejects for one it buries; ?wait in the Worker answers the outcome', async () => {
    await reset();
    const { mf, url } = await startWorker(bridge.url, { EMQ_TOKEN });
    const post = async (payload: unknown, query = ''): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs${query}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    try {
      // enqueued at the edge, run by the Worker's drain after the enqueue, waited for on Node
      const { body } = await post({ message: 'wait for me', result: { sent: 'héllo ✓' } });
      await expect(demo.waitFor(body.id as string, { timeoutMs: 10_000 })).resolves.toEqual({ sent: 'héllo ✓' });
      const dead = await post({ fail: 'dead' });
      await expect(demo.waitFor(dead.body.id as string, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'EMQFAILED', jobError: expect.stringContaining('asked to die') });
      // and waited for in the Worker itself, which reads the stream every second
      expect(await post({ result: 42 }, '?wait=10000')).toMatchObject({ status: 200, body: { state: 'completed', result: 42 } });
      expect(await post({ fail: 'dead' }, '?wait=10000')).toMatchObject({ status: 200, body: { state: 'dead', error: expect.stringContaining('asked to die') } });
    } finally {
      await mf.dispose();
    }
  });
});

describe('the Worker on a Redis that forgot its scripts', () => {
  // SCRIPT FLUSH forgets every script of the server: a Redis of this suite's own (test/private-redis.ts)
  const own = usePrivateRedis({ bridgeToken: BRIDGE_TOKEN });
  const queueName = 'demo';

  it('loads byte-identical scripts: Redis computes the same sha1 from what the Worker sends', async () => {
    const { mf, url } = await startWorker(own.restBridge.url, { EMQ_TOKEN, EMQ_DRAIN_ON_ENQUEUE_MS: '0' });
    try {
      await own.raw.script('FLUSH');
      const res = await fetch(`${url}/v1/queues/${queueName}/jobs`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${EMQ_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ payload: { message: 'sha check' } }),
      });
      expect(res.status).toBe(201);
      // the Worker's EVALSHA missed, it sent its source by EVAL, and Redis hashed that source
      expect(await own.raw.script('EXISTS', scripts.enqueue.sha1)).toEqual([1]);
    } finally {
      await mf.dispose();
    }
  });
});
