import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { sleep, useRedis } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');
const cli = join(root, 'src', 'node', 'cli', 'bin.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `emq ...args` as a child process. */
function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Run>; stdout: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

const emq = (args: string[], env?: Record<string, string>): Promise<Run> => start(args, env).done;

describe('the emq CLI', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };

  it('prints its usage with --help (exit 0) and without a command (exit 2)', async () => {
    const help = await emq(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/emq consume <queue> --handler <module>/);
    expect((await emq([])).code).toBe(2);
    const unknown = await emq(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  });

  it('enqueues a job and reads the stats', async () => {
    const queue = redis.queue();
    const added = await emq(['enqueue', queue.name, '{"to":"a@example.com"}', '--group', 'g1', '--delay-ms', '60000'], env);
    expect(added.code).toBe(0);
    const { id, state } = JSON.parse(added.stdout) as { id: string; state: string };
    expect(state).toBe('scheduled');
    expect(await queue.getJob(id)).toMatchObject({ payload: { to: 'a@example.com' }, group: 'g1', state: 'scheduled' });
    const stats = await emq(['stats', queue.name], env);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toEqual({
      queue: queue.name,
      paused: false,
      counts: { pending: 0, scheduled: 1, active: 0, dead: 0, completed: 0 },
    });
    // one shape: what `add` returns and the HTTP API answers, `duplicate` included
    const again = await emq(['enqueue', queue.name, '{"to":"b"}', '--id', 'one'], env);
    expect(JSON.parse(again.stdout)).toEqual({ id: 'JOB:one', state: 'pending' });
    const duplicate = await emq(['enqueue', queue.name, '{"to":"c"}', '--id', 'one'], env);
    expect(duplicate.code).toBe(0);
    expect(JSON.parse(duplicate.stdout)).toEqual({ id: 'JOB:one', state: 'duplicate' });
  });

  it('refuses bad input with exit 2, one line, and writes nothing', async () => {
    const queue = redis.queue();
    for (const args of [
      ['enqueue', queue.name, '{not json'],
      ['enqueue', 'bad name', '1'],
      ['enqueue', queue.name, '1', '--delay-ms', 'soon'],
      ['enqueue', queue.name],
      ['consume', queue.name],
      ['consume', queue.name, '--handler', './no/such/module.mjs'],
    ]) {
      const run = await emq(args, env);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n')[0]).toMatch(/^emq (enqueue|consume): /);
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    expect((await queue.stats()).counts.pending).toBe(0);
  });

  it('says in one line when Redis cannot be reached (exit 1)', async () => {
    const run = await emq(['stats', 'q'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^emq stats: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: /);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('consumes with a handler module, retries a failing job, and stops at the settle point on SIGTERM', async () => {
    const queue = redis.queue();
    await queue.add({ ms: 0 });
    await queue.add({ fail: true }, { maxAttempts: 2, backoff: 0 });
    const { child, done } = start(
      ['consume', queue.name, '--handler', 'test/fixtures/sleep-handler.mjs', '--concurrency', '2', '--beat-ms', '10000'],
      env,
    );
    for (let i = 0; i < 200; i++) {
      const { counts } = await queue.stats();
      if (counts.completed === 1 && counts.dead === 1) break;
      await sleep(25);
    }
    expect((await queue.stats()).counts).toMatchObject({ completed: 1, dead: 1 });

    // a job in hand when SIGTERM arrives finishes before the process exits
    await queue.add({ ms: 400 });
    for (let i = 0; i < 100 && (await queue.stats()).counts.active === 0; i++) await sleep(10);
    child.kill('SIGTERM');
    const run = await done;
    expect(run.code).toBe(0);
    expect((await queue.stats()).counts).toMatchObject({ completed: 2, active: 0, pending: 0 });
    expect(await queue.getJob('JOB:2')).toMatchObject({ state: 'dead', attempt: 2 });
    expect((await queue.getJob('JOB:2'))?.error).toMatch(/^Error: asked to fail \(attempt 2\)/);
  });
});

describe('emq serve', () => {
  const redis = useRedis();

  it('serves the API on loopback without EMQ_TOKEN and requires it when set; SIGTERM stops it', async () => {
    for (const token of [undefined, 'cli-token']) {
      const { child, done, stdout } = start(['serve', '--port', '0'], { REDIS_URL: inject('redisUrl'), ...(token ? { EMQ_TOKEN: token } : {}) });
      let url = '';
      for (let i = 0; i < 400 && !url; i++) {
        await sleep(25);
        url = /^(http:\/\/\S+)$/m.exec(stdout())?.[1] ?? '';
        if (child.exitCode !== null) throw new Error(`emq serve exited: ${(await done).stderr}`);
      }
      const queue = redis.queue();
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
      const res = await fetch(`${url}/v1/queues/${queue.name}/jobs`, { method: 'POST', headers, body: JSON.stringify({ payload: { via: 'serve' } }) });
      expect(res.status).toBe(201);
      expect((await queue.stats()).counts.pending).toBe(1);
      if (token) expect((await fetch(`${url}/v1/queues/${queue.name}`)).status).toBe(401);
      else expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      child.kill('SIGTERM');
      expect((await done).code).toBe(0);
    }
  });
});

describe('the emq bin', () => {
  it('runs when started through a symlink, as npm links bins', async () => {
    const { mkdtempSync, symlinkSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const link = join(mkdtempSync(join(tmpdir(), 'emq-bin-')), 'emq');
    symlinkSync(join(root, 'src', 'node', 'cli', 'bin.ts'), link);
    const child = spawn(process.execPath, ['--import', 'tsx', link, '--help'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/^emq: echomq's command line/);
  });
});
