import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { useRedis } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment for a child: this process's, less what an outer `npm test` set for its own
 * scripts (npm_config_*, npm_package_*, ...), which would steer the inner npm.
 */
const childEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_'))),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  ...extra,
});

/**
 * Runs `command args` in `cwd`; throws with its output when it does not exit 0 within `timeoutMs`.
 * The child leads a process group of its own, and a timeout kills the group: `npm pack` runs
 * the build in a tsc of its own, which killing npm alone would leave running.
 */
function run(command: string, args: readonly string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const result = { code, stdout, stderr };
      if (code === 0) resolve(result);
      else reject(new Error(`${command} ${args.join(' ')} ${signal === 'SIGKILL' ? `ran past ${timeoutMs} ms` : `exited ${code}`}:\n${stdout}\n${stderr}`));
    });
  });
}

/** What `npm pack --json` reports of the tarball it wrote. */
interface Packed {
  filename: string;
  integrity: string;
  files: Array<{ path: string }>;
}

/** A lockfile v3 entry, as package-lock.json keeps it. */
interface LockEntry {
  version?: string;
  dev?: boolean;
  [field: string]: unknown;
}

/** The dev tools the user's project installs beside echomq: the compiler and the types of each runtime. */
const TOOLS = ['typescript', '@types/node', 'undici-types', '@cloudflare/workers-types'];
/** The optional peers a user of the entries that need them installs (`echomq/bull-board`: bull-board's API). */
const PEERS = ['@bull-board/api'];

/**
 * `names` and every package they need (dependencies and required peers), as this project's
 * lockfile has them at the top of node_modules: the entries a user's lockfile takes for them.
 */
function lockClosure(packages: Record<string, LockEntry>, names: readonly string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const todo = [...names];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    const path = `node_modules/${name}`;
    if (out[path] || TOOLS.includes(name)) continue;
    const entry = packages[path];
    if (!entry) throw new Error(`package-lock.json has no ${path}: the user's project needs it`);
    // a dependency of the user's app here, whatever it is to this project
    const { dev: _dev, ...kept } = entry;
    out[path] = kept;
    const optional = (entry.peerDependenciesMeta ?? {}) as Record<string, { optional?: boolean }>;
    const peers = Object.keys((entry.peerDependencies ?? {}) as Record<string, string>).filter((peer) => !optional[peer]?.optional);
    todo.push(...Object.keys((entry.dependencies ?? {}) as Record<string, string>), ...peers);
  }
  return out;
}

/**
 * The user's project's lockfile: echomq from the tarball, and every package it needs (the
 * project's non-dev lock entries, its dependencies' closure) and the tools, as this project's
 * lockfile pins them. So `npm ci --offline` resolves nothing: it takes each tarball from npm's
 * cache by integrity, where `npm ci` of this project left it.
 */
