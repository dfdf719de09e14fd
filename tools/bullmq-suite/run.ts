/**
 * Runs BullMQ's own shared test files against `echomq/bullmq` (issue 36).
 *
 *   npx tsx tools/bullmq-suite/run.ts [--bullmq <checkout or bare git dir>] [--commit <sha>]
 *     [--file worker ...] [--jobs 2] [--timeout-ms 10000]
 *
 * It extracts the chosen `tests/<file>.test.ts` and `tests/utils/*` from BullMQ's git (a checkout
 * or a bare mirror) into a temp dir outside this repo, writes shims there that point BullMQ's
 * `../src/...` imports at this repo's `src/bullmq/index.ts`, starts a private redis-server,
 * runs this repo's vitest over them with a JSON report, and writes `results.json` beside this
 * file. Nothing of BullMQ's is written into the repo. Then it compares the failures with
 * `expected-failures.json`: a failure not listed, or a listed test now passing, exits 1.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCommandLine } from 'node:util';
import { startLocalRedis } from '../../src/node/local-redis.js';
import { unstatedReasons } from './reasons.js';
import { gitRunner } from '../git-runner.js';
import type { FileSummary } from '../file-summary.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

/** The 13 focus suites' shared files (the `.redis.test.ts` ones read BullMQ's raw keys by design). */
export const FOCUS_FILES = [
  'worker', 'job', 'getters', 'clean', 'queue', 'deduplication', 'rate_limiter',
  'events', 'pause', 'delay', 'flow', 'bulk', 'obliterate',
] as const;

interface Args {
  bullmq: string;
  commit: string;
  files: string[];
  jobs: number;
  timeoutMs: number;
  keep: boolean;
}

/** The command line (node:util's parseArgs): `--file a b` names several files, as `--file a --file b` does. */
function parseArgs(argv: readonly string[]): Args {
  const { values, positionals } = parseCommandLine({
    args: [...argv],
    allowPositionals: true,
    options: {
      bullmq: { type: 'string', default: process.env.BULLMQ_GIT ?? '' },
      commit: { type: 'string', default: 'HEAD' },
      file: { type: 'string', multiple: true, default: [] },
      jobs: { type: 'string', default: '2' },
      'timeout-ms': { type: 'string', default: '10000' },
      keep: { type: 'boolean', default: false },
    },
  });
  if (values.bullmq === '') throw new Error('say where BullMQ\'s repository is: --bullmq <a checkout or bare git dir of github.com/taskforcesh/bullmq> (or BULLMQ_GIT)');
  const files = [...values.file, ...positionals].map((f) => f.replace(/\.test\.ts$/, ''));
  return {
    bullmq: values.bullmq,
    commit: values.commit,
    files: files.length > 0 ? files : [...FOCUS_FILES],
    jobs: Number(values.jobs),
    timeoutMs: Number(values['timeout-ms']),
    keep: values.keep,
  };
}

const bullmqIndex = join(repo, 'src/bullmq/index.ts');

