import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { boundedBeat } from '../../src/serverless/bounded-beat.js';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { createWorker, type WorkerEnv, type WorkerOptions } from '../../src/edge/worker.js';
import { RateLimitedError } from '../../src/handler.js';
import { Queue } from '../../src/queue/queue.js';
import { createBeatHost } from '../../src/serverless/host.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { queueName, sleep, until } from '../helpers.js';
import { usePrivateRedis } from '../private-redis.js';

/**
 * A Worker serving `queues` on `env`, what its handlers saw (their job ids, and payloads), and the
 * waitUntil promises of its requests.
 */
function edgeWorker(env: WorkerEnv, queues: readonly string[], options: Omit<WorkerOptions, 'handlers' | 'log'> = {}) {
  const ran: string[] = [];
  const payloads: unknown[] = [];
  const handler = (job: { id: string; payload: unknown }): void => {
    ran.push(job.id);
    payloads.push(job.payload);
  };
  const w = createWorker({ ...options, handlers: Object.fromEntries(queues.map((q) => [q, handler])), log: () => {} });
  const pending: Array<Promise<unknown>> = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
  return {
    ran,
    payloads,
    enqueue: (queue: string, body: Record<string, unknown>) =>
      w.fetch(
        new Request(`http://edge/v1/queues/${queue}/jobs`, { method: 'POST', headers: { Authorization: 'Bearer edge', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
        env,
        ctx,
      ),
    scheduled: () => w.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctx),
    settled: async () => {
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    },
  };
}

/**
 * The Worker's drains, counted: the Worker's own code (createWorker) run on Node over
 * @upstash/redis and the REST bridge, which counts every request (each one a billed Upstash
 * request and a Cloudflare subrequest). Under miniflare the same code runs in workerd
 * (test/edge/worker.test.ts); here the counts are exact and the clock is the test's.
 */
describe('the edge drains, request by request', () => {
  let bridge: RunningBridge;
  let raw: Redis;
  let env: WorkerEnv;
  const token = randomBytes(8).toString('hex');

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token });
    raw = new Redis(inject('redisUrl'));
    env = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'edge', EMQ_DRAIN_ON_ENQUEUE_MS: '1000', EMQ_ACK_WITHIN_MS: '600' };
  });
  afterAll(async () => {
    await bridge.close();
    raw.disconnect();
  });

  const worker = (queues: readonly string[], options: Omit<WorkerOptions, 'handlers' | 'log'> = {}) => edgeWorker(env, queues, options);

  /** Scripts loaded, so a cold EVAL is not counted. */
  async function warm(queue: string): Promise<void> {
    const w = worker([queue]);
    await w.scheduled();
    await w.enqueue(queue, { payload: 'warm' });
    await w.settled();
  }

  it('spends one request on an idle scheduled event, whatever the number of queues', async () => {
    const names = [queueName('idle'), queueName('idle'), queueName('idle')];
    await warm(names[0]!);
    const w = worker(names);
    await w.scheduled();
    bridge.reset();
    await w.scheduled();
    await w.scheduled();
    expect(bridge.stats().requests).toBe(2);
  });

  it("runs jobs enqueued one at a time at one request each: the drain's claim rides in the enqueue's request, a completion with the next", async () => {
    const name = queueName('one');
    await warm(name);
    const w = worker([name]);
    bridge.reset();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await w.enqueue(name, { payload: i });
      ids.push(((await res.json()) as { id: string }).id);
      await sleep(30);
    }
    await w.settled();
    // the isolate's one read of the registry for the name (so a partitioned queue is served by its
    // name), ten enqueues each carrying the previous completion and the beat that claims its job,
    // and the last completion alone; 22 while the beat went in a request of its own after the
    // enqueue's reply, and 3 a job before completions rode along
    expect(bridge.stats().requests).toBe(12);
    expect(w.ran).toEqual(ids);
    const queue = new Queue(UpstashTransport.connect({ url: bridge.url, token }), name);
    expect((await queue.stats()).counts).toMatchObject({ completed: 11, active: 0, pending: 0 });
  });

  it('withdraws the ride of an enqueue refused before it was sent, and the next enqueue rides its own', async () => {
    const name = queueName('refused');
    await warm(name);
    const w = worker([name], { queueOptions: { maxPayloadBytes: 64 } });
    await w.enqueue(name, { payload: 'first' }); // the isolate's registry read for the name
    await w.settled();
    bridge.reset();
    // past the payload cap: refused by the queue before anything is sent, its ride withdrawn (a
    // ride left waiting would hold its request's waitUntil open: settled() would not return)
    const refused = await w.enqueue(name, { payload: 'x'.repeat(100) });
    expect(refused.status).toBe(413);
    await w.settled();
    expect(bridge.stats().requests).toBe(0);
    const res = await w.enqueue(name, { payload: 'next' });
    const { id } = (await res.json()) as { id: string };
    await w.settled();
    expect(w.ran).toContain(id);
    // the enqueue with its ride (the first job's completion and the claim), and the last completion alone
    expect(bridge.stats().requests).toBe(2);
    const queue = new Queue(UpstashTransport.connect({ url: bridge.url, token }), name);
    expect((await queue.stats()).counts).toMatchObject({ completed: 3, active: 0, pending: 0 });
  });

  it('sends a held completion on its own once nothing took it for EMQ_ACK_WITHIN_MS', async () => {
    const name = queueName('lone');
    await warm(name);
    const w = worker([name]);
    const res = await w.enqueue(name, { payload: 'lone' });
    const { id } = (await res.json()) as { id: string };
    const queue = new Queue(UpstashTransport.connect({ url: bridge.url, token }), name);
    await until(() => w.ran.includes(id), 2_000);
    expect(await queue.getJob(id)).toMatchObject({ state: 'active' }); // held: nothing rode yet
    await until(async () => (await queue.getJob(id))?.state === 'completed', 3_000);
    await w.settled();
  });

  it('a burst of enqueues shares one drain: about one request per job, the enqueue itself', async () => {
    const name = queueName('burst');
    await warm(name);
    const w = worker([name]);
    // the isolate has served the name before (its registry read done): what a burst costs then,
    // not what a brand-new isolate's first requests for a name cost (they wait for that read together)
    await w.enqueue(name, { payload: 'first' });
    await w.settled();
    bridge.reset();
    await Promise.all(Array.from({ length: 100 }, (_, i) => w.enqueue(name, { payload: i })));
    await w.settled();
    expect(w.ran).toHaveLength(101);
    expect(new Set(w.ran).size).toBe(101);
    expect(bridge.stats().requests / 100).toBeLessThanOrEqual(1.2);
  });

  it('a delayed job starts no beat before it is due, and runs when due', async () => {
    const name = queueName('later');
    await warm(name);
    const w = worker([name]);
    bridge.reset();
    const t0 = Date.now();
    const res = await w.enqueue(name, { payload: 'later', delayMs: 400 });
    const { id } = (await res.json()) as { id: string };
    await sleep(250);
    // the isolate's registry read for the name and the enqueue: the drain sleeps until the job is due
    expect(bridge.stats().requests).toBe(2);
    await until(() => w.ran.includes(id), 2_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    await w.settled();
    // the registry read, the enqueue, the beat at the due time, and the completion after EMQ_ACK_WITHIN_MS
    expect(bridge.stats().requests).toBe(4);
  });

  it('a burst of delayed jobs is run by the drains it started, none left to the cron', async () => {
    const name = queueName('later-burst');
    await warm(name);
    const w = worker([name]);
    // due over about half a second, as the burst's requests reach the isolate: one drain covers
    // most of them, and it may run out of its start window or its budget of requests
    await Promise.all(Array.from({ length: 150 }, (_, i) => w.enqueue(name, { payload: i, delayMs: 300 + (i % 30) * 20 })));
    await w.settled();
    const queue = new Queue(UpstashTransport.connect({ url: bridge.url, token }), name);
    expect((await queue.stats()).counts).toMatchObject({ scheduled: 0, pending: 0, active: 0, completed: 151 });
    expect(new Set(w.ran).size).toBe(150);
  });

  it('runs no job of a queue it has no handler for, even one named after a prototype method', async () => {
    const w = worker([queueName('own')]);
    for (const name of ['toString', 'constructor', 'hasOwnProperty']) {
      const res = await w.enqueue(name, { payload: name });
      expect(res.status).toBe(201);
      await w.settled();
      try {
        // left pending for a consumer that serves the queue, not run by Object.prototype[name]
        const queue = new Queue(UpstashTransport.connect({ url: bridge.url, token }), name);
        expect((await queue.stats()).counts, name).toMatchObject({ pending: 1, active: 0, completed: 0 });
        expect(w.ran).toEqual([]);
      } finally {
        const keys = await raw.keys(`emq:{${name}}:*`);
        if (keys.length > 0) await raw.del(...keys);
      }
    }
  });

  it("counts a handler's RateLimitedError as held, not retried: its job back unspent, its group held", async () => {
    const transport = UpstashTransport.connect({ url: bridge.url, token });
    const queue = new Queue<number>(transport, queueName('held'));
    await queue.addBulk([{ payload: 1, group: 'api' }, { payload: 2 }]);
    const summary = await boundedBeat(
      queue,
      (job) => {
        if (job.group === 'api') throw new RateLimitedError(60_000);
      },
      { deadline: Date.now() + 30_000 },
    );
    expect(summary).toMatchObject({ claimed: 2, completed: 1, held: 1, retried: 0, dead: 0 });
    const { rateLimits, counts } = await queue.stats();
    expect(counts).toMatchObject({ pending: 1, completed: 1 });
    expect(rateLimits.throttled.map((t) => t.group)).toEqual(['api']);
    expect((await queue.getJobs('pending'))[0]).toMatchObject({ group: 'api', attempt: 0 });
  });
});