function userLockfile(packed: Packed, tarball: string, tools: Record<string, string>): object {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; license: string; dependencies: Record<string, string>; bin: Record<string, string>; engines: Record<string, string> };
  const packages: Record<string, unknown> = {
    '': { name: 'app', dependencies: { echomq: tarball, ...peersOf(lock.packages) }, devDependencies: tools },
    'node_modules/echomq': {
      version: own.version,
      resolved: tarball,
      integrity: packed.integrity,
      license: own.license,
      dependencies: own.dependencies,
      bin: own.bin,
      engines: own.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
  Object.assign(packages, lockClosure(lock.packages, PEERS));
  for (const tool of TOOLS) {
    const entry = lock.packages[`node_modules/${tool}`];
    if (!entry) throw new Error(`package-lock.json has no node_modules/${tool}: the user's project needs it`);
    packages[`node_modules/${tool}`] = entry;
  }
  return { name: 'app', lockfileVersion: 3, requires: true, packages };
}

/**
 * A user's tsconfig at its strictest: every check a careful user may turn on, and
 * `skipLibCheck: false`, so the packed `.d.ts` files are checked under these options as the
 * user's own code is. Under them a `.d.ts` of ours once failed twice: an optional property typed
 * `T | undefined` (an indexed access) against the `T` of the interface it extends
 * (`exactOptionalPropertyTypes`), and in the Worker's project `Symbol.asyncDispose`, which
 * neither its ES2022 lib nor workers-types declares.
 */
const STRICT = {
  target: 'ES2022',
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  noPropertyAccessFromIndexSignature: true,
  noUncheckedSideEffectImports: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  allowUnreachableCode: false,
  allowUnusedLabels: false,
  forceConsistentCasingInFileNames: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  skipLibCheck: false,
};

/**
 * A module that imports every entry it names, so each entry's `.d.ts` files (and all they
 * import) are in the program and checked, used or not by the producer and the consumer.
 */
const importsOf = (entries: readonly string[]): string => {
  const names = entries.map((entry, i) => ({ specifier: entry === '.' ? 'echomq' : `echomq/${entry.slice(2)}`, local: `entry${i}` }));
  return `${names.map(({ specifier, local }) => `import * as ${local} from '${specifier}';`).join('\n')}

console.log([${names.map(({ local }) => local).join(', ')}].map((entry) => Object.keys(entry).length));
`;
};

/** The peers the user's package.json names, at the versions this project's lockfile has. */
const peersOf = (packages: Record<string, LockEntry>): Record<string, string> =>
  Object.fromEntries(PEERS.map((peer) => [peer, String(packages[`node_modules/${peer}`]?.version)]));

/** Every entry the package exports; the Worker takes all but the Node ones (and bull-board's, a Node app's). */
const NODE_ENTRIES = ['.', './node', './edge', './serverless', './lambda', './vercel', './netlify', './deno', './http', './bullmq', './bull-board'];
const WORKER_ENTRIES = ['.', './edge', './serverless', './http'];

/** A producer: adds `count` jobs to the queue named in argv, one at a time and in bulk, then closes. */
const PRODUCER = `import { Queue } from 'echomq';
import { IoredisTransport } from 'echomq/node';

const [name = 'mail', count = '10'] = process.argv.slice(2);
const transport = IoredisTransport.connect(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const mail = new Queue<{ to: string }>(transport, name);
const half = Math.floor(Number(count) / 2);
for (let i = 0; i < half; i++) await mail.add({ to: \`user\${i}@example.com\` });
await mail.addBulk(Array.from({ length: Number(count) - half }, (_, i) => ({ payload: { to: \`user\${half + i}@example.com\` } })));
console.log(JSON.stringify(await mail.stats()));
await transport.close();
`;

/** A consumer: runs the queue named in argv until `count` jobs completed, then stops and exits. */
const CONSUMER = `import type { Job } from 'echomq';
import { Consumer } from 'echomq/node';

const [name = 'mail', count = '10'] = process.argv.slice(2);
let completed = 0;
let allDone = (): void => {};
const done = new Promise<void>((resolve) => (allDone = resolve));
const send = async (job: Job<{ to: string }>): Promise<void> => {
  console.log(\`sent \${job.payload.to}\`);
};
const consumer = Consumer.connect<{ to: string }>(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', name, send, {
  concurrency: 4,
  hooks: { onCompleted: () => { if (++completed === Number(count)) allDone(); } },
}).start();
await done;
await consumer.stop();
`;

/**
 * The package as a user installs it: `npm pack`, the tarball installed into a fresh project with
 * npm's cache only, a tsconfig at its strictest (STRICT); a producer, a consumer, a module
 * importing every entry, and the Worker entry `emq init worker` writes beside one importing every
 * entry but `./node`, type-check against what shipped (the Worker's with Cloudflare's types and no
 * Node types), then the producer and the consumer run to completion on the test Redis.
 * A vitest suite rather than a step of .ci/run: it needs the run's Redis, which the test setup
 * starts, and a developer runs it with the rest.
 */
describe('the packed package, installed into a fresh project', () => {
  const redis = useRedis();
  const dir = mkdtempSync(join(tmpdir(), 'echomq-package-'));
  const app = join(dir, 'app');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // 150 s before skipLibCheck: false, which costs each project's tsc ~15 s of CPU more (it checks every .d.ts it loads)
  it('type-checks a producer, a consumer and a Worker, and runs the producer and the consumer to completion', { timeout: 330_000 }, async () => {
    const t0 = Date.now();
    const lap: Record<string, number> = {};
    let last = t0;
    const mark = (step: string): void => {
      lap[step] = Date.now() - last;
      last = Date.now();
    };

    // npm pack runs `prepare` (the build), as `npm publish` would
    const packOut = (await run('npm', ['pack', '--json', '--pack-destination', dir], root, 150_000)).stdout;
    const packed = (JSON.parse(packOut.slice(packOut.indexOf('['))) as Packed[])[0]!;
    mark('pack');
    const shipped = packed.files.map((f) => f.path);
    expect(shipped).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts', 'dist/node/cli/bin.js']));
    expect(shipped.filter((path) => /\.test\.|^test\/|^src\//.test(path))).toEqual([]);
    // a source map ships with the sources it names, or not at all (tsconfig.build.json: not at all)
    expect(shipped.filter((path) => path.endsWith('.map'))).toEqual([]);

    const tarball = `file:../${packed.filename}`;
    const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; exports: Record<string, unknown> };
    // a new entry joins the ones checked below
    expect(Object.keys(own.exports).sort()).toEqual([...NODE_ENTRIES].sort());
    const tools = Object.fromEntries(TOOLS.filter((t) => t !== 'undici-types').map((t) => [t, own.devDependencies[t]!]));
    mkdirSync(join(app, 'src'), { recursive: true });
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { echomq: tarball, ...peersOf(lock.packages) }, devDependencies: tools }, null, 2));
    writeFileSync(join(app, 'package-lock.json'), JSON.stringify(userLockfile(packed, tarball, tools), null, 2));
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], app, 60_000).catch((error: Error) => {
      if (!/ENOTCACHED/.test(error.message)) throw error;
      throw new Error(`npm's cache lacks a package of package-lock.json: \`npm ci\` in this project fills it\n${error.message}`);
    });
    mark('install');

    // the bin as npm links it; the Worker entry from `emq init worker`
    await run(join(app, 'node_modules', '.bin', 'emq'), ['init', 'worker'], app, 15_000);
    writeFileSync(join(app, 'src', 'producer.ts'), PRODUCER);
    writeFileSync(join(app, 'src', 'consumer.ts'), CONSUMER);
    writeFileSync(join(app, 'src', 'entries.ts'), importsOf(NODE_ENTRIES));
    writeFileSync(join(app, 'workers', 'entries.ts'), importsOf(WORKER_ENTRIES));
    const nodeProject = { compilerOptions: { ...STRICT, module: 'NodeNext', types: ['node'], outDir: 'out', rootDir: 'src' }, include: ['src'] };
    const workerProject = {
      compilerOptions: { ...STRICT, lib: ['ES2022'], module: 'ESNext', moduleResolution: 'Bundler', types: ['@cloudflare/workers-types'], noEmit: true },
      include: ['workers'],
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(nodeProject, null, 2));
    writeFileSync(join(app, 'tsconfig.worker.json'), JSON.stringify(workerProject, null, 2));
    const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
    // both, so a failure shows every error of each
    const checks = await Promise.allSettled(['tsconfig.json', 'tsconfig.worker.json'].map((project) => run(process.execPath, [tsc, '-p', project], app, 120_000)));
    expect(checks.flatMap((check) => (check.status === 'rejected' ? [(check.reason as Error).message] : []))).toEqual([]);
    mark('typecheck');

    const queue = redis.queue<{ to: string }>();
    const env = { REDIS_URL: inject('redisUrl') };
    const produced = await run(process.execPath, ['out/producer.js', queue.name, '10'], app, 15_000, env);
    expect(JSON.parse(produced.stdout)).toMatchObject({ queue: queue.name, counts: { pending: 10 } });
    const consumed = await run(process.execPath, ['out/consumer.js', queue.name, '10'], app, 15_000, env);
    expect(consumed.stdout.trim().split('\n').sort()).toEqual(Array.from({ length: 10 }, (_, i) => `sent user${i}@example.com`).sort());
    expect((await queue.stats()).counts).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 0, completed: 10, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
    const stats = await run(join(app, 'node_modules', '.bin', 'emq'), ['stats', queue.name], app, 15_000, env);
    expect(JSON.parse(stats.stdout)).toMatchObject({ counts: { completed: 10 } });
    mark('run');
    console.log(`packed, installed, type-checked and ran in ${Date.now() - t0} ms: ${JSON.stringify(lap)}`);
  });
});
