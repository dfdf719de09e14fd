import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { bundleForVercelEdge } from '../../tools/esbuild.js';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { createVercelHandlers, type VercelEnv, type VercelHandlers, type VercelHandlersOptions } from '../../src/vercel/index.js';
import { checkInvariants } from '../invariants.js';
import { queueName, until } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');

/** A running EdgeRuntime server: its URL (with a trailing slash), `waitUntil()` (every waitUntil of its requests so far, settled) and `close()`. */
type EdgeRuntimeServer = Awaited<ReturnType<typeof runServer>>;
/** What the suite's jobs carry: how long the handler sleeps. */
type Payload = { sleepMs?: number } | null;

/**
 * test/platforms/vercel-edge-app.ts as one script for the Edge runtime: bundled by esbuild (as tsx
 * has it, test/node-bundle.ts) for the browser platform, nothing left outside, so what it imports
 * must run with Web APIs alone.
 */

/** Where the handlers report each run: one POST of `{queue, id, attempt}` per run (the Edge runtime has no TCP, only fetch). */
class Recorder {
  readonly runs: Array<{ queue: string; id: string; attempt: number }> = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Recorder> {
    let recorder: Recorder | undefined;
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        recorder!.record(JSON.parse(body) as { queue: string; id: string; attempt: number });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    recorder = new Recorder(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return recorder;
  }

  record(run: { queue: string; id: string; attempt: number }): void {
    this.runs.push(run);
  }

  /** How many times each job of `queue` ran, by id. */
  seen(queue: string): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const run of this.runs) if (run.queue === queue) counts[run.id] = (counts[run.id] ?? 0) + 1;
    return counts;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The edge app in an EdgeRuntime in a process of its own (test/platforms/vercel-edge-runner.ts),
 * served on a loopback port: what a test kills by its PID to stand for an invocation cut off.
 */
class EdgeProcess {
  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    /** Its URL, with a trailing slash. */
    readonly url: string,
  ) {}

  static async start(start: { code: string; env: VercelEnv; queue: string; recordUrl: string }): Promise<EdgeProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'platforms', 'vercel-edge-runner.ts')], {
      cwd: root,
      // the app reads its environment from EMQ_ENV, not from the process's
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? root },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(JSON.stringify(start));
    const ready = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)),
      new Promise<string>((_, reject) => child.once('exit', (code) => reject(new Error(`vercel-edge-runner exited ${code}: ${stderr}`)))),
    ]);
    return new EdgeProcess(child, (JSON.parse(ready) as { url: string }).url);
  }

  /** What Vercel Cron sends the cron route: a GET with `Authorization: Bearer <CRON_SECRET>`. */
  cron(secret: string): Promise<Response> {
    return fetch(`${this.url}api/emq-cron`, { headers: { authorization: `Bearer ${secret}`, 'user-agent': 'vercel-cron/1.0' } });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
  }
}

const json = async (response: Response): Promise<Record<string, unknown>> => (await response.json()) as Record<string, unknown>;

/**
 * Vercel: the same handlers in Vercel's Edge runtime (edge-runtime, the runtime Vercel's Edge
 * functions run on, as a Node API) and on Node (imported here, as the Node runtime imports a route
 * file). In the Edge runtime the request context Vercel provides carries the fetch event's
 * waitUntil: the drain after an enqueue runs after the answer. On Node without one, the answer
 * waits for the drain.
 */