describe('the edge drains on a Redis that forgot its scripts', () => {
  // SCRIPT FLUSH forgets every script of the server: a Redis of this suite's own (test/private-redis.ts)
  const token = randomBytes(8).toString('hex');
  const own = usePrivateRedis({ bridgeToken: token });

  it('counts a NOSCRIPT retry among the requests it spent', async () => {
    const transport = UpstashTransport.connect({ url: own.restBridge.url, token });
    const queue = new Queue<number>(transport, queueName('noscript'));
    await queue.add(1);
    await boundedBeat(queue, () => {}, { deadline: Date.now() + 30_000 }); // scripts loaded
    await own.raw.script('FLUSH');
    await queue.add(2); // by EVAL after its NOSCRIPT: the enqueue script is loaded again
    own.restBridge.reset();
    const summary = await boundedBeat(queue, () => {}, { deadline: Date.now() + 30_000 });
    expect(summary.completed).toBe(1);
    expect(summary.requests).toBe(own.restBridge.stats().requests);
    // the beat's EVALSHA and its EVAL after NOSCRIPT; the complete's likewise (the flush forgot both)
    expect(summary.requests).toBe(4);
  });

  it('runs a job enqueued through the Worker whose enqueue and riding claim Redis answered NOSCRIPT', async () => {
    const name = queueName('noscript-ride');
    const env: WorkerEnv = { UPSTASH_REDIS_REST_URL: own.restBridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'edge', EMQ_DRAIN_ON_ENQUEUE_MS: '1000', EMQ_ACK_WITHIN_MS: '100' };
    const w = edgeWorker(env, [name]);
    expect((await w.enqueue(name, { payload: 1 })).status).toBe(201);
    await w.settled();
    // every script forgotten: the enqueue runs again alone by EVAL, its ride after NOSCRIPT too,
    // in either order; the job still runs in this drain, not at the next cron. Several times: the
    // ride that claimed nothing ends its drain while the enqueue's reply asks whether a drain will
    // claim the job, and a drain that has decided to end must not say it will
    for (let i = 2; i <= 9; i++) {
      await own.raw.script('FLUSH');
      expect((await w.enqueue(name, { payload: i })).status).toBe(201);
      await w.settled();
      expect(w.payloads).toEqual(Array.from({ length: i }, (_, j) => j + 1));
    }
    const queue = new Queue(UpstashTransport.connect({ url: own.restBridge.url, token }), name);
    expect((await queue.stats()).counts).toMatchObject({ completed: 9, pending: 0, active: 0 });
  });

  it('runs a job enqueued through a fresh host over ioredis whose riding claim ran before its enqueue after NOSCRIPT, every time', async () => {
    // a cold instance (a new host and connection) after the scripts were forgotten: over ioredis
    // the enqueue and its ride go again by EVAL and may run in either order; their replies come in
    // one read, so the drain of a ride that claimed nothing and the enqueue's question (will a
    // drain claim this job?) interleave: a drain that decided to end must not answer that it will
    const name = queueName('noscript-tcp');
    const ran: number[] = [];
    for (let i = 1; i <= 10; i++) {
      await own.raw.script('FLUSH');
      const transport = IoredisTransport.connect(own.at.redisUrl);
      const host = createBeatHost(
        { handlers: { [name]: (job: { payload: unknown }) => void ran.push(job.payload as number) }, log: () => {} },
        { label: 'test host', secretHint: 'EMQ_TOKEN', connect: () => transport, settingsOf: () => ({ EMQ_TOKEN: 'edge', EMQ_DRAIN_ON_ENQUEUE_MS: '1000', EMQ_ACK_WITHIN_MS: '0' }) },
      );
      try {
        const pending: Array<Promise<unknown>> = [];
        const answer = await host.fetch(
          new Request(`http://host/v1/queues/${name}/jobs`, { method: 'POST', headers: { Authorization: 'Bearer edge', 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: i }) }),
          {},
          { waitUntil: (p) => void pending.push(p) },
        );
        expect(answer.status).toBe(201);
        while (pending.length > 0) await Promise.allSettled(pending.splice(0));
        expect(ran, `job ${i}`).toEqual(Array.from({ length: i }, (_, j) => j + 1));
      } finally {
        await transport.close();
      }
    }
  });
});
