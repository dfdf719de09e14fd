/**
 * Runs @upstash/redis's own test files (github.com/upstash/redis-js, `packages/redis/pkg`) against
 * `emq bridge` (issue 36, part 4).
 *
 *   npx tsx tools/upstash-suite/run.ts [--upstash <checkout or bare git dir>] [--commit <sha>]
 *     [--file commands/get pipeline ...] [--timeout-ms 20000] [--in-process] [--keep]
 *
 * It extracts `packages/redis` from the redis-js git (a checkout or a bare mirror) into a temp dir
 * outside this repo, links this repo's `node_modules` there (the package's one runtime dependency,
 * uncrypto, and bun come from it), starts a private redis-server and `emq bridge` over it on
 * loopback, and runs the test files with bun in one process, `UPSTASH_REDIS_REST_URL` and
 * `UPSTASH_REDIS_REST_TOKEN` pointing at the bridge, as upstash's CI runs them against Upstash. It
 * reads bun's JUnit report by file, writes `results.json` beside this file, and compares the failures with
 * `expected-failures.json`: a failure not listed, or a listed test now passing, exits 1.
 * Nothing of upstash's is written into this repo.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseCommandLine } from 'node:util';
import { Redis } from 'ioredis';
import { startBridge } from '../../src/node/bridge/index.js';
import { startLocalRedis } from '../../src/node/local-redis.js';
import { compareWithList, parseJunit, type Expected, type FileSummary, type ServerFacts } from './junit.js';
import { gitRunner } from '../git-runner.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const PKG = 'packages/redis';

interface Args {
  upstash: string;
  commit: string;
  files: string[];
  timeoutMs: number;
  inProcess: boolean;
  keep: boolean;
}

/** The command line (node:util's parseArgs): `--file a b` names several files, as `--file a --file b` does. */
function parseArgs(argv: readonly string[]): Args {
  const { values, positionals } = parseCommandLine({
    args: [...argv],
    allowPositionals: true,
    options: {
      upstash: { type: 'string', default: process.env.UPSTASH_REDIS_JS_GIT ?? '' },
      commit: { type: 'string', default: 'HEAD' },
      file: { type: 'string', multiple: true, default: [] },
      'timeout-ms': { type: 'string', default: '20000' },
      'in-process': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  if (values.upstash === '') throw new Error("say where upstash's repository is: --upstash <a checkout or bare git dir of github.com/upstash/redis-js> (or UPSTASH_REDIS_JS_GIT)");
  return {
    upstash: values.upstash,
    commit: values.commit,
    files: [...values.file, ...positionals].map((f) => f.replace(/^(packages\/redis\/)?pkg\//, '').replace(/\.test\.ts$/, '')),
    timeoutMs: Number(values['timeout-ms']),
    inProcess: values['in-process'],
    keep: values.keep,
  };
}

/** What the server is, so entries that only a newer Redis or a module would pass are told apart. */
async function serverFacts(url: string, commands: readonly string[]): Promise<ServerFacts> {
  const redis = new Redis(url, { lazyConnect: true });
  try {
    await redis.connect();
    const info = await redis.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '0.0.0';
    const unique = [...new Set(commands.map((c) => c.toUpperCase()))];
    const replies = unique.length > 0 ? ((await redis.call('COMMAND', 'INFO', ...unique)) as unknown[]) : [];
    const has = new Set(unique.filter((_, i) => replies[i] !== null));
    return { version, has };
  } finally {
    redis.disconnect();
  }
}

/** `emq bridge` as a user starts it (or the same code in this process with --in-process): its URL and how to stop it. */
async function bridgeOver(redisUrl: string, token: string, inProcess: boolean): Promise<{ url: string; how: string; stop: () => Promise<void> }> {
  if (inProcess) {
    const bridge = await startBridge({ redisUrl, token });
    return { url: bridge.url, how: 'startBridge (in-process)', stop: () => bridge.close() };
  }
  const cli = join(repo, 'src/node/cli/bin.ts');
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl, UPSTASH_REDIS_REST_TOKEN: token };
  delete env.REDIS_CLUSTER_NODES; // beside REDIS_URL it is a usage error
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', cli, 'bridge', '--port', '0'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = await new Promise<string>((done, fail) => {
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const line = /^(http:\/\/\S+)\n/.exec(stdout);
      if (line) done(line[1]!);
    });
    void exited.then(() => fail(new Error(`emq bridge exited before printing its URL: ${stderr}`)));
  });
  return {
    url,
    how: 'emq bridge (src/node/cli/bin.ts)',
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

const sum = (files: Record<string, FileSummary>) =>
  Object.values(files).reduce(
    (t, s) => ({ tests: t.tests + s.tests, passed: t.passed + s.passed, failed: t.failed + s.failed, skipped: t.skipped + s.skipped }),
    { tests: 0, passed: 0, failed: 0, skipped: 0 },
  );

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const git = gitRunner(args.upstash);
  const sha = git('rev-parse', `${args.commit}^{commit}`).trim();
  const all = git('ls-tree', '-r', '--name-only', sha, `${PKG}/pkg`)
    .split('\n')
    .filter((p) => p.endsWith('.test.ts'))
    .map((p) => p.slice(`${PKG}/pkg/`.length, -'.test.ts'.length))
    .sort();
  const unknown = args.files.filter((f) => !all.includes(f));
  if (unknown.length > 0) throw new Error(`no such test file in ${PKG}/pkg at ${sha}: ${unknown.join(', ')}`);
  const files = args.files.length > 0 ? args.files : all;

  const dir = mkdtempSync(join(tmpdir(), 'emq-upstash-suite-'));
  console.log(`upstash/redis-js ${sha} -> ${dir}`);
  const tar = join(dir, 'redis.tar');
  git('archive', `--output=${tar}`, sha, PKG);
  const untar = spawnSync('tar', ['-x', '-f', tar, '-C', dir], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
  const pkgDir = join(dir, PKG);
  if (!existsSync(join(repo, 'node_modules/uncrypto')) || !existsSync(join(repo, 'node_modules/.bin/bun'))) {
    throw new Error('this repo\'s node_modules needs uncrypto (a dependency of @upstash/redis) and bun (a dev dependency): npm ci');
  }
  symlinkSync(join(repo, 'node_modules'), join(pkgDir, 'node_modules'), 'dir');

  const env = { ...process.env };
  delete env.REDIS_URL; // a private server, never a shared one
  const redis = await startLocalRedis({ env, log: (l) => console.log(l) });
  const expectedPath = join(here, 'expected-failures.json');
  const expected: Expected = existsSync(expectedPath) ? (JSON.parse(readFileSync(expectedPath, 'utf8')) as Expected) : { upstashCommit: sha, failures: [] };
  const token = randomUUID();
  const report = join(dir, 'junit.xml');
  let code: number | null = null;
  let facts: ServerFacts;
  let how = '';
  const started = Date.now();
  try {
    facts = await serverFacts(redis.url, expected.failures.flatMap((e) => e.unlessCommands ?? []));
    const bridge = await bridgeOver(redis.url, token, args.inProcess);
    how = bridge.how;
    console.log(`redis-server ${facts.version} at ${redis.url}; ${how} at ${bridge.url}; ${files.length} file(s)`);
    try {
      // One bun process over the files, as upstash's CI runs `bun test pkg`: a test file that
      // imports another's tests (hexpireat imports hexpire.test) counts them once, under theirs.
      // `./`: bun takes a bare argument as a filter, so `hexpire` would also pick `hexpireat`.
      code = await new Promise<number | null>((done) => {
        const child = spawn(
          join(repo, 'node_modules/.bin/bun'),
          ['test', '--timeout', String(args.timeoutMs), ...files.map((f) => `./pkg/${f}.test.ts`), '--reporter=junit', `--reporter-outfile=${report}`],
          { cwd: pkgDir, env: { ...env, UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token }, stdio: ['ignore', 'inherit', 'inherit'] },
        );
        child.on('exit', (c) => done(c));
      });
    } finally {
      await bridge.stop();
    }
  } finally {
    await redis.stop();
  }
  console.log(`bun exited ${code} after ${Math.round((Date.now() - started) / 1000)} s`);
  if (!existsSync(report)) {
    console.error('bun wrote no report');
    return 2;
  }
  const reports = parseJunit(readFileSync(report, 'utf8'));
  const summaries: Record<string, FileSummary> = {};
  const messages: Record<string, Record<string, string>> = {};
  for (const f of files) {
    summaries[f] = reports[f]?.summary ?? { tests: 0, passed: 0, failed: 0, skipped: 0, failing: [], loadError: 'no test of this file in bun\'s report' };
    messages[f] = reports[f]?.messages ?? {};
  }

  const resultsPath = join(here, 'results.json');
  // A partial run (--file) updates its files and keeps the others' last figures.
  const previous = existsSync(resultsPath) && args.files.length > 0
    ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as { files?: Record<string, FileSummary>; failureMessages?: Record<string, Record<string, string>> })
    : {};
  const merged: Record<string, FileSummary> = {};
  const mergedMessages: Record<string, Record<string, string>> = {};
  for (const f of all) {
    const s = summaries[f] ?? previous.files?.[f];
    if (s) merged[f] = s;
    const m = summaries[f] ? messages[f] : previous.failureMessages?.[f];
    if (m && Object.keys(m).length > 0) mergedMessages[f] = m;
  }
  writeFileSync(
    resultsPath,
    `${JSON.stringify({ upstashCommit: sha, redisVersion: facts.version, bridge: how, measuredAt: new Date().toISOString(), total: sum(merged), files: merged, failureMessages: mergedMessages }, null, 2)}\n`,
  );
  const ran = sum(summaries);
  console.log(`\nthis run: ${ran.passed}/${ran.tests} passed, ${ran.failed} failed, ${ran.skipped} skipped (${files.length} files)`);
  const withFailures = Object.entries(summaries).filter(([, s]) => s.failed > 0 || s.loadError);
  for (const [f, s] of withFailures) console.log(`  ${f.padEnd(32)}${`${s.passed}/${s.tests}`.padStart(8)}`);

  const differences = compareWithList(summaries, messages, expected, facts);
  for (const line of differences) console.log(line);
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
  console.log(differences.length === 0 ? '\nevery failure is listed in expected-failures.json' : `\n${differences.length} difference(s) from expected-failures.json`);
  return differences.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