describe('echomq/vercel', () => {
  const redisUrl = inject('redisUrl');
  const bridgeToken = randomBytes(8).toString('hex');
  let bridge: RunningBridge;
  let raw: Redis;
  let recorder: Recorder;
  let edgeApp: string;
  const servers: EdgeRuntimeServer[] = [];
  const processes: EdgeProcess[] = [];
  const closing: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    [bridge, recorder, edgeApp] = await Promise.all([startBridge({ redisUrl, token: bridgeToken }), Recorder.start(), bundleForVercelEdge(join(root, 'test', 'platforms', 'vercel-edge-app.ts'))]);
    raw = new Redis(redisUrl);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await Promise.all(processes.splice(0).map((edge) => edge.stop()));
    await Promise.all(closing.splice(0).map((transport) => transport.close()));
  });
  afterAll(async () => {
    await Promise.all([bridge.close(), recorder.close()]);
    raw.disconnect();
  });

  const rest = (): VercelEnv => ({ UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: bridgeToken, EMQ_TOKEN: 'emq' });
  function nodeQueue(queue: string): Queue<unknown> {
    const transport = IoredisTransport.connect(redisUrl);
    closing.push(transport);
    return new Queue(transport, queue);
  }

  /** The edge app in an EdgeRuntime of its own, served on a loopback port: its URL (with a trailing slash) and server. */
  async function edgeFunction(queue: string, env: VercelEnv): Promise<EdgeRuntimeServer> {
    const runtime = new EdgeRuntime({ initialCode: edgeApp, extend: (context) => Object.assign(context, { EMQ_ENV: env, QUEUE: queue, RECORD_URL: recorder.url }) });
    const server = await runServer({ runtime, host: '127.0.0.1' });
    servers.push(server);
    return server;
  }

  /** The edge app as edgeFunction serves it, in a process of its own (to be killed by its PID). */
  async function edgeProcess(queue: string, env: VercelEnv): Promise<EdgeProcess> {
    const started = await EdgeProcess.start({ code: edgeApp, env, queue, recordUrl: recorder.url });
    processes.push(started);
    return started;
  }

  const enqueue = (base: string, queue: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${base}v1/queues/${queue}/jobs`, {
      method: 'POST',
      headers: { authorization: 'Bearer emq', 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  describe('in the Edge runtime', () => {
    it('answers an enqueue at once and runs its job after the answer, kept alive by the request\'s waitUntil; a repeat with its Idempotency-Key is the same job, not run again', async () => {
      const queue = queueName('vercel');
      const fn = await edgeFunction(queue, rest());
      const q = nodeQueue(queue);
      const first = await enqueue(`${fn.url}api/emq/`, queue, { payload: { sleepMs: 300 } }, { 'idempotency-key': 'k1' });
      expect(first.status).toBe(201);
      const { id } = (await json(first)) as { id: string };
      // answered while its job runs: the drain goes on after the answer, in the event's waitUntil
      expect((await q.getJob(id))?.state).not.toBe('completed');
      await fn.waitUntil();
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1, result: { ran: id } });
      expect(recorder.seen(queue)).toEqual({ [id]: 1 });

      const again = await enqueue(`${fn.url}api/emq/`, queue, { payload: { sleepMs: 300 } }, { 'idempotency-key': 'k1' });
      expect(again.status).toBe(201);
      expect(await json(again)).toMatchObject({ id });
      await fn.waitUntil();
      expect(recorder.seen(queue)).toEqual({ [id]: 1 });
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1 });
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('the cron route refuses a request without CRON_SECRET or with a wrong one (401 EMQAUTH, no beat), and with it beats: a delayed job and a scheduler slot from Node run once', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const delayed = await q.add({ late: true }, { delayMs: 300 });
      await q.upsertScheduler('tick', { every: 400 }, { payload: { tick: true } });
      const fn = await edgeFunction(queue, { ...rest(), CRON_SECRET: 'cron-secret', EMQ_BEAT_DEADLINE_MS: '1500', EMQ_JOB_TIMEOUT_MS: '300' });
      const cron = (authorization?: string): Promise<Response> => fetch(`${fn.url}api/emq-cron`, authorization ? { headers: { authorization } } : {});

      for (const refused of [await cron(), await cron('Bearer wrong'), await cron('Bearer emq')]) {
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await json(refused)).toMatchObject({ error: { code: 'EMQAUTH' } });
      }
      // none of them beat: a beat answers only once it ends, with the delayed job run
      expect(recorder.seen(queue)).toEqual({});
      expect((await q.getJob(delayed.id))?.state).toBe('scheduled');

      // as Vercel calls it: GET, with the secret
      const beat = await cron('Bearer cron-secret');
      expect(beat.status).toBe(200);
      const report = (await json(beat)) as { firstRequests: number; firedSlots: number };
      expect(report.firstRequests).toBe(1);
      expect(report.firedSlots).toBeGreaterThanOrEqual(1);
      expect(await q.getJob(delayed.id)).toMatchObject({ state: 'completed', attempt: 1 });
      const runs = recorder.seen(queue);
      expect(runs[delayed.id]).toBe(1);
      // the delayed job and at least one slot's job, each once
      expect(Object.keys(runs).length).toBeGreaterThanOrEqual(2);
      expect(Object.values(runs).every((n) => n === 1)).toBe(true);
      await q.removeScheduler('tick');
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('a job left active by a cron invocation killed mid-beat is reaped by the next cron beat, in a fresh instance, and runs once more', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const { id } = await q.add({ sleepMs: 60_000 }, { maxAttempts: 3 });
      const env: VercelEnv = { ...rest(), CRON_SECRET: 'cron-secret', EMQ_BEAT_DEADLINE_MS: '1500', EMQ_JOB_TIMEOUT_MS: '1000', EMQ_LEASE_MARGIN_MS: '300' };
      const killed = await edgeProcess(queue, env);
      // its answer never comes: the process is killed under it while its beat runs the job
      const cut = killed.cron('cron-secret').then(
        (response) => response.status,
        () => 'cut off',
      );
      await until(() => recorder.seen(queue)[id] === 1, 10_000);
      await killed.stop('SIGKILL');
      expect(await cut).toBe('cut off');
      expect(await q.getJob(id)).toMatchObject({ state: 'active', attempt: 1 });
      // the lease (the beat's deadline plus the margin) lapses; the next cron, in a fresh instance, reaps the job and runs it again
      await until(async () => Number((await raw.zscore(`emq:{${queue}}:active`, id)) ?? 0) < Date.now(), 10_000);
      const next = await edgeProcess(queue, { ...env, EMQ_JOB_TIMEOUT_MS: '100' });
      const beat = await next.cron('cron-secret');
      expect(beat.status).toBe(200);
      expect(await json(beat)).toMatchObject({ firstRequests: 1 });
      // what the handlers saw: the job twice, its second run a second attempt (the first ended by the kill, counted)
      expect(recorder.runs.filter((run) => run.queue === queue)).toEqual([
        { queue, id, attempt: 1 },
        { queue, id, attempt: 2 },
      ]);
      // its handler timed out in that beat: a retry, attempts counted
      expect((await q.getJob(id))?.attempt).toBe(2);
      expect(await checkInvariants(raw, queue)).toEqual([]);
      await q.remove(id);
    });

    it('answers bad input with 400 EMQARG and writes nothing; refuses without Redis configured or without CRON_SECRET (503 EMQCONFIG), unless local dev', async () => {
      const queue = queueName('vercel');
      const fn = await edgeFunction(queue, rest());
      const bad = await enqueue(`${fn.url}api/emq/`, queue, { payload: 1, delayMs: -5 });
      expect(bad.status).toBe(400);
      expect(await json(bad)).toMatchObject({ error: { code: 'EMQARG' } });
      expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);
      // rest() sets no CRON_SECRET: the cron route refuses to stand open
      const unset = await fetch(`${fn.url}api/emq-cron`, { headers: { authorization: 'Bearer anything' } });
      expect(unset.status).toBe(503);
      expect(await json(unset)).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('CRON_SECRET') } });

      const unconfigured = await edgeFunction(queue, { EMQ_TOKEN: 'emq', CRON_SECRET: 'cron-secret' });
      const api = await enqueue(`${unconfigured.url}api/emq/`, queue, { payload: 1 });
      expect(api.status).toBe(503);
      expect(await json(api)).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN') } });
      const cron = await fetch(`${unconfigured.url}api/emq-cron`, { headers: { authorization: 'Bearer cron-secret' } });
      expect(cron.status).toBe(503);
      expect(await json(cron)).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('UPSTASH_REDIS_REST_URL') } });

      // local dev: the cron route beats without a secret
      const local = await edgeFunction(queue, { ...rest(), EMQ_LOCAL_DEV: '1', EMQ_BEAT_DEADLINE_MS: '300', EMQ_JOB_TIMEOUT_MS: '100' });
      const open = await fetch(`${local.url}api/emq-cron`);
      expect(open.status).toBe(200);
      expect(await json(open)).toMatchObject({ firstRequests: 1 });
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('answers 503 EMQREDIS when the REST endpoint does not answer', async () => {
      const queue = queueName('vercel');
      const closedPort = await freePort();
      const fn = await edgeFunction(queue, { ...rest(), UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${closedPort}` });
      const down = await enqueue(`${fn.url}api/emq/`, queue, { payload: 1 });
      expect(down.status).toBe(503);
      expect(await json(down)).toMatchObject({ error: { code: 'EMQREDIS' } });
      expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);
    });
  });

  describe('on Node', () => {
    /** Handlers over `options`, for `queue`, recording each run; the API at `/api/emq`. */
    function nodeHandlers(queue: string, options: Omit<VercelHandlersOptions<Record<string, Payload>>, 'handlers'> = {}): VercelHandlers {
      return createVercelHandlers<Record<string, Payload>>({
        basePath: '/api/emq',
        handlers: {
          [queue]: async (job: { id: string; attempt: number; payload: Payload }) => {
            recorder.record({ queue, id: job.id, attempt: job.attempt });
            if (job.payload?.sleepMs) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
            return { ran: job.id };
          },
        },
        log: () => {},
        ...options,
      });
    }
    const call = (handlers: VercelHandlers, queue: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      handlers.POST(
        new Request(`https://app.example/api/emq/v1/queues/${queue}/jobs`, {
          method: 'POST',
          headers: { authorization: 'Bearer emq', 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      );

    it('without a waitUntil, runs an enqueued job before it answers, over REST from process.env; a repeat is the same job, not run again', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const saved = { ...process.env };
      Object.assign(process.env, rest());
      try {
        const handlers = nodeHandlers(queue);
        const first = await call(handlers, queue, { payload: { n: 1 } }, { 'idempotency-key': 'k1' });
        expect(first.status).toBe(201);
        const { id } = (await json(first)) as { id: string };
        // the drain ended before the answer: nothing would keep the function alive after it
        expect(recorder.seen(queue)).toEqual({ [id]: 1 });
        expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1, result: { ran: id } });
        const again = await call(handlers, queue, { payload: { n: 1 } }, { 'idempotency-key': 'k1' });
        expect(await json(again)).toMatchObject({ id });
        expect(recorder.seen(queue)).toEqual({ [id]: 1 });
      } finally {
        for (const key of Object.keys(rest())) if (saved[key] === undefined) delete process.env[key];
        Object.assign(process.env, saved);
      }
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('with `connect` (ioredis over TCP), runs an enqueued job before it answers', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const handlers = nodeHandlers(queue, {
        env: { EMQ_TOKEN: 'emq', REDIS_URL: redisUrl },
        connect: (env) => {
          const transport = IoredisTransport.connect(env.REDIS_URL!);
          closing.push(transport);
          return transport;
        },
      });
      const answer = await call(handlers, queue, { payload: { n: 1 } });
      expect(answer.status).toBe(201);
      const { id } = (await json(answer)) as { id: string };
      expect(recorder.seen(queue)).toEqual({ [id]: 1 });
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1, result: { ran: id } });
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('with a waitUntil (the option, or Vercel\'s request context), answers at once and the job runs in it', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const kept: Array<Promise<unknown>> = [];
      const byOption = nodeHandlers(queue, { env: rest(), waitUntil: (promise) => void kept.push(promise) });
      const first = await call(byOption, queue, { payload: { sleepMs: 300 } });
      const { id } = (await json(first)) as { id: string };
      expect((await q.getJob(id))?.state).not.toBe('completed');
      expect(kept.length).toBeGreaterThan(0);
      await Promise.all(kept);
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1 });

      // Vercel's Node runtime: the request context's waitUntil, found without @vercel/functions
      const context = Symbol.for('@vercel/request-context');
      const fromContext: Array<Promise<unknown>> = [];
      (globalThis as { [key: symbol]: unknown })[context] = { get: () => ({ waitUntil: (promise: Promise<unknown>) => void fromContext.push(promise) }) };
      try {
        const second = await call(nodeHandlers(queue, { env: rest() }), queue, { payload: { sleepMs: 300 } });
        const id2 = ((await json(second)) as { id: string }).id;
        expect((await q.getJob(id2))?.state).not.toBe('completed');
        expect(fromContext.length).toBeGreaterThan(0);
        await Promise.all(fromContext);
        expect(await q.getJob(id2)).toMatchObject({ state: 'completed', attempt: 1 });
        expect(recorder.seen(queue)).toEqual({ [id]: 1, [id2]: 1 });
      } finally {
        delete (globalThis as { [key: symbol]: unknown })[context];
      }
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });

    it('a cron beats no longer than the function\'s maxDuration less its margin, even with a longer EMQ_BEAT_DEADLINE_MS', async () => {
      const queue = queueName('vercel');
      const q = nodeQueue(queue);
      const { id } = await q.add({ n: 1 });
      await q.upsertScheduler('tick', { every: 300 }, { payload: { tick: true } });
      const handlers = nodeHandlers(queue, {
        env: { ...rest(), CRON_SECRET: 'cron-secret', EMQ_BEAT_DEADLINE_MS: '60000', EMQ_JOB_TIMEOUT_MS: '200' },
        maxDurationMs: 3_000,
      });
      const t0 = Date.now();
      const beat = await handlers.cron(new Request('https://app.example/api/emq-cron', { headers: { authorization: 'Bearer cron-secret' } }));
      const took = Date.now() - t0;
      expect(beat.status).toBe(200);
      // 3 s less the 2 s margin: a second of beats, the last job started by 800 ms (the job timeout
      // before it), so the slot at 600 ms is its last; EMQ_BEAT_DEADLINE_MS alone would beat a minute
      expect(took).toBeGreaterThanOrEqual(500);
      expect(took).toBeLessThan(2_000);
      expect(((await json(beat)) as { firedSlots: number }).firedSlots).toBeGreaterThanOrEqual(1);
      expect(recorder.seen(queue)[id]).toBe(1);
      await q.removeScheduler('tick');
      expect(await checkInvariants(raw, queue)).toEqual([]);
    });
  });
});