/** The shims: BullMQ's `../src/...` modules the shared tests import, answered by the layer. */
function shims(): Record<string, string> {
  const classes = `export * from ${JSON.stringify(bullmqIndex)};\n`;
  const types = `export type { JobsOptions, KeepJobs, BulkJobOptions, BackoffOptions, DeduplicationOptions, FlowJob, JobState, JobType, FinishedStatus, RepeatOptions, ConnectionOptions, QueueBaseOptions, QueueOptions, WorkerOptions } from ${JSON.stringify(bullmqIndex)};\n`;
  const interfaces = [
    'export type IRedisClient = any;',
    'export type RedisClient = any;',
    'export type MinimalJob = any;',
    types.trim(),
    '',
  ].join('\n');
  const utils = [
    "export { randomUUID } from 'node:crypto';",
    'export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));',
    '/** BullMQ\'s semver compare; echomq needs Redis 7+, so the harness answers from the server\'s INFO. */',
    'export function isRedisVersionLowerThan(current: string, minimum: string): boolean {',
    "  const a = String(current).split('.').map(Number); const b = String(minimum).split('.').map(Number);",
    '  for (let i = 0; i < 3; i++) { if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0); }',
    '  return false;',
    '}',
    '',
  ].join('\n');
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  return {
    'src/index.ts': classes,
    'src/classes.ts': classes,
    'src/classes/index.ts': classes,
    'src/types.ts': types,
    'src/types/index.ts': types,
    'src/interfaces.ts': interfaces,
    'src/interfaces/index.ts': interfaces,
    'src/interfaces/redis-client.ts': interfaces,
    'src/utils.ts': utils,
    'src/utils/index.ts': utils,
    'src/version.ts': `export const version = ${JSON.stringify(pkg.version)};\n`,
    // BullMQ's helper reaches a backend's raw client (`getBackend().client`), which the layer does
    // not have: answer a plain ioredis client on the same server, so tests reading raw keys run
    // (and fail on BullMQ's key layout, which echomq does not keep).
    'tests/utils/get-redis-client.ts': [
      "import { createTestConnection } from './connection-factory';",
      'let shared: any;',
      'const client = (): any => (shared ??= createTestConnection());',
      'export const getRedisClient = (_target: any): Promise<any> => Promise.resolve(client());',
      'export const getBlockingRedisClient = (_target: any): Promise<any> => Promise.resolve(client());',
      'export const getRedisConnection = (_target: any): any => ({ client: Promise.resolve(client()) });',
      'export const getBlockingRedisConnection = (_target: any): any => ({ client: Promise.resolve(client()) });',
      "export const getRedisVersion = (_target: any): string => '7.0.0';",
      "export const getDatabaseType = (_target: any): string => 'redis';",
      '',
    ].join('\n'),
    // sinon is not one of echomq's dev dependencies: the few calls the shared files make
    // (sandbox stubs, fake timers), on vitest's `vi`.
    'shims/sinon.ts': [
      "import { vi } from 'vitest';",
      'type Restore = () => void;',
      'function makeStub(obj: any, method: string, restores: Restore[]): any {',
      '  const original = obj[method];',
      '  let impl: (...a: any[]) => any = () => undefined;',
      '  const stub: any = function (this: any, ...a: any[]) { stub.callCount++; stub.args.push(a); return impl.apply(this, a); };',
      '  stub.callCount = 0; stub.args = [];',
      '  stub.resolves = (v?: any) => { impl = () => Promise.resolve(v); return stub; };',
      '  stub.rejects = (e?: any) => { impl = () => Promise.reject(e); return stub; };',
      '  stub.returns = (v?: any) => { impl = () => v; return stub; };',
      '  stub.callsFake = (f: any) => { impl = f; return stub; };',
      '  stub.withArgs = () => stub;',
      '  stub.restore = () => { obj[method] = original; };',
      '  Object.defineProperty(stub, "called", { get: () => stub.callCount > 0 });',
      '  obj[method] = stub; restores.push(stub.restore);',
      '  return stub;',
      '}',
      'function sandbox() {',
      '  const restores: Restore[] = [];',
      '  return {',
      '    stub: (obj: any, method: string) => makeStub(obj, method, restores),',
      '    restore: () => { while (restores.length) restores.pop()!(); },',
      '  };',
      '}',
      'const root = sandbox();',
      'let faked = false;',
      'export const createSandbox = sandbox;',
      'export const stub = root.stub;',
      'export function restore(): void { root.restore(); if (faked) { vi.useRealTimers(); faked = false; } }',
      'export function useFakeTimers(opts?: any): any {',
      '  vi.useFakeTimers(opts?.toFake ? { toFake: opts.toFake } : undefined); faked = true;',
      '  return { tick: (ms: number) => vi.advanceTimersByTime(ms), reset: () => vi.clearAllTimers(), restore: () => { vi.useRealTimers(); faked = false; } };',
      '}',
      'export default { createSandbox, stub, restore, useFakeTimers };',
      '',
    ].join('\n'),
  };
}

function setupFile(url: string): string {
  return [
    "import { afterAll } from 'vitest';",
    "import { Redis } from 'ioredis';",
    "import { setConnectionFactory } from '../tests/utils/connection-factory';",
    `const url = new URL(${JSON.stringify(url)});`,
    'const opened: Redis[] = [];',
    'setConnectionFactory((opts?: { host?: string; port?: number }) => {',
    '  const client = new Redis({ host: opts?.host ?? url.hostname, port: opts?.port ?? Number(url.port), maxRetriesPerRequest: null });',
    '  opened.push(client);',
    '  return client as any;',
    '});',
    'afterAll(() => { for (const c of opened) c.disconnect(); });',
    '',
  ].join('\n');
}

