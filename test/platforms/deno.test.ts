import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { freePort } from '../../src/node/local-redis.js';
import type { ScheduledReport } from '../../src/serverless/host.js';
import { checkInvariants } from '../invariants.js';
import { queueName, sleep, until } from '../helpers.js';
import { bundleForNode, type NodeBundle } from '../node-bundle.js';

const root = join(import.meta.dirname, '..', '..');
/** The `deno` npm package's binary (devDependencies). */
const DENO = join(root, 'node_modules', '.bin', 'deno');
/** What `serveDeno` needs, and no more (docs/guides/deno.md): the network, the environment, the cron. */
const DENO_FLAGS = ['run', '--allow-net', '--allow-env', '--unstable-cron'];

/** Why the deno binary cannot run here, or undefined when it can: the suite then skips itself, saying so. */
const cannotRun = ((): string | undefined => {
  const version = spawnSync(DENO, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (version.error) return `${DENO} did not start: ${version.error.message}`;
  if (version.status !== 0) return `${DENO} --version exited ${version.status}: ${version.stderr.trim()}`;
  return undefined;
})();
if (cannotRun) console.warn(`[deno.test.ts] skipped: the deno binary cannot run here (${cannotRun})`);

/** One Deno process running test/platforms/deno-app.ts (bundled), killed by its PID. */
class DenoApp {
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  /** What it wrote on stderr (the adapter's log), for a failure's message. */
  stderr = '';
  /** Settles when the process exits: its code, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Where it serves the API. */
  url = '';

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const resolve = this.waiting;
      this.waiting = undefined;
      if (resolve) resolve(line);
      else this.answers.push(line);
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  static async start(bundle: string, env: Record<string, string>, flags: readonly string[] = DENO_FLAGS): Promise<DenoApp> {
    // nothing of this process's environment but PATH: an EMQ_* set here must not reach the app
    const child = spawn(DENO, [...flags, bundle], { cwd: root, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', ...env } });
    const app = new DenoApp(child);
    const ready = await Promise.race([
      app.next(),
      app.exited.then(({ code, signal }) => Promise.reject(new Error(`deno exited (${code ?? signal}) before it served: ${app.stderr}`))),
      sleep(20_000).then(() => Promise.reject(new Error(`deno did not serve within 20 s: ${app.stderr}`))),
    ]);
    const line = JSON.parse(ready) as { ready: boolean; url: string };
    expect(line.ready).toBe(true);
    app.url = line.url;
    return app;
  }

  private next(): Promise<string> {
    const line = this.answers.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** Runs the handle's `beat()` in the app; resolves to its report. */
  async beat(): Promise<ScheduledReport | null> {
    this.child.stdin.write('beat\n');
    return (JSON.parse(await this.next()) as { beat: ScheduledReport | null }).beat;
  }

  /** A request to its API, with its bearer token. */
  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: 'Bearer deno', 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** Ends its stdin: the app's read loop ends, and holds the process no longer. */
  endStdin(): void {
    this.child.stdin.end();
  }

  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    await this.exited;
  }
}

/**
 * echomq/deno under the real Deno runtime (the `deno` npm package's binary), one process per
 * app: the API over REST (the bridge) and over TCP (ioredis through Deno's Node compatibility),
 * beats by Deno.cron on the wall-clock minute and by hand, a process killed mid-beat, errors, and
 * the shutdown on SIGTERM. Each test counts a job's runs (`<queue>:seen`) and reads Redis.
 */
describe.skipIf(cannotRun !== undefined)('echomq/deno under deno', () => {
  const redisUrl = inject('redisUrl');
  const token = randomBytes(8).toString('hex');
  let bridge: RunningBridge;
  let raw: Redis;
  let bundle: NodeBundle;
  const denoDir = mkdtempSync(join(tmpdir(), 'echomq-deno-dir-'));
  const apps: DenoApp[] = [];
  const queues: Array<Queue<unknown>> = [];
  /** The app left to Deno.cron alone, started first so its wait for the minute overlaps the other tests. */
  let cronApp: { queue: string; ids: string[]; started: number; app: DenoApp } | undefined;
  /** Every queue the tests used: their keys are deleted at the end. */
  const names: string[] = [];

  const rest = (): Record<string, string> => ({ UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token });
  const start = (queue: string, env: Record<string, string>, flags?: readonly string[]): Promise<DenoApp> => {
    if (!names.includes(queue)) names.push(queue);
    return DenoApp.start(bundle.paths[0]!, { DENO_DIR: denoDir, QUEUE: queue, SEEN_URL: bridge.url, SEEN_TOKEN: token, EMQ_TOKEN: 'deno', ...env }, flags);
  };
  /** An app for one test, stopped (SIGKILL) after it. */
  async function app(queue: string, env: Record<string, string>, flags?: readonly string[]): Promise<DenoApp> {
    const started = await start(queue, env, flags);
    apps.push(started);
    return started;
  }
  const seen = (queue: string): Promise<Record<string, string>> => raw.hgetall(`${queue}:seen`);
  function nodeQueue(queue: string): Queue<unknown> {
    if (!names.includes(queue)) names.push(queue);
    const made = new Queue<unknown>(IoredisTransport.connect(redisUrl), queue);
    queues.push(made);
    return made;
  }

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl, token });
    raw = new Redis(redisUrl);
    bundle = await bundleForNode([join(root, 'test', 'platforms', 'deno-app.ts')], 'deno');
    // jobs only a beat can run (enqueued from Node: no drain follows), and no beat but the cron's
    const queue = queueName('deno-cron');
    const q = nodeQueue(queue);
    const ids = (await q.addBulk([{ payload: { i: 1 } }, { payload: { i: 2 } }])).map((r) => r.id);
    ids.push((await q.add({ late: true }, { delayMs: 1_000 })).id);
    const started = Date.now();
    cronApp = { queue, ids, started, app: await start(queue, { ...rest(), EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '1000' }) };
  }, 60_000);
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.stop()));
  });
  afterAll(async () => {
    await cronApp?.app.stop();
    await Promise.all(queues.splice(0).map((q) => q.transport.close()));
    for (const name of names) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      await raw.del(`${name}:seen`, ...keys);
    }
    await bridge?.close();
    raw?.disconnect();
    bundle?.remove();
    rmSync(denoDir, { recursive: true, force: true });
  });

  it('runs a job enqueued through its API once, by the drain after the enqueue; a repeat with the Idempotency-Key is that job (REST)', async () => {
    const queue = queueName('deno');
    // no cron: only the drain after the enqueue can run the jobs
    const deno = await app(queue, { ...rest(), SCHEDULE: 'off' });
    const first = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } }, { 'idempotency-key': 'k1' });
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    const q = nodeQueue(queue);
    await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1, result: { ran: id, attempt: 1 } });
    // the client's retry: the same job, not a second one, not run again
    const again = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } }, { 'idempotency-key': 'k1' });
    expect(((await again.json()) as { id: string }).id).toBe(id);
    // a second job in the same process: its transport and what it knows of the queue are reused
    const second = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 2 } });
    const id2 = ((await second.json()) as { id: string }).id;
    await until(async () => (await q.getJob(id2))?.state === 'completed', 10_000);
    expect(await seen(queue)).toEqual({ [id]: '1', [id2]: '1' });
    expect((await q.stats()).counts).toMatchObject({ pending: 0, active: 0, completed: 2 });
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });

  it("the handle's beat runs what Node enqueued: pending jobs, a delayed one and a scheduler's slots, each once", async () => {
    const queue = queueName('deno');
    const q = nodeQueue(queue);
    const ids = (await q.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: { i } })))).map((r) => r.id);
    const delayed = await q.add({ late: true }, { delayMs: 1_500 });
    await q.upsertScheduler('tick', { every: 1_000 }, { payload: { tick: true } });
    const deno = await app(queue, { ...rest(), SCHEDULE: 'off', EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '500' });
    const t0 = Date.now();
    const report = await deno.beat();
    // it drained until its deadline, asleep for the delayed job and the slots in between
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    expect(report).toMatchObject({ firstRequests: 1 });
    expect(report!.firedSlots).toBeGreaterThanOrEqual(2);
    const runs = await seen(queue);
    for (const id of [...ids, delayed.id]) expect(runs[id], id).toBe('1');
    // a slot's job too (one fired near the deadline may be left for the next beat), and none twice
    expect(Object.keys(runs).length).toBeGreaterThan(ids.length + 1);
    expect(Object.values(runs).every((n) => n === '1')).toBe(true);
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.removeScheduler('tick');
  });

  it('a job left active by a process killed mid-beat (SIGKILL) is reaped by the next process\'s beat, and runs once more', async () => {
    const queue = queueName('deno');
    const q = nodeQueue(queue);
    // its first attempt sleeps a minute, its second returns at once
    const { id } = await q.add({ sleepMs: 60_000 }, { maxAttempts: 3 });
    const env = { ...rest(), SCHEDULE: 'off', EMQ_BEAT_DEADLINE_MS: '2000', EMQ_JOB_TIMEOUT_MS: '1500', EMQ_LEASE_MARGIN_MS: '300' };
    const killed = await app(queue, env);
    void killed.beat().catch(() => {});
    await until(async () => (await seen(queue))[id] === '1', 10_000);
    await killed.stop('SIGKILL');
    expect(await q.getJob(id)).toMatchObject({ state: 'active', attempt: 1 });
    // its lease (the beat's deadline and the margin) lapses; the next process's beat reaps it
    await until(async () => Number(await raw.zscore(`emq:{${queue}}:active`, id)) < Date.now(), 10_000);
    const next = await app(queue, env);
    await next.beat();
    expect(await seen(queue)).toEqual({ [id]: '2' });
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 2, result: { ran: id, attempt: 2 } });
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });

  it('answers bad input 400 EMQARG writing nothing, no Redis configured 503 EMQCONFIG, an unreachable Redis 503 EMQREDIS', async () => {
    const queue = queueName('deno');
    const closedPort = await freePort();
    // the first mounted in an app's own Deno.serve (listen: false), the others served by the adapter
    const [mounted, unconfigured, away] = await Promise.all([
      app(queue, { ...rest(), SCHEDULE: 'off', MOUNT: '1' }),
      app(queue, { SCHEDULE: 'off' }),
      app(queue, { SCHEDULE: 'off', UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${closedPort}`, UPSTASH_REDIS_REST_TOKEN: token }),
    ]);
    const bad = await mounted!.request('POST', `/v1/queues/${queue}/jobs`, { payload: 1, delayMs: -5 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'EMQARG' } });
    const unauthorized = await mounted!.request('GET', `/v1/queues/${queue}`, undefined, { authorization: 'Bearer wrong' });
    expect(unauthorized.status).toBe(401);
    expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);

    const refused = await unconfigured!.request('GET', `/v1/queues/${queue}`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('UPSTASH_REDIS_REST_URL') } });

    const down = await away!.request('POST', `/v1/queues/${queue}/jobs`, { payload: 1 });
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error: { code: 'EMQREDIS' } });
    expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);
  });

  it('refuses to start without --unstable-cron, saying so, and serves without it when told schedule: false', async () => {
    const queue = queueName('deno');
    const withoutCron = DENO_FLAGS.filter((flag) => flag !== '--unstable-cron');
    const child = spawn(DENO, [...withoutCron, bundle.paths[0]!], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', DENO_DIR: denoDir, QUEUE: queue, ...rest() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('DenoRuntimeError');
    expect(stderr).toContain('--unstable-cron');
    const served = await app(queue, { ...rest(), SCHEDULE: 'off' }, withoutCron);
    const answer = await served.request('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } });
    const { id } = (await answer.json()) as { id: string };
    await until(async () => (await seen(queue))[id] === '1', 10_000);
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });

  it('over TCP (connect: IoredisTransport.connect(REDIS_URL) from echomq/node) runs a job enqueued through its API, and one from Node by a beat', async () => {
    const queue = queueName('deno');
    const deno = await app(queue, { SCHEDULE: 'off', TCP: '1', REDIS_URL: redisUrl });
    const answer = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } });
    expect(answer.status).toBe(201);
    const { id } = (await answer.json()) as { id: string };
    const q = nodeQueue(queue);
    await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
    const fromNode = await q.add({ n: 2 });
    expect(await deno.beat()).toMatchObject({ firstRequests: 1 });
    expect(await q.getJob(fromNode.id)).toMatchObject({ state: 'completed', result: { ran: fromNode.id, attempt: 1 } });
    expect(await seen(queue)).toEqual({ [id]: '1', [fromNode.id]: '1' });
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });

  it('on SIGTERM it stops serving and the cron, finishes the drain in flight, closes, and the process exits 0', async () => {
    const queue = queueName('deno');
    // the cron registered (the default schedule): the process ends only if closing stops it
    const deno = await app(queue, { ...rest(), EMQ_BEAT_DEADLINE_MS: '3000' });
    const answer = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { sleepMs: 1_500 } });
    const { id } = (await answer.json()) as { id: string };
    await until(async () => (await seen(queue))[id] === '1', 10_000);
    deno.endStdin();
    deno.child.kill('SIGTERM');
    await sleep(200);
    // no longer served: the connection is refused (or, on a connection kept open, a 503)
    const late = await deno.request('POST', `/v1/queues/${queue}/jobs`, { payload: { late: true } }).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    const exit = await Promise.race([deno.exited, sleep(10_000).then(() => 'still running')]);
    expect(exit, deno.stderr).toEqual({ code: 0, signal: null });
    const q = nodeQueue(queue);
    // the drain ran to its end before the process went: the job completed, once, and was the only one
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: { ran: id, attempt: 1 } });
    expect(await seen(queue)).toEqual({ [id]: '1' });
    expect((await q.stats()).counts).toMatchObject({ pending: 0, active: 0, completed: 1 });
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });

  it('Deno.cron fires on the wall-clock minute: its beat runs what Node enqueued (two jobs and a delayed one), each once', { timeout: 90_000 }, async () => {
    const { queue, ids, started } = cronApp!;
    const q = nodeQueue(queue);
    // the next minute comes at most 60 s after the app started (its wait began before the other tests)
    const deadline = started + 70_000;
    const completed = async (): Promise<boolean> => (await Promise.all(ids.map((id) => q.getJob(id)))).every((job) => job?.state === 'completed');
    while (Date.now() < deadline && !(await completed())) await sleep(250);
    const runs = await seen(queue);
    expect(runs).toEqual(Object.fromEntries(ids.map((id) => [id, '1'])));
    for (const id of ids) {
      const job = await q.getJob(id);
      expect(job).toMatchObject({ state: 'completed', result: { ran: id, attempt: 1 } });
      // a beat that started on the minute: the jobs finished within its deadline of 3 s, and a few seconds of a loaded machine
      expect(job!.finishedAt! % 60_000, `${id} finished at ${new Date(job!.finishedAt!).toISOString()}`).toBeLessThan(10_000);
    }
    expect(await checkInvariants(raw, queue)).toEqual([]);
  });
});
