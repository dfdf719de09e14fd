import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNetlifyFunction } from '../../src/netlify/index.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { queueName, sleep, until } from '../helpers.js';
import { checkInvariants } from '../invariants.js';

const root = join(import.meta.dirname, '..', '..');

/** One site under Netlify's local functions runtime (test/platforms/netlify-runner.ts), in a process of its own. */
class NetlifySite {
  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    readonly url: string,
    private readonly dir: string,
  ) {}

  static async start(env: Record<string, string>): Promise<NetlifySite> {
    // inside the repository (test-output/ is ignored), as a site sits beside its node_modules
    mkdirSync(join(root, 'test-output'), { recursive: true });
    const dir = mkdtempSync(join(root, 'test-output', 'netlify-site-'));
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'platforms', 'netlify-runner.ts'), dir], {
      cwd: root,
      // nothing else of this process's environment: the functions read the site's variables only
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? root,
        ...env,
      },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = await Promise.race([
      new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)),
      new Promise<string>((_, reject) => child.once('exit', (code) => reject(new Error(`netlify-runner exited ${code}: ${stderr}`)))),
    ]).catch((error: unknown) => {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    });
    const { url } = JSON.parse(ready) as { url: string };
    return new NetlifySite(child, url, dir);
  }

  /** A request to the site, as a browser or a client sends it. */
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.url}${path}`, init);
  }

  /** What Netlify's scheduler sends the scheduled function: a POST of `{"next_run": ...}`. */
  beat(): Promise<Response> {
    return this.fetch('/.netlify/functions/emq-beat', {
      method: 'POST',
      headers: { 'user-agent': 'Netlify Clockwork', 'x-nf-event': 'schedule', 'content-type': 'application/json' },
      body: JSON.stringify({ next_run: new Date(Date.now() + 60_000).toISOString() }),
    });
  }

  /** Stops the site (SIGKILL: an instance cut off) and removes its folder. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill(signal);
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const TOKEN = 'netlify';
const headers = (extra: Record<string, string> = {}, token = TOKEN): Record<string, string> => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  ...extra,
});

/**
 * Netlify Functions, run by Netlify's own local runtime (@netlify/functions-dev, what `netlify dev`
 * serves functions with: each file of `netlify/functions/` built by zip-it-and-ship-it, each
 * invocation in a thread of its own through the Functions v2 bootstrap, `context.waitUntil` and
 * the `Netlify` global its own): the API's function under `/api/emq/*` and the scheduled function,
 * over REST (the bridge), each site a process of its own.
 */