function vitestConfig(dir: string, files: readonly string[], args: Args): string {
  return [
    "import { defineConfig } from 'vitest/config';",
    'export default defineConfig({',
    `  root: ${JSON.stringify(dir)},`,
    `  cacheDir: ${JSON.stringify(join(dir, '.vite'))},`,
    `  resolve: { alias: { sinon: ${JSON.stringify(join(dir, 'shims/sinon.ts'))} } },`,
    '  test: {',
    `    include: ${JSON.stringify(files.map((f) => `tests/${f}.test.ts`))},`,
    `    setupFiles: [${JSON.stringify(join(dir, 'harness/setup.ts'))}],`,
    `    testTimeout: ${args.timeoutMs}, hookTimeout: ${args.timeoutMs}, teardownTimeout: 5000,`,
    `    fileParallelism: ${args.jobs > 1}, maxWorkers: ${Math.max(1, args.jobs)},`,
    '    pool: "forks",',
    '  },',
    '});',
    '',
  ].join('\n');
}

interface AssertionResult {
  fullName: string;
  status: string;
  duration?: number;
  failureMessages?: string[];
}
interface FileResult {
  name: string;
  status: string;
  message?: string;
  assertionResults: AssertionResult[];
}

export interface Expected {
  bullmqCommit: string;
  failures: { file: string; test: string; reason: string }[];
}

