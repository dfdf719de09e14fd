/**
 * What telemetry costs on the hot path (README, "Telemetry"): echomq's `add`, `addBulk` and a
 * one-slot consumer's run, in three modes, each in a child process of its own on one private Redis:
 *
 * - `absent`: `@opentelemetry/api` hidden from Node's resolver, as where it is not installed
 *   (test/fixtures/hide-opentelemetry.mjs);
 * - `api`: the API installed, no tracer provider registered (spans are the API's no-ops);
 * - `sdk`: the SDK's BasicTracerProvider registered with a BatchSpanProcessor and an exporter that
 *   drops what it gets: every span is made and recorded.
 *
 * Figures per job: wall time (µs), the process's CPU time (µs, user + system), Redis commands
 * (INFO commandstats). Modes alternate within each round, so they share the machine's mood. Those
 * move with a shared VM's speed; `hook_*_ns` measure what telemetry adds to the hot path without
 * Redis: an enqueue's wrapper (traceSend around a resolved enqueue, less the enqueue called
 * directly) and a consumer's calls per job (startProcess and its end, traceSettles, traceReceive
 * for a claim of one job), in ns per job.
 *
 *   npx tsx bench/telemetry.ts [--rounds 3] [--quick] [--baseline <dir>]
 *
 * `--baseline <dir>`: another checkout (with this file copied into its bench/) measured in mode
 * `absent` too, as `before`: the tree without telemetry.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Queue } from '../src/queue/queue.js';
import { Consumer } from '../src/node/consumer/index.js';
import { IoredisTransport } from '../src/node/ioredis-transport.js';
import { startLocalRedis } from '../src/node/local-redis.js';
import { commandTotal } from './lib/redis-stats.js';

type Mode = 'absent' | 'api' | 'sdk' | 'before';
type Figures = Record<string, number>;

const here = dirname(fileURLToPath(import.meta.url));

/** Runs `fn` over `n` jobs and reports µs of wall and CPU time and commands, per job. */
async function measure(admin: Redis, n: number, fn: () => Promise<void>): Promise<Figures> {
  const commands0 = await commandTotal(admin);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const commands = (await commandTotal(admin)) - commands0;
  const per = (x: number): number => Math.round((x / n) * 100) / 100;
  return { wall_us: per(wall * 1000), cpu_us: per(cpu.user + cpu.system), commands: per(commands) };
}

