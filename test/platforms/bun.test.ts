import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import type { Queue } from '../../src/queue/queue.js';
import { keyspace } from '../../src/keyspace.js';
import { checkInvariants } from '../invariants.js';
import { leaseCount, until, useRedis } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');
/** The `bun` binary of the devDependency (the npm package `bun`: node_modules/.bin/bun). */
const BUN = join(root, 'node_modules', '.bin', 'bun');

/** Bun's version, or why this machine cannot run it (then the suite says so and skips itself). */
function bunHere(): { version: string } | { missing: string } {
  const probe = spawnSync(BUN, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.error) return { missing: `${BUN} cannot run: ${probe.error.message}` };
  if (probe.status !== 0) return { missing: `${BUN} --version exited ${probe.status}: ${(probe.stderr || probe.stdout).trim().split('\n')[0]}` };
  return { version: probe.stdout.trim() };
}
const bun = bunHere();
if ('missing' in bun) console.warn(`[bun suite] skipped: ${bun.missing}`);
const title = 'version' in bun ? `the parked consumer and emq under Bun ${bun.version}` : `the parked consumer and emq under Bun (skipped: ${bun.missing})`;

/** How a Bun child ended. */
interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `bun` child process of this suite: what it printed so far, its end, signalled by its PID. */
class BunProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (c: Buffer) => (this.stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  get output(): string {
    return `stdout:\n${this.stdout}\nstderr:\n${this.stderr}`;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits until `pattern` is in its stdout or stderr; fails with what it printed if it exits first. */
  async printed(pattern: RegExp, ms = 15_000): Promise<void> {
    await until(() => {
      if (pattern.test(this.stdout) || pattern.test(this.stderr)) return true;
      if (!this.running) throw new Error(`bun exited before printing ${pattern}:\n${this.output}`);
      return false;
    }, ms);
  }

  /** Sends `signal` to its PID and waits for it to end (SIGKILL after 20 s). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
    if (this.running) {
      process.kill(this.child.pid!, signal);
      const timer = setTimeout(() => this.running && process.kill(this.child.pid!, 'SIGKILL'), 20_000);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exited;
  }
}

/**
 * Bun (the `bun` binary, a child process per runtime, killed by its PID) running what a
 * long-running process runs: the parked consumer (test/platforms/bun-consumer.ts, importing
 * src/ as TypeScript), `emq consume` with a TypeScript handler module, `bunx --bun emq`, and
 * `emq serve`. Jobs are enqueued from Node (this process); each handler run is counted in Redis
 * beside the queue's keys, and every queue's keyspace checks clean after.
 */
describe.skipIf('missing' in bun)(title, () => {
  const redis = useRedis();
  const url = inject('redisUrl');
  const children: BunProcess[] = [];
  const scratch: string[] = [];
  const queues: string[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.stop('SIGKILL')));
    for (const name of queues.splice(0)) await redis.raw.del(`${name}:seen`, `${name}:started`, `${name}:peak`);
  });
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  /** A new queue (its keys and the handler's records removed after the test). */
  function queue<P = unknown>(): Queue<P> {
    const made = redis.queue<P>();
    queues.push(made.name);
    return made;
  }

  /** Starts `bun ...args` in the root (or `cwd`), with `env` over this process's environment. */
  function startBun(args: readonly string[], env: Record<string, string> = {}, cwd = root, command = BUN): BunProcess {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const made = new BunProcess(child);
    children.push(made);
    return made;
  }

  /** A Bun consumer (bun-consumer.ts) on `name`, once it has said it started. */
  async function bunConsumer(name: string, env: Record<string, string> = {}): Promise<BunProcess> {
    const consumer = startBun([join(root, 'test', 'platforms', 'bun-consumer.ts')], { REDIS_URL: url, QUEUE: name, ...env });
    await consumer.printed(/"ready":true,"runtime":"bun /);
    return consumer;
  }

  /** Whether a connection named `name` is blocked in BLPOP: a consumer parked on its doorbell. */
  async function parked(name: string): Promise<boolean> {
    const clients = (await redis.raw.client('LIST')) as string;
    return clients.split('\n').some((line) => line.includes(` name=${name} `) && / flags=b /.test(line) && / cmd=blpop /.test(line));
  }

  const seen = async (name: string): Promise<Record<string, string>> => redis.raw.hgetall(`${name}:seen`);
  const startedAt = async (name: string, id: string, attempt = 1): Promise<number> => Number(await redis.raw.hget(`${name}:started`, `${id}:${attempt}`));
  const runtime = `bun ${'version' in bun ? bun.version : ''}`;

  it('runs jobs enqueued from Node one at a time, in bulk, delayed, in a limited group and failing: each completed once, retries as asked', async () => {
    const q = queue<{ sleepMs?: number; failAttempts?: number; n?: number } | null>();
    await q.setGroupLimit('g', 2);
    const consumer = await bunConsumer(q.name, { CONCURRENCY: '4' });
    await until(() => parked(`bun-${q.name}`), 10_000);

    const single: string[] = [];
    for (let n = 0; n < 5; n++) single.push((await q.add({ n })).id);
    const bulk = (await q.addBulk(Array.from({ length: 40 }, (_, n) => ({ payload: { n } })))).map((r) => r.id);
    const grouped = (await q.addBulk(Array.from({ length: 10 }, () => ({ payload: { sleepMs: 40 }, group: 'g' })))).map((r) => r.id);
    const delayed = await q.add(null, { delayMs: 500 });
    const retried = await q.add({ failAttempts: 2 }, { maxAttempts: 3, backoff: 0 });
    const dead = await q.add({ failAttempts: 9 }, { maxAttempts: 2, backoff: 0 });
    const completed = [...single, ...bulk, ...grouped, delayed.id, retried.id];

    await until(async () => {
      const { counts } = await q.stats();
      return counts.completed === completed.length && counts.dead === 1;
    }, 15_000);
    const runs = await seen(q.name);
    expect(runs).toEqual({ ...Object.fromEntries(completed.map((id) => [id, '1'])), [retried.id]: '3', [dead.id]: '2' });
    for (const id of completed) expect(await q.getJob(id), id).toMatchObject({ state: 'completed', result: { ran: id, runtime } });
    expect(await q.getJob(retried.id)).toMatchObject({ attempt: 3 });
    expect(await q.getJob(dead.id)).toMatchObject({ state: 'dead', attempt: 2, error: expect.stringContaining('asked to fail attempt 2') });
    // the group's limit held with four slots free to break it, and the slots were used
    const peak = await redis.raw.hgetall(`${q.name}:peak`);
    expect(Number(peak['g'])).toBe(2);
    expect(Number(peak['all'])).toBeGreaterThan(1);
    expect(Number(peak['all'])).toBeLessThanOrEqual(4);
    // the delayed job waited for its due time (the row's creation, Redis's clock, same host), and
    // started on the consumer's due timer, not on its 10 s beat
    const due = Number(await redis.raw.hget(keyspace(q.name).job(delayed.id), 'c')) + 500;
    expect(await startedAt(q.name, delayed.id)).toBeGreaterThanOrEqual(due - 5);
    expect(await startedAt(q.name, delayed.id)).toBeLessThan(due + 1_000);

    expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
    expect(await consumer.stop(), consumer.output).toEqual({ code: 0, signal: null });
  });

  it('parked on the BLPOP doorbell with a 10 s beat, starts a job enqueued from Node at once, grouped or not', async () => {
    const q = queue<null>();
    const consumer = await bunConsumer(q.name, { BEAT_MS: '10000' });
    const waits: number[] = [];
    for (const group of [undefined, 'g', undefined, 'h']) {
      // parked: its doorbell connection sits in BLPOP, and nothing else would wake it for 10 s
      await until(() => parked(`bun-${q.name}`), 10_000);
      const before = Date.now();
      const { id } = await q.add(null, group ? { group } : {});
      await until(async () => (await seen(q.name))[id] === '1', 5_000);
      waits.push((await startedAt(q.name, id)) - before);
    }
    // no poll: each started within a tenth of the beat of its add (its handler's first line,
    // Date.now() in Bun against Date.now() in Node on the same host); speed is bench/'s business
    for (const wait of waits) expect(wait, `add to handler, ms: ${waits.join(', ')}`).toBeLessThan(1_000);
    expect(await consumer.stop(), consumer.output).toEqual({ code: 0, signal: null });
  });

  it('on SIGTERM finishes the job in hand, records it and exits 0, nothing left active', async () => {
    const q = queue<{ sleepMs: number }>();
    const consumer = await bunConsumer(q.name);
    const { id } = await q.add({ sleepMs: 800 });
    await until(async () => (await seen(q.name))[id] === '1', 5_000);
    const exit = await consumer.stop('SIGTERM');
    expect(exit, consumer.output).toEqual({ code: 0, signal: null });
    expect(consumer.stdout).toContain('{"stopped":true}');
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 1, result: { ran: id, runtime } });
    expect(await seen(q.name)).toEqual({ [id]: '1' });
    expect(await leaseCount(redis.raw, keyspace(q.name))).toBe(0);
    expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  });

  it('killed mid-job (SIGKILL), its job is reaped once its short lease lapses and run again by another Bun consumer', async () => {
    const q = queue<{ sleepFirstMs: number }>();
    const lease = { LEASE_MS: '1000', BEAT_MS: '10000' };
    const killed = await bunConsumer(q.name, { ...lease, CONNECTION_NAME: `bun-killed-${q.name}` });
    const { id } = await q.add({ sleepFirstMs: 60_000 }, { maxAttempts: 3 });
    await until(async () => (await seen(q.name))[id] === '1', 5_000);
    expect(await killed.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await q.getJob(id)).toMatchObject({ state: 'active', attempt: 1 });

    const next = await bunConsumer(q.name, lease);
    await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
    // at least once, never lost: the attempt the kill cut short, then one that finished
    expect(await seen(q.name)).toEqual({ [id]: '2' });
    expect(await q.getJob(id)).toMatchObject({ state: 'completed', attempt: 2, result: { ran: id, runtime } });
    expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
    expect(await next.stop(), next.output).toEqual({ code: 0, signal: null });
  });

  /** `emq consume <queue> --handler <module>` started as `command args...`, once it says it consumes. */
  async function emqConsume(name: string, launch: { command?: string; args: readonly string[]; cwd?: string; handler?: string }): Promise<BunProcess> {
    const { command, args, cwd, handler = join(root, 'test', 'platforms', 'bun-handler.ts') } = launch;
    const emq = startBun([...args, 'consume', name, '--handler', handler, '--beat-ms', '10000'], { REDIS_URL: url, SEEN_REDIS_URL: url, SEEN_QUEUE: name }, cwd, command);
    await emq.printed(/\[emq\] consuming /);
    return emq;
  }

  it('`bun src/node/cli/bin.ts consume` loads a TypeScript handler module and runs jobs from Node; SIGTERM lets the job in hand finish and exits 0', async () => {
    const q = queue<{ sleepMs?: number } | null>();
    const emq = await emqConsume(q.name, { args: [join(root, 'src', 'node', 'cli', 'bin.ts')] });
    const ids = [(await q.add(null)).id, ...(await q.addBulk(Array.from({ length: 10 }, () => ({ payload: null })))).map((r) => r.id)];
    await until(async () => Object.keys(await seen(q.name)).length === ids.length, 10_000);
    for (const id of ids) expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: { ran: id, runtime } });
    const last = await q.add({ sleepMs: 500 });
    await until(async () => (await seen(q.name))[last.id] === '1', 5_000);
    expect(await emq.stop('SIGTERM'), emq.output).toEqual({ code: 0, signal: null });
    expect(emq.stderr).toMatch(/SIGTERM: stopping at the settle point[\s\S]*\[emq\] stopped/);
    expect(await q.getJob(last.id)).toMatchObject({ state: 'completed', result: { ran: last.id, runtime } });
    expect(Object.values(await seen(q.name)).every((n) => n === '1')).toBe(true);
    expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  });

  /**
   * A project with echomq installed, as far as bunx sees it: `node_modules/.bin/emq` linked to
   * the bin the global setup built from src/ (a bundle, `#!/usr/bin/env node` first, as
   * dist/node/cli/bin.js is), and `handler.mjs`, which both runtimes load, returning its runtime.
   */
  function projectWithEmq(): string {
    const dir = mkdtempSync(join(tmpdir(), 'echomq-bunx-'));
    scratch.push(dir);
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(inject('emqBin')!, join(dir, 'node_modules', '.bin', 'emq'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `bunx-${randomBytes(3).toString('hex')}`, private: true, type: 'module' }));
    writeFileSync(
      join(dir, 'handler.mjs'),
      'export default async (job) => ({ ran: job.id, runtime: process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}` });\n',
    );
    return dir;
  }

  it('`bunx --bun emq consume` and `bun node_modules/.bin/emq consume` run the installed bin under Bun; plain `bunx emq` honours its node shebang', async () => {
    const dir = projectWithEmq();
    const bunx = join(root, 'node_modules', '.bin', 'bunx');
    const launches = [
      { command: bunx, args: ['--bun', 'emq'], ran: /^bun / },
      { command: BUN, args: ['node_modules/.bin/emq'], ran: /^bun / },
      { command: bunx, args: ['emq'], ran: /^node / },
    ];
    for (const { command, args, ran } of launches) {
      const q = queue<null>();
      const emq = await emqConsume(q.name, { command, args, cwd: dir, handler: './handler.mjs' });
      const { id } = await q.add(null);
      await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
      expect(((await q.getJob(id))?.result as { runtime: string }).runtime, `${command} ${args.join(' ')}`).toMatch(ran);
      // bunx runs the bin as a child of its own, and passes SIGTERM on to it
      expect(await emq.stop('SIGTERM'), emq.output).toEqual({ code: 0, signal: null });
      expect(emq.stderr).toContain('[emq] stopped');
      expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
    }
  });

  it('`emq serve` under Bun answers the API: an enqueue a Bun consumer runs, ?wait for its result, the events stream, a typed 400 and 401; SIGTERM exits 0', async () => {
    const q = queue<{ sleepMs?: number } | null>();
    const token = randomBytes(8).toString('hex');
    const serve = startBun([join(root, 'src', 'node', 'cli', 'bin.ts'), 'serve', '--port', '0'], { REDIS_URL: url, EMQ_TOKEN: token });
    await serve.printed(/^http:\/\/[^\n]+\n/);
    const api = serve.stdout.split('\n')[0]!;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const jobs = `${api}/v1/queues/${q.name}/jobs`;
    const consumer = await bunConsumer(q.name);

    // the events stream, opened first: it must carry the enqueue's job through to completed
    const stop = new AbortController();
    const stream = await fetch(`${api}/v1/queues/${q.name}/events/stream`, { headers, signal: stop.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let sse = '';

    const added = await fetch(jobs, { method: 'POST', headers, body: JSON.stringify({ payload: { sleepMs: 10 } }) });
    expect(added.status).toBe(201);
    const { id } = (await added.json()) as { id: string };
    await until(async () => (await q.getJob(id))?.state === 'completed', 10_000);
    expect(await q.getJob(id)).toMatchObject({ result: { ran: id, runtime } });
    const read = await fetch(`${jobs}/${encodeURIComponent(id)}`, { headers });
    expect(await read.json()).toMatchObject({ id, state: 'completed', result: { ran: id, runtime } });

    const decoder = new TextDecoder();
    while (!sse.includes(`"jobId":"${id}","event":"completed"`)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      sse += decoder.decode(chunk.value, { stream: true });
    }
    expect(sse).toContain(`"jobId":"${id}","event":"completed"`);
    stop.abort();

    // ?wait parks the request on the queue's events (XREAD BLOCK) until the Bun consumer finished
    const waited = await fetch(`${jobs}?wait=10000`, { method: 'POST', headers, body: JSON.stringify({ payload: { sleepMs: 200 } }) });
    expect(waited.status).toBe(200);
    expect(await waited.json()).toMatchObject({ state: 'completed', result: { runtime } });

    const bad = await fetch(jobs, { method: 'POST', headers, body: JSON.stringify({ payload: 1, delayMs: -5 }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'EMQARG' } });
    const malformed = await fetch(jobs, { method: 'POST', headers, body: '{"payload":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: 'EMQARG' } });
    const anonymous = await fetch(jobs, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"payload":1}' });
    expect(anonymous.status).toBe(401);

    expect(await serve.stop('SIGTERM'), serve.output).toEqual({ code: 0, signal: null });
    expect(serve.stderr).toContain('SIGTERM: stopping the API');
    expect(await consumer.stop(), consumer.output).toEqual({ code: 0, signal: null });
    expect(Object.values(await seen(q.name))).toEqual(['1', '1']);
    expect(await checkInvariants(redis.raw, q.name)).toEqual([]);
  });
});