function firstLine(message: string | undefined): string {
  return (message ?? '').split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 300) ?? '';
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const git = gitRunner(args.bullmq);
  const sha = git('rev-parse', `${args.commit}^{commit}`).trim();
  const dir = mkdtempSync(join(tmpdir(), 'emq-bullmq-suite-'));
  const write = (rel: string, text: string): void => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  console.log(`bullmq ${sha} -> ${dir}`);

  const utils = git('ls-tree', '--name-only', `${sha}:tests/utils`).split('\n').filter(Boolean);
  for (const u of utils) write(`tests/utils/${u}`, git('show', `${sha}:tests/utils/${u}`));
  for (const f of args.files) write(`tests/${f}.test.ts`, git('show', `${sha}:tests/${f}.test.ts`));
  for (const [rel, text] of Object.entries(shims())) write(rel, text);
  write('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: false } }));
  write('package.json', JSON.stringify({ name: 'emq-bullmq-suite', private: true, type: 'module' }));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');

  const env = { ...process.env };
  delete env.REDIS_URL; // a private server, never a shared one
  const redis = await startLocalRedis({ env, log: (l) => console.log(l) });
  write('harness/setup.ts', setupFile(redis.url));
  write('vitest.config.mts', vitestConfig(dir, args.files, args));

  const reportPath = join(dir, 'report.json');
  const started = Date.now();
  try {
    const code = await new Promise<number>((done) => {
      const child = spawn(
        process.execPath,
        [join(repo, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.mts'), '--reporter=json', `--outputFile=${reportPath}`, '--reporter=dot'],
        { cwd: dir, stdio: 'inherit', env: { ...env, BULLMQ_TEST_PREFIX: '' } },
      );
      child.on('exit', (c) => done(c ?? 1));
    });
    console.log(`vitest exited ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    await redis.stop();
  }
  if (!existsSync(reportPath)) {
    console.error('vitest wrote no report');
    return 2;
  }
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as { testResults: FileResult[] };
  const files: Record<string, FileSummary> = {};
  const messages: Record<string, Record<string, string>> = {};
  for (const r of report.testResults) {
    const file = r.name.replace(/^.*\/tests\//, '').replace(/\.test\.ts$/, '');
    const s: FileSummary = { tests: 0, passed: 0, failed: 0, skipped: 0, failing: [] };
    messages[file] = {};
    for (const a of r.assertionResults) {
      s.tests++;
      if (a.status === 'passed') s.passed++;
      else if (a.status === 'failed') {
        s.failed++;
        s.failing.push(a.fullName);
        const message = a.failureMessages?.[0] ?? '';
        // vitest reports a timeout as the test's own stack, `Error: STACK_TRACE_ERROR`.
        messages[file]![a.fullName] = message.startsWith('Error: STACK_TRACE_ERROR')
          ? `timed out after ${Math.round(a.duration ?? 0)} ms`
          : firstLine(message);
      } else s.skipped++;
    }
    if (r.assertionResults.length === 0 && r.status === 'failed') s.loadError = firstLine(r.message);
    files[file] = s;
  }
  const ordered: Record<string, FileSummary> = {};
  for (const f of args.files) if (files[f]) ordered[f] = files[f]!;
  const total = Object.values(ordered).reduce(
    (t, s) => ({ tests: t.tests + s.tests, passed: t.passed + s.passed, failed: t.failed + s.failed, skipped: t.skipped + s.skipped }),
    { tests: 0, passed: 0, failed: 0, skipped: 0 },
  );
  const resultsPath = join(here, 'results.json');
  // A partial run (--file) updates its files and keeps the others' last figures.
  const previous = existsSync(resultsPath) && args.files.length < FOCUS_FILES.length
    ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as { files?: Record<string, FileSummary> }).files ?? {}
    : {};
  const merged: Record<string, FileSummary> = {};
  for (const f of FOCUS_FILES) {
    const s = ordered[f] ?? previous[f];
    if (s) merged[f] = s;
  }
  const mergedTotal = Object.values(merged).reduce(
    (t, s) => ({ tests: t.tests + s.tests, passed: t.passed + s.passed, failed: t.failed + s.failed, skipped: t.skipped + s.skipped }),
    { tests: 0, passed: 0, failed: 0, skipped: 0 },
  );
  writeFileSync(
    resultsPath,
    `${JSON.stringify({ bullmqCommit: sha, measuredAt: new Date().toISOString(), total: mergedTotal, files: merged, failureMessages: messages }, null, 2)}\n`,
  );
  console.log('\nfile            passed/total  failed skipped');
  for (const [f, s] of Object.entries(ordered)) {
    console.log(`${f.padEnd(16)}${`${s.passed}/${s.tests}`.padStart(12)}${String(s.failed).padStart(8)}${String(s.skipped).padStart(8)}${s.loadError ? `  load error: ${s.loadError}` : ''}`);
  }
  console.log(`${'total'.padEnd(16)}${`${total.passed}/${total.tests}`.padStart(12)}${String(total.failed).padStart(8)}${String(total.skipped).padStart(8)}`);

  // Compare with the expected-failure list.
  const expectedPath = join(here, 'expected-failures.json');
  const expected: Expected = existsSync(expectedPath)
    ? (JSON.parse(readFileSync(expectedPath, 'utf8')) as Expected)
    : { bullmqCommit: sha, failures: [] };
  const listed = new Set(expected.failures.map((e) => `${e.file}\u0000${e.test}`));
  let bad = 0;
  for (const [f, s] of Object.entries(ordered)) {
    for (const name of s.failing) {
      if (!listed.has(`${f}\u0000${name}`)) {
        bad++;
        console.log(`UNEXPECTED FAILURE ${f}: ${name}\n    ${messages[f]?.[name] ?? ''}`);
      }
    }
    const failing = new Set(s.failing);
    const ran = new Set(report.testResults.filter((r) => r.name.endsWith(`/tests/${f}.test.ts`)).flatMap((r) => r.assertionResults.map((a) => a.fullName)));
    for (const e of expected.failures) {
      if (e.file === f && ran.has(e.test) && !failing.has(e.test)) {
        bad++;
        console.log(`PASSING BUT LISTED ${f}: ${e.test} (fixed, remove from the list)`);
      }
    }
  }
  // and every listed reason is one the guide states (reasons.ts; tools/bullmq-suite/reasons.test.ts checks it in npm test too)
  for (const line of unstatedReasons(expected.failures, readFileSync(join(here, '../../docs/guides/bullmq.md'), 'utf8'))) {
    bad++;
    console.log(`REASON NOT IN THE GUIDE ${line}`);
  }
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
  console.log(bad === 0 ? '\nevery failure is listed in expected-failures.json, each for a reason the guide states' : `\n${bad} difference(s) from expected-failures.json and the guide`);
  return bad === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
