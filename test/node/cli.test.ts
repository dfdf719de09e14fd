import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/node/cli/cli.js';
import { DENO_JSON } from '../../src/node/cli/init-deno.js';
import { LAMBDA_ENTRY } from '../../src/node/cli/init-lambda.js';
import { NETLIFY_API_FUNCTION, NETLIFY_BEAT_FUNCTION } from '../../src/node/cli/init-netlify.js';
import { VERCEL_API_ROUTE, VERCEL_CRON_ROUTE, VERCEL_JSON } from '../../src/node/cli/init-vercel.js';
import { isScheduledEvent } from '../../src/lambda/handler.js';
import { freePort, startLocalRedis } from '../../src/node/local-redis.js';
import { cli, emq, root, type Run, startEmq } from '../cli-run.js';
import { passwordRedis, silentPort } from '../fixtures/unreachable.js';
import { queueName, sleep, until, useRedis } from '../helpers.js';

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
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"\n/);
    const inherited = await emq(['toString']);
    expect(inherited.code).toBe(2);
    expect(inherited.stderr).toMatch(/unknown command "toString"\n/);
  });

  it('names the nearest command or option for a typo (exit 2)', async () => {
    const runs: Array<Promise<void>> = [];
    const command = await emq(['consme', 'mail']);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/^emq: unknown command "consme": did you mean consume\?\n/);
    for (const [args, line] of [
      [['consume', 'mail', '--handler', 'h.mjs', '--concurency', '2'], 'emq consume: unknown option --concurency: did you mean --concurrency?'],
      [['enqueue', 'mail', '{}', '--delay', '5'], 'emq enqueue: unknown option --delay: did you mean --delay-ms?'],
      [['serve', '--prot', '1'], 'emq serve: unknown option --prot: did you mean --port?'],
      [['init', 'wroker'], 'emq init: init writes worker or lambda or vercel or netlify or deno, not "wroker": did you mean worker?'],
      [['stats', 'mail', '--verbose'], 'emq stats: unknown option --verbose'],
    ] as const) {
      runs.push(emq([...args]).then((run) => {
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr.split('\n')[0]).toBe(line);
      }));
    }
    await Promise.all(runs);
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
      counts: { pending: 0, scheduled: 1, active: 0, dead: 0, completed: 0, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 },
      rateLimits: { queue: null, groups: {}, throttled: [] },
      lastHour: { minute: expect.any(Number), completed: new Array(60).fill(0), dead: new Array(60).fill(0) },
    });
    // one shape: what `add` returns and the HTTP API answers, `duplicate` included
    const again = await emq(['enqueue', queue.name, '{"to":"b"}', '--id', 'one'], env);
    expect(JSON.parse(again.stdout)).toEqual({ id: 'JOB:one', state: 'pending' });
    const duplicate = await emq(['enqueue', queue.name, '{"to":"c"}', '--id', 'one'], env);
    expect(duplicate.code).toBe(0);
    expect(JSON.parse(duplicate.stdout)).toEqual({ id: 'JOB:one', state: 'duplicate' });
  });

  it('enqueues with a dedupe key: a duplicate, a replace, and usage errors for bad values that write nothing', async () => {
    const queue = redis.queue();
    const add = async (...args: string[]): Promise<unknown> => {
      const run = await emq(['enqueue', queue.name, ...args], env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      return JSON.parse(run.stdout);
    };
    expect(await add('{"v":1}', '--dedupe-key', 'doc:7', '--dedupe-ttl-ms', '60000', '--delay-ms', '60000')).toEqual({ id: 'JOB:1', state: 'scheduled' });
    expect(await add('{"v":2}', '--dedupe-key', 'doc:7')).toEqual({ id: 'JOB:1', state: 'duplicate' });
    // debounce: no delay given, so the replaced job is claimable now
    expect(await add('{"v":3}', '--dedupe-key', 'doc:7', '--replace')).toEqual({ id: 'JOB:1', state: 'replaced' });
    expect(await queue.getJob('JOB:1')).toMatchObject({ state: 'pending', payload: { v: 3 } });

    const other = redis.queue();
    const runs = await Promise.all(
      [
        ['--dedupe-key', ''],
        ['--dedupe-key', 'k', '--dedupe-ttl-ms', '0'],
        ['--dedupe-key', 'k', '--dedupe-ttl-ms', 'soon'],
        ['--dedupe-ttl-ms', '100'],
        ['--replace'],
        ['--dedupe-key', 'k', '--id', 'mine'],
        ['--dedupe-key', 'k', '--replace=yes'],
      ].map(async (args) => [args, await emq(['enqueue', other.name, '1', ...args], env)] as const),
    );
    for (const [args, run] of runs) {
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n')[0], args.join(' ')).toMatch(/^emq enqueue: .*(dedupe|replace|id)/);
    }
    expect(await redis.raw.keys(`emq:{${other.name}}:*`)).toEqual([]);
  });

  it('refuses bad input with exit 2, one line, and writes nothing', async () => {
    const queue = redis.queue();
    for (const args of [
      ['enqueue', queue.name, '{not json'],
      ['enqueue', 'bad name', '1'],
      ['enqueue', queue.name, '1', '--delay-ms', 'soon'],
      ['enqueue', queue.name],
      ['consume', queue.name],
    ]) {
      const run = await emq(args, env);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n')[0]).toMatch(/^emq (enqueue|consume): /);
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    expect((await queue.stats()).counts.pending).toBe(0);
  });

  it('fails with exit 1, in one line, on a handler module it cannot load', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-handler-'));
    writeFileSync(join(dir, 'no-default.mjs'), 'export const handler = () => {};\n');
    writeFileSync(join(dir, 'broken.mjs'), 'export default (job) => {\n');
    const runs: Array<Promise<void>> = [];
    for (const [module, message] of [
      ['./no/such/module.mjs', /^emq consume: cannot load handler module \.\/no\/such\/module\.mjs: Cannot find module/],
      [join(dir, 'no-default.mjs'), /^emq consume: handler module .*no-default\.mjs has no default export function$/],
      [join(dir, 'broken.mjs'), /^emq consume: cannot load handler module .*broken\.mjs: /],
    ] as const) {
      runs.push(emq(['consume', 'mail', '--handler', module], env).then((run) => {
        expect(run.code, module).toBe(1);
        expect(run.stderr.trim(), module).toMatch(message);
        expect(run.stderr.trim().split('\n'), module).toHaveLength(1);
      }));
    }
    await Promise.all(runs);
  });

  it('says in one line when Redis cannot be reached (exit 1)', async () => {
    const run = await emq(['stats', 'q'], { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '300' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(/^emq stats: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 within 300 ms: connection refused \(/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('consumes with a handler module, retries a failing job, and stops at the settle point on SIGTERM', async () => {
    const queue = redis.queue();
    await queue.add({ ms: 0 });
    await queue.add({ fail: true }, { maxAttempts: 2, backoff: 0 });
    const { child, done } = startEmq(
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

describe('emq in process (main)', () => {
  const redis = useRedis();
  const sockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TCPServerWrap').length;
  /** The open sockets once those closing have gone (a closed connection goes a tick after its close resolves). */
  const settled = async (before: number): Promise<number> => {
    for (let i = 0; i < 200 && sockets() > before; i++) await sleep(10);
    return sockets();
  };

  it('refuses a consume it cannot run and a serve whose port is taken, and leaves no connection open', async () => {
    const saved = { REDIS_URL: process.env.REDIS_URL, EMQ_TOKEN: process.env.EMQ_TOKEN };
    process.env.REDIS_URL = inject('redisUrl');
    delete process.env.EMQ_TOKEN;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as { port: number }).port);
    try {
      const handler = join(root, 'test', 'fixtures', 'sleep-handler.mjs');
      const queue = redis.queue();
      // the file's other suites may still be closing their connections: count once that is over
      let before = sockets();
      for (let stable = 0; stable < 10; ) {
        await sleep(20);
        stable = sockets() === before ? stable + 1 : 0;
        before = sockets();
      }
      // each used to connect to Redis before the Queue or the Consumer refused, and never closed
      // that connection; a lease past 2^31 - 1 ms started a consumer
      for (const args of [
        ['consume', 'a b', '--handler', handler],
        ['consume', queue.name, '--handler', handler, '--concurrency=0'],
        ['consume', queue.name, '--handler', handler, '--lease-ms', '2147483648'],
      ]) {
        expect(await main(args), args.join(' ')).toBe(2);
        expect(await settled(before), args.join(' ')).toBe(before);
      }
      // the API's connection stayed open when its port was taken
      expect(await main(['serve', '--port', port])).toBe(1);
      expect(await settled(before)).toBe(before);

    } finally {
      taken.close();
      stderr.mockRestore();
      stdout.mockRestore();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('emq in process: unknown commands', () => {
  it('refuses a command named like a property of every object (exit 2)', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      // each ran Object.prototype's function of that name, and main resolved to what it returned
      // ('[object Undefined]', an object, a boolean) instead of an exit code
      for (const command of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf']) {
        expect(await main([command, 'x']), command).toBe(2);
      }
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('emq serve', () => {
  const redis = useRedis();

  it('serves the API on loopback without EMQ_TOKEN and requires it when set; SIGTERM stops it', async () => {
    for (const token of [undefined, 'cli-token']) {
      const { child, done, stdout } = startEmq(['serve', '--port', '0'], { REDIS_URL: inject('redisUrl'), ...(token ? { EMQ_TOKEN: token } : {}) });
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
    symlinkSync(cli, link);
    const run = await emq(['--help'], {}, { bin: link });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^emq: echomq's command line/);
  });
});

describe('emq against a Redis it cannot reach', () => {
  let silent: Awaited<ReturnType<typeof silentPort>>;
  let locked: Awaited<ReturnType<typeof passwordRedis>>;
  let closed: number;
  beforeAll(async () => {
    silent = await silentPort();
    locked = await passwordRedis('cli-s3cret');
    closed = await freePort();
  });
  afterAll(async () => {
    await silent.close();
    await locked.stop();
  });

  it('consume, enqueue and stats exit 1 within REDIS_CONNECT_TIMEOUT_MS, with one line naming the URL and the cause', async () => {
    const handler = ['--handler', 'test/fixtures/sleep-handler.mjs'];
    const cases: Array<{ url: string; shown: string; cause: RegExp }> = [
      { url: `redis://127.0.0.1:${closed}`, shown: `redis://127.0.0.1:${closed} within 700 ms`, cause: /connection refused \(connect ECONNREFUSED/ },
      { url: `redis://127.0.0.1:${silent.port}`, shown: `redis://127.0.0.1:${silent.port} within 700 ms`, cause: /no answer/ },
      { url: 'redis://nonexistent.invalid:6379', shown: 'redis://nonexistent.invalid:6379 within 700 ms', cause: /host name not found/ },
      { url: `redis://:wrong@127.0.0.1:${locked.port}`, shown: `redis://:***@127.0.0.1:${locked.port}`, cause: /authentication failed \(WRONGPASS/ },
    ];
    // one URL at a time, its three commands at once: a dozen tsx starts at once would swamp 2 cores
    for (const { url, shown, cause } of cases) {
      await Promise.all(
        [['consume', 'q', ...handler], ['enqueue', 'q', '{"to":"a@example.com"}'], ['stats', 'q']].map(async (args) => {
          const started = performance.now();
          const run = await emq(args, { REDIS_URL: url, REDIS_CONNECT_TIMEOUT_MS: '700' });
          const ms = performance.now() - started;
          const label = `${args[0]} ${url}`;
          expect(run.code, label).toBe(1);
          const lines = run.stderr.trim().split('\n');
          expect(lines, label).toHaveLength(1);
          expect(lines[0], label).toMatch(new RegExp(`^emq ${args[0]}: cannot reach Redis at `));
          expect(lines[0], label).toContain(`cannot reach Redis at ${shown}: `);
          expect(lines[0], label).toMatch(cause);
          expect(lines[0], label).not.toContain('wrong');
          // the child's own start (tsx) takes a second or more on a busy machine; without the
          // bound, ioredis gave up after about 75 s
          expect(ms, label).toBeLessThan(700 + 10_000);
        }),
      );
    }
  }, 90_000);

  it('refuses a REDIS_CONNECT_TIMEOUT_MS that is no number (exit 2)', async () => {
    const run = await emq(['stats', 'q'], { REDIS_URL: `redis://127.0.0.1:${closed}`, REDIS_CONNECT_TIMEOUT_MS: 'soon' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^emq stats: REDIS_CONNECT_TIMEOUT_MS takes a whole number of ms >= 1, got "soon"/);
  });

  it('consume, once started, rides out an outage: lost and back once each, then stops with exit 0', async () => {
    const port = await freePort();
    const env = { PATH: process.env.PATH };
    let server = await startLocalRedis({ env, port });
    const { child, done, stderr } = startEmq(
      ['consume', queueName(), '--handler', 'test/fixtures/sleep-handler.mjs', '--beat-ms', '300'],
      { REDIS_URL: server.url, REDIS_CONNECT_TIMEOUT_MS: '500' },
    );
    try {
      await until(() => /connected to /.test(stderr()), 15_000);
      await server.stop();
      await sleep(3_000);
      expect(child.exitCode).toBeNull();
      server = await startLocalRedis({ env, port });
      await until(() => / is back after /.test(stderr()), 10_000);
    } finally {
      child.kill('SIGTERM');
      await server.stop();
    }
    const run = await done;
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split('\n');
    expect(lines.filter((l) => l.includes(': connected to '))).toHaveLength(1);
    expect(lines.filter((l) => l.includes(`: lost ${server.url}: cannot reach Redis at ${server.url}`))).toHaveLength(1);
    expect(lines.filter((l) => l.includes(` is back after `))).toHaveLength(1);
    expect(run.stderr).not.toMatch(/max retries per request|redis: /);
  }, 40_000);
});

describe('emq init worker', () => {
  const init = (dir: string, ...args: string[]): Promise<Run> => emq(['init', 'worker', ...args], {}, { cwd: dir });

  it('writes wrangler.toml and workers/index.ts into the current directory, named after it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'emq-init-')), 'My Shop');
    mkdirSync(dir);
    const run = await init(dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/wrote wrangler\.toml and workers\/index\.ts/);
    const toml = readFileSync(join(dir, 'wrangler.toml'), 'utf8');
    expect(toml).toMatch(/^name = "my-shop"$/m);
    expect(toml).toMatch(/^main = "workers\/index\.ts"$/m);
    expect(toml).toMatch(/^minify = true$/m);
    expect(toml).toMatch(/^crons = \["\* \* \* \* \*"\]$/m);
    // the same compatibility date as the project's own Worker, which the tests build and run
    const date = /^compatibility_date = "[\d-]+"$/m;
    expect(date.exec(toml)?.[0]).toBe(date.exec(readFileSync(join(root, 'wrangler.toml'), 'utf8'))?.[0]);
    expect(readFileSync(join(dir, 'workers', 'index.ts'), 'utf8')).toMatch(/createWorker<Payloads>/);
  });

  it('refuses to overwrite either file (exit 1, nothing written) unless --force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-init-'));
    mkdirSync(join(dir, 'workers'));
    writeFileSync(join(dir, 'workers', 'index.ts'), '// mine\n');
    const refused = await init(dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe('emq init: workers/index.ts already exists: nothing written (--force overwrites)');
    expect(existsSync(join(dir, 'wrangler.toml'))).toBe(false);
    expect(readFileSync(join(dir, 'workers', 'index.ts'), 'utf8')).toBe('// mine\n');

    const forced = await init(dir, '--force', '--name', 'edge-jobs');
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, 'wrangler.toml'), 'utf8')).toMatch(/^name = "edge-jobs"$/m);
    expect(readFileSync(join(dir, 'workers', 'index.ts'), 'utf8')).toMatch(/createWorker/);
  });

  it('takes a platform and nothing else (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-init-'));
    await Promise.all(
      [['init'], ['init', 'worker', 'extra'], ['init', 'consumer'], ['init', 'constructor']].map(async (args) => {
        const run = await emq(args, {}, { cwd: dir });
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toMatch(/^emq init: init (takes what to write: worker or lambda or vercel or netlify or deno|writes worker or lambda or vercel or netlify or deno, not "(consumer|constructor)")\n/);
      }),
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('emq init lambda', () => {
  it('writes template.yaml (SAM: a Function URL, a beat a minute) and src/handler.ts, and refuses to overwrite them unless --force', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'emq-init-')), 'Mail Jobs');
    mkdirSync(dir);
    const run = await emq(['init', 'lambda'], {}, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/wrote template\.yaml and src\/handler\.ts; next: sam build/);
    const template = parseYaml(readFileSync(join(dir, 'template.yaml'), 'utf8'), { customTags: CLOUDFORMATION_TAGS }) as SamTemplate;
    const fn = template.Resources.QueueFunction.Properties;
    expect(fn.FunctionName).toBe('mail-jobs');
    expect(`${fn.CodeUri}${fn.Handler.split('.')[0]}.ts`).toBe('src/handler.ts');
    expect(fn.Handler.split('.')[1]).toBe('handler');
    expect(fn.Events.Beat).toEqual({ Type: 'ScheduleV2', Properties: { ScheduleExpression: 'rate(1 minute)', Input: '{"emq":"beat"}' } });
    // the beat's deadline fits inside the function's timeout, with the adapter's 2 s margin
    expect(Number(fn.Environment.Variables.EMQ_BEAT_DEADLINE_MS)).toBeLessThanOrEqual(fn.Timeout * 1000 - 2_000);
    expect(isScheduledEvent(JSON.parse(fn.Events.Beat.Properties.Input))).toBe(true);
    expect(readFileSync(join(dir, 'src', 'handler.ts'), 'utf8')).toBe(LAMBDA_ENTRY);

    const refused = await emq(['init', 'lambda'], {}, { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe('emq init: template.yaml and src/handler.ts already exist: nothing written (--force overwrites)');
    const forced = await emq(['init', 'lambda', '--force', '--name', 'billing'], {}, { cwd: dir });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, 'template.yaml'), 'utf8')).toMatch(/FunctionName: billing$/m);
  });
});

describe('emq init vercel, netlify and deno', () => {
  it('each writes its platform\'s files, the same again refused (exit 1, nothing written) unless --force', async () => {
    const expected: Record<string, string[]> = {
      vercel: ['app/api/emq/[...path]/route.ts', 'app/api/emq-cron/route.ts', 'vercel.json'],
      netlify: ['netlify/functions/emq.ts', 'netlify/functions/emq-beat.ts'],
      deno: ['main.ts', 'deno.json'],
    };
    for (const [kind, paths] of Object.entries(expected)) {
      const dir = mkdtempSync(join(tmpdir(), `emq-init-${kind}-`));
      const run = await emq(['init', kind], {}, { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`wrote ${paths.join(' and ')}; next: `);
      for (const path of paths) expect(existsSync(join(dir, path)), path).toBe(true);
      const refused = await emq(['init', kind], {}, { cwd: dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/already exist: nothing written \(--force overwrites\)/);
      expect((await emq(['init', kind, '--force'], {}, { cwd: dir })).code).toBe(0);
    }
  });

  it('writes what the platforms read: the cron Vercel calls is the route written, Netlify\'s schedule and path, Deno\'s cron flag', async () => {
    const vercel = JSON.parse(VERCEL_JSON) as { crons: Array<{ path: string; schedule: string }> };
    expect(vercel.crons).toEqual([{ path: '/api/emq-cron', schedule: '* * * * *' }]);
    expect(VERCEL_CRON_ROUTE).toMatch(/export const \{ cron: GET \}/);
    expect(VERCEL_API_ROUTE).toMatch(/basePath: '\/api\/emq'/);
    expect(NETLIFY_API_FUNCTION).toMatch(/export const config = \{ path: '\/api\/emq\/\*' \}/);
    expect(NETLIFY_BEAT_FUNCTION).toMatch(/export const config = \{ schedule: '\* \* \* \* \*' \}/);
    expect(JSON.parse(DENO_JSON)).toMatchObject({ unstable: ['cron'], tasks: { start: expect.stringContaining('--allow-net --allow-env') } });
  });
});

/** The part of a SAM template `emq init lambda` writes that the test reads. */
interface SamTemplate {
  Resources: {
    QueueFunction: {
      Properties: {
        FunctionName: string;
        CodeUri: string;
        Handler: string;
        Timeout: number;
        Environment: { Variables: Record<string, string> };
        Events: { Beat: { Type: string; Properties: { ScheduleExpression: string; Input: string } } };
      };
    };
  };
}

/** CloudFormation's short-form functions (`!Ref`, `!GetAtt`), read as plain values. */
const CLOUDFORMATION_TAGS = ['!Ref', '!GetAtt', '!Sub'].map((tag) => ({ tag, resolve: (value: string) => ({ [tag]: value }) }));