async function child(mode: Mode, url: string, quick: boolean): Promise<void> {
  if (mode === 'sdk') {
    const { trace } = await import('@opentelemetry/api');
    const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const drop = { export: (_: unknown, done: (r: { code: 0 }) => void) => done({ code: 0 }), shutdown: async () => {} };
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] }));
  }
  const admin = new Redis(url);
  const transport = IoredisTransport.connect(url);
  const name = `bench-otel-${mode}-${process.pid}`;
  const queue = new Queue<{ i: number }>(transport, name, { keepCompletedMs: 0 });
  await queue.add({ i: -1 }); // scripts loaded, the connection up, the API looked for
  const n = quick ? 1_000 : 5_000;
  const add = await measure(admin, n, async () => {
    for (let i = 0; i < n; i++) await queue.add({ i });
  });
  const bulkN = quick ? 5_000 : 50_000;
  const bulk = await measure(admin, bulkN, async () => {
    for (let i = 0; i < bulkN; i += 500) await queue.addBulk(Array.from({ length: 500 }, (_, j) => ({ payload: { i: i + j } })));
  });
  const runN = n + bulkN + 1;
  let completed = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const consumer = new Consumer(IoredisTransport.connect(url), name, () => {}, {
    ownsTransport: true,
    hooks: { onCompleted: () => void (++completed === runN && done()) },
  });
  const run = await measure(admin, runN, async () => {
    consumer.start();
    await finished;
  });
  await consumer.stop();
  await transport.close();
  await admin.del(...(await admin.keys(`emq:{${name}}:*`)), 'emq:queues');
  admin.disconnect();
  const out: Record<string, number | string> = { mode, ...(await hooks(quick)) };
  for (const [what, figures] of Object.entries({ add, bulk, run })) for (const [k, v] of Object.entries(figures)) out[`${what}_${k}`] = v;
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** ns per job that telemetry's entry points add, without Redis (undefined figures in a tree without them). */
async function hooks(quick: boolean): Promise<Figures> {
  const telemetry = await import('../src/telemetry/telemetry.js').catch(() => undefined);
  if (!telemetry) return {};
  const n = quick ? 200_000 : 1_000_000;
  const results = Promise.resolve([{ id: 'JOB:1', state: 'pending' }] as const);
  const send = (): typeof results => results;
  const job = { id: 'JOB:1', payload: null, attempt: 1, maxAttempts: 3, group: undefined, token: 1, createdAt: 0, leaseUntil: 0 };
  const finished = [{ job }];
  const complete = { kind: 'complete' } as const;
  const best = async (fn: () => Promise<void> | void): Promise<number> => {
    let low = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      await fn();
      low = Math.min(low, ((performance.now() - t0) * 1e6) / n);
    }
    return low;
  };
  const direct = await best(async () => {
    for (let i = 0; i < n; i++) await send();
  });
  const wrapped = await best(async () => {
    for (let i = 0; i < n; i++) await telemetry.traceSend('q', 1, undefined, send);
  });
  const consumer = await best(() => {
    for (let i = 0; i < n; i++) {
      const span = telemetry.startProcess('q', job);
      span?.end(complete);
      telemetry.traceSettles('q', 0, finished, ['completed']);
      telemetry.traceReceive('q', 0, [job]);
    }
  });
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { hook_add_ns: r(wrapped - direct), hook_run_ns: r(consumer) };
}

function runChild(mode: Mode, url: string, quick: boolean, root: string): Promise<Record<string, number | string>> {
  const hide = mode === 'absent' || mode === 'before' ? ['--import', join(here, '..', 'test', 'fixtures', 'hide-opentelemetry.mjs')] : [];
  const args = [...hide, '--import', 'tsx', join(root, 'bench', 'telemetry.ts'), '--child', mode === 'before' ? 'absent' : mode, url, ...(quick ? ['--quick'] : [])];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.on('exit', (code) => (code === 0 ? resolve({ ...JSON.parse(stdout), mode }) : reject(new Error(`${mode}: exit ${code}`))));
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const quick = argv.includes('--quick');
  if (argv[0] === '--child') return child(argv[1] as Mode, argv[2]!, quick);
  const rounds = Number(argv[argv.indexOf('--rounds') + 1] ?? 3) || 3;
  const baseline = argv.includes('--baseline') ? argv[argv.indexOf('--baseline') + 1] : undefined;
  const server = await startLocalRedis({ env: { PATH: process.env.PATH } });
  const modes: Mode[] = baseline ? ['before', 'absent', 'api', 'sdk'] : ['absent', 'api', 'sdk'];
  const lines: Array<Record<string, number | string>> = [];
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of modes) {
        const line = await runChild(mode, server.url, quick, mode === 'before' ? baseline! : join(here, '..'));
        console.log(JSON.stringify({ round: r + 1, ...line }));
        lines.push(line);
      }
    }
  } finally {
    await server.stop();
  }
  const median = (xs: number[]): number | string => (xs.length === 0 ? '-' : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const keys = [...new Set(lines.flatMap((l) => Object.keys(l)))].filter((k) => k !== 'mode');
  console.log(`\n| figure (per job, median of ${rounds}) | ${modes.join(' | ')} |\n|---|${modes.map(() => '---:').join('|')}|`);
  for (const key of keys) {
    const of = (m: Mode): number[] => lines.filter((l) => l.mode === m && l[key] !== undefined).map((l) => Number(l[key]));
    console.log(`| ${key} | ${modes.map((m) => median(of(m))).join(' | ')} |`);
  }
}

await main(process.argv.slice(2));