describe('echomq/netlify in Netlify\'s local functions runtime', () => {
  const redisUrl = inject('redisUrl');
  const restToken = randomBytes(8).toString('hex');
  let bridge: RunningBridge;
  let raw: Redis;
  const sites: NetlifySite[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl, token: restToken });
    raw = new Redis(redisUrl);
  });
  afterEach(async () => {
    await Promise.all(sites.splice(0).map((s) => s.stop()));
  });
  afterAll(async () => {
    await bridge.close();
    raw.disconnect();
  });

  const rest = (): Record<string, string> => ({ UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: restToken });
  async function site(queue: string, env: Record<string, string>): Promise<NetlifySite> {
    const made = await NetlifySite.start({ QUEUE: queue, SEEN_REST_URL: bridge.url, SEEN_REST_TOKEN: restToken, EMQ_TOKEN: TOKEN, ...env });
    sites.push(made);
    return made;
  }
  const seen = (queue: string): Promise<Record<string, string>> => raw.hgetall(`${queue}:seen`);
  const nodeQueue = (queue: string): Queue<unknown> => new Queue(IoredisTransport.connect(redisUrl), queue, { keepCompletedMs: 60_000 });

  it('answers an enqueue through the API before its job ends, and the drain handed to context.waitUntil runs it once; an Idempotency-Key repeat is the same job', async () => {
    const queue = queueName('netlify');
    const fn = await site(queue, rest());
    const enqueue = (body: unknown, extra: Record<string, string> = {}): Promise<Response> =>
      fn.fetch(`/api/emq/v1/queues/${queue}/jobs`, { method: 'POST', headers: headers(extra), body: JSON.stringify(body) });

    const first = await enqueue({ payload: { sleepMs: 1_500 } }, { 'idempotency-key': 'k1' });
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    const q = nodeQueue(queue);
    // answered before its job ended: the drain goes on after the answer, in waitUntil
    expect((await q.getJob(id))?.state).not.toBe('completed');
    await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: { ran: id } });

    // the same request again (a client's retry): the same job, not run again
    const again = await enqueue({ payload: { sleepMs: 1_500 } }, { 'idempotency-key': 'k1' });
    expect(again.status).toBeLessThan(300);
    expect(await again.json()).toMatchObject({ id });
    const second = await enqueue({ payload: { n: 2 } });
    const id2 = ((await second.json()) as { id: string }).id;
    await until(async () => (await q.getJob(id2))?.state === 'completed', 10_000);
    await sleep(300);
    expect(await seen(queue)).toEqual({ [id]: '1', [id2]: '1' });
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.transport.close();
  });

  it('the scheduled function beats until its deadline and no further: jobs from Node, a delayed one and a scheduler slot run once', async () => {
    const queue = queueName('netlify');
    const q = nodeQueue(queue);
    const ids = (await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: { i } })))).map((r) => r.id);
    const delayed = await q.add({ late: true }, { delayMs: 1_500 });
    await q.upsertScheduler('tick', { every: 1_000 }, { payload: { tick: true } });
    const fn = await site(queue, { ...rest(), EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '500' });
    const t0 = Date.now();
    const answer = await fn.beat();
    const took = Date.now() - t0;
    expect(answer.status).toBe(200);
    const report = (await answer.json()) as { firstRequests: number; firedSlots: number; summaries: Array<{ durationMs?: number }> };
    expect(report.firstRequests).toBe(1);
    expect(report.firedSlots).toBeGreaterThanOrEqual(2);
    // it drained until the deadline (sleeping for the delayed job and the slots), and stopped
    // there; the invocation's own cost (a build of the function, a thread) comes on top
    expect(Math.max(...report.summaries.map((s) => s.durationMs ?? 0))).toBeLessThan(3_000);
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(3_000 + 5_000);
    const runs = await seen(queue);
    for (const id of [...ids, delayed.id]) expect(runs[id]).toBe('1');
    expect(Object.values(runs).every((n) => n === '1')).toBe(true);
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.removeScheduler('tick');
    await q.transport.close();
  });

  it('a job left active by a site killed mid-beat is reaped by the next scheduled beat, and runs once more', async () => {
    const queue = queueName('netlify');
    const q = nodeQueue(queue);
    const { id } = await q.add({ sleepMs: 60_000 }, { maxAttempts: 3 });
    const env = { ...rest(), EMQ_BEAT_DEADLINE_MS: '1500', EMQ_JOB_TIMEOUT_MS: '1000', EMQ_LEASE_MARGIN_MS: '300' };
    const killed = await site(queue, env);
    // its answer never comes: the process is killed under it
    killed.beat().catch(() => undefined);
    await until(async () => (await seen(queue))[id] === '1', 15_000);
    await killed.stop('SIGKILL');
    expect(await q.getJob(id)).toMatchObject({ state: 'active' });
    // the lease (the deadline plus the margin) lapses; the next beat reaps the job and runs it again
    await until(async () => Number((await raw.zscore(`emq:{${queue}}:active`, id)) ?? 0) < Date.now(), 10_000);
    const next = await site(queue, { ...env, EMQ_JOB_TIMEOUT_MS: '100' });
    expect((await next.beat()).status).toBe(200);
    // run a second time (its handler timed out in that beat: a retry, attempts counted)
    expect((await seen(queue))[id]).toBe('2');
    expect((await q.getJob(id))?.attempt).toBe(2);
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.remove(id);
    await q.transport.close();
  });

  it('answers bad input 400 EMQARG writing nothing, a wrong token 401, an unreachable Redis 503 EMQREDIS, and a site without Redis 503 EMQCONFIG', async () => {
    const queue = queueName('netlify');
    const fn = await site(queue, rest());
    const bad = await fn.fetch(`/api/emq/v1/queues/${queue}/jobs`, { method: 'POST', headers: headers(), body: JSON.stringify({ payload: 1, delayMs: -5 }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'EMQARG' } });
    const unauthorized = await fn.fetch(`/api/emq/v1/queues/${queue}`, { headers: headers({}, 'wrong') });
    expect(unauthorized.status).toBe(401);
    expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);
    expect(await checkInvariants(raw, queue)).toEqual([]);

    const closedPort = await freePort();
    const away = await site(queue, { UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${closedPort}`, UPSTASH_REDIS_REST_TOKEN: restToken });
    const down = await away.fetch(`/api/emq/v1/queues/${queue}/jobs`, { method: 'POST', headers: headers(), body: JSON.stringify({ payload: 1 }) });
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ error: { code: 'EMQREDIS' } });

    const unconfigured = await site(queue, {});
    const refused = await unconfigured.fetch(`/api/emq/v1/queues/${queue}`, { headers: headers() });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('UPSTASH_REDIS_REST_URL') } });
    const idle = await unconfigured.beat();
    expect(idle.status).toBe(503);
    expect(await idle.json()).toMatchObject({ error: { code: 'EMQCONFIG' } });
    expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);
  });

  it('without context.waitUntil, the default export answers once its drain has run the job; a function URL path is stripped too', async () => {
    const queue = queueName('netlify');
    const ran: string[] = [];
    const fn = createNetlifyFunction({
      handlers: { [queue]: async (job: { id: string }) => void ran.push(job.id) },
      env: { ...rest(), EMQ_TOKEN: TOKEN },
      log: () => {},
    });
    // a Netlify runtime without waitUntil (an older one), at the function's own URL
    const answer = await fn(
      new Request(`https://site.netlify.app/.netlify/functions/emq/v1/queues/${queue}/jobs`, { method: 'POST', headers: headers(), body: JSON.stringify({ payload: { n: 1 } }) }),
      {},
    );
    expect(answer.status).toBe(201);
    const { id } = (await answer.json()) as { id: string };
    expect(ran).toEqual([id]);
    const q = nodeQueue(queue);
    expect(await q.getJob(id)).toMatchObject({ state: 'completed' });
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.transport.close();
  });
});
