/**
 * The benchmarks of issue 6: each case for echomq and its anchor (BullMQ, or groupmq for grouped
 * work) on one private Redis in one run. Prints one JSON line per case, implementation and round,
 * then the goals table, and appends the lines to bench/results/<date>.jsonl.
 *
 *   npm run bench                      every case, full size, 3 rounds (about 15 minutes)
 *   npm run bench -- --quick           every case, small, 1 round (a few minutes)
 *   npm run bench -- --smoke           every case once at token sizes, nothing recorded: that each runs (CI)
 *   npm run bench -- --rounds 5        each case 5 times, its implementations back to back
 *   npm run bench -- --case wake-latency [--case ...]
 *   npm run bench -- --redis-url redis://127.0.0.1:6379   a Redis of yours (only bench-* keys are touched)
 *   npm run bench -- --no-record       do not append to bench/results/
 *
 * A case that throws is reported and the run goes on to the next; the run then exits 1, naming
 * every case that failed.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startLocalRedis } from '../src/node/local-redis.js';
import { CASES } from './cases/index.js';
import type { BenchContext, Figures, Impl } from './lib/context.js';
import { figuresTable, goalTable, type Line } from './lib/goals.js';
import { cleanup, serverVersion } from './lib/redis-stats.js';
import { ignoreSocketsOf, installSocketCounter } from './lib/round-trips.js';

interface Args {
  quick: boolean;
  /** Token sizes, one round, nothing recorded (implies quick for a case that sizes nothing for it). */
  smoke: boolean;
  cases: string[];
  impls: Impl[];
  redisUrl: string | undefined;
  record: boolean;
  /** How many times each case runs, its implementations back to back each time (undefined: 3, or 1 with --quick). */
  rounds: number | undefined;
}

/** In a smoke run, a case still running after this long (ms) is hung: the run stops there and fails. */
const SMOKE_CASE_LIMIT_MS = 120_000;

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { quick: false, smoke: false, cases: [], impls: [], redisUrl: undefined, record: true, rounds: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') args.quick = true;
    else if (a === '--smoke') args.smoke = args.quick = true;
    else if (a === '--case') args.cases.push(...value().split(','));
    else if (a === '--impl') args.impls.push(...(value().split(',') as Impl[]));
    else if (a === '--redis-url') args.redisUrl = value();
    else if (a === '--no-record') args.record = false;
    else if (a === '--rounds') {
      args.rounds = Number(value());
      if (!Number.isInteger(args.rounds) || args.rounds < 1) throw new Error('--rounds takes an integer >= 1');
    }
    else if (!a.startsWith('-')) args.cases.push(a);
    else throw new Error(`unknown option ${a} (see bench/run.ts)`);
  }
  const known = new Set(CASES.map((c) => c.name));
  for (const name of args.cases) {
    if (!known.has(name)) throw new Error(`no case ${name}: one of ${[...known].join(', ')}`);
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const benchDir = dirname(fileURLToPath(import.meta.url));
  // REDIS_URL is ignored on purpose: the bench flushes its Redis between cases.
  const server = args.redisUrl
    ? { url: args.redisUrl, pid: undefined, stop: async () => {} }
    : await startLocalRedis({ env: { PATH: process.env.PATH } });
  const privateServer = !args.redisUrl;
  const { hostname, port } = new URL(server.url);
  installSocketCounter(Number(port));
  const admin = new Redis(server.url);
  await admin.ping();
  ignoreSocketsOf(admin);
  const redisVersion = await serverVersion(admin);
  const size = args.smoke ? ', smoke' : args.quick ? ', quick' : '';
  console.error(`# redis ${redisVersion} at ${server.url}${privateServer ? ' (private)' : ''}, node ${process.version}${size}`);
  const ctx: BenchContext = { url: server.url, host: hostname, port: Number(port), admin, quick: args.quick, smoke: args.smoke, benchDir };

  const started = new Date();
  const lines: Line[] = [];
  /** `<case> <impl>` of each run that threw. */
  const failed: string[] = [];
  const selected = CASES.filter((c) => args.cases.length === 0 || args.cases.includes(c.name));
  const rounds = args.rounds ?? (args.quick ? 1 : 3);
  try {
    for (const benchCase of selected) {
      const reason = benchCase.skip?.(ctx);
      if (reason) {
        console.error(`# ${benchCase.name}: skipped (${reason})`);
        continue;
      }
      // each round runs every implementation back to back, so a round's ratio compares them in
      // one state of the machine; the goal table takes the median round
      for (let round = 1; round <= rounds; round++) {
        for (const impl of benchCase.impls) {
          if (args.impls.length > 0 && !args.impls.includes(impl)) continue;
          await cleanup(admin, privateServer);
          const t = performance.now();
          const label = `${benchCase.name} ${impl}${rounds > 1 ? ` round ${round}/${rounds}` : ''}`;
          // a hung case would hold CI for ever; one still running beside the next would skew it
          const watchdog = args.smoke
            ? setTimeout(() => {
                console.error(`# ${label}: FAILED: still running after ${SMOKE_CASE_LIMIT_MS / 1000} s`);
                process.exit(1); // the private Redis goes with it (startLocalRedis kills it on exit)
              }, SMOKE_CASE_LIMIT_MS)
            : undefined;
          let figures: Figures;
          try {
            figures = await benchCase.run(ctx, impl);
          } catch (error) {
            // reported, and the run goes on: one broken case must not hide the state of the others
            failed.push(label);
            console.error(`# ${label}: FAILED after ${((performance.now() - t) / 1000).toFixed(1)} s:`, error);
            continue;
          } finally {
            clearTimeout(watchdog);
          }
          const line: Line = { case: benchCase.name, impl, ...(rounds > 1 ? { round } : {}), ...figures };
          lines.push(line);
          console.log(JSON.stringify(line));
          console.error(`# ${label}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
        }
      }
    }
    await cleanup(admin, privateServer);
  } finally {
    admin.disconnect();
    await server.stop();
  }

  // at token sizes the goals say nothing: only whether each case ran
  if (!args.smoke) {
    console.log('');
    console.log(goalTable(lines));
  }
  console.log('');
  console.log(figuresTable(lines));
  console.error(`# ${selected.length} case(s) in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s`);

  if (args.record && !args.smoke && lines.length > 0) {
    const dir = join(benchDir, 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${started.toISOString().slice(0, 10)}.jsonl`);
    const meta = { run: started.toISOString(), quick: args.quick, redis: redisVersion, node: process.version };
    appendFileSync(file, lines.map((l) => JSON.stringify({ ...l, ...meta })).join('\n') + '\n');
    console.error(`# appended ${lines.length} line(s) to ${file}`);
  }
  if (failed.length > 0) {
    console.error(`# ${failed.length} failed: ${failed.join(', ')}`);
    // a failed case may leave a consumer or a timer of its own running: exit rather than wait on it
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
