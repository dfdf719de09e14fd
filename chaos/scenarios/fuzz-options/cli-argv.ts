/**
 * The CLI half of fuzz-options: generated argv for every subcommand of `emq`, driven in process
 * through `main(argv)` (its writes captured), and a few of them again through the real bin in a
 * child process, to prove the exit codes are the same there.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { main } from '../../../src/node/cli/cli.js';
import { checkInvariants } from '../../../test/invariants.js';
import { activeHandles, CONNECTIONS, handlesLeftOver } from '../../lib/active-handles.js';
import { describeError, type FuzzTally, within } from '../../lib/fuzz-tally.js';
import { badName, intText, notJson } from '../../lib/fuzz-values.js';
import { digestBeforeCase, keyspaceDigest } from '../../lib/keyspace-digest.js';

const root = join(import.meta.dirname, '..', '..', '..');
/** How long a refused command may take (one that had to start a consumer or a server hangs). */
const EXIT_LIMIT_MS = 5_000;
const SPAWN_LIMIT_MS = 30_000;
const COMMANDS = ['consume', 'enqueue', 'stats', 'serve', 'bridge', 'help'];

/**
 * What a case must exit with, as USAGE documents it: `usage` 2; `ok-or-usage` 0 or 2 (never 1
 * while Redis is up); `failed` 1 (Redis away, a port taken); `failed-or-usage` 1 or 2; `ok` and
 * `help` 0.
 */
type Expect = 'usage' | 'ok-or-usage' | 'failed' | 'failed-or-usage' | 'ok' | 'help';

/** The environment a case runs in: REDIS_URL's Redis up or away, and the tokens set or not. */
interface CliEnv {
  readonly redis: 'up' | 'away';
  readonly emqToken?: boolean;
  readonly restToken?: boolean;
}

/** One generated command line and what it must exit with. */
export interface CliCase {
  readonly argv: readonly string[];
  readonly expect: Expect;
  readonly env: CliEnv;
}

const UP: CliEnv = { redis: 'up' };
/** A port the runner fills in with one that is taken (the run's Redis listens on it). */
const TAKEN_PORT = '<taken>';

const name = fc.oneof({ arbitrary: fc.constantFrom('cli-1', 'cli-2', 'x'.repeat(128)), weight: 6 }, { arbitrary: badName, weight: 2 }, { arbitrary: fc.string({ maxLength: 6 }), weight: 1 });
const jsonText = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), weight: 6 },
  { arbitrary: notJson, weight: 2 },
  { arbitrary: fc.constantFrom(`"${'x'.repeat(1024 * 1024)}"`, `"${'x'.repeat(1024 * 1024 - 2)}"`), weight: 1 },
);
/** `--name value` or `--name=value`. */
const option = (flag: string, value: fc.Arbitrary<string>): fc.Arbitrary<string[]> =>
  fc.tuple(value, fc.boolean()).map(([v, joined]) => (joined ? [`--${flag}=${v}`] : [`--${flag}`, v]));
const enqueueOption = fc.oneof(
  option('group', fc.oneof(fc.constantFrom('g1', 'g2'), badName)),
  option('delay-ms', intText),
  option('id', fc.constantFrom('a', 'JOB:b', 'JOB:', 'x'.repeat(201), 'a b', '')),
  option('priority', intText),
  option('max-attempts', intText),
);
const consumeOption = fc.oneof(
  option('concurrency', intText),
  option('lease-ms', intText),
  option('beat-ms', intText),
  option('timeout-ms', intText),
  option('stop-timeout-ms', intText),
  fc.constant(['--quiet']),
);

/**
 * One token or two that make any command line a usage error wherever they go: options no command
 * takes, in each form parseArgs knows, a boolean given a value, an option left without its value.
 */
const poison = fc.constantFrom(['--nope'], ['--nope=1'], ['-z'], ['--Group', 'g'], ['--delay_ms', '5'], ['--quiet=yes'], ['---'], ['-'], ['--=x']);

/** Inserts `tokens` into `argv` at `at` (taken modulo the length), never before the subcommand. */
const insertAt = (argv: readonly string[], tokens: readonly string[], at: number): string[] => {
  const i = 1 + (at % argv.length);
  return [...argv.slice(0, i), ...tokens, ...argv.slice(i)];
};

/** A command line that must be refused: `base` with a poison somewhere after the subcommand, or after `--` as an extra positional. */
const poisoned = (base: fc.Arbitrary<string[]>): fc.Arbitrary<string[]> =>
  fc.oneof(
    fc.tuple(base, poison, fc.nat()).map(([argv, p, at]) => insertAt(argv, p, at)),
    base.map((argv) => [...argv, '--', 'extra', 'positional']),
  );

const enqueueArgv = fc.tuple(name, jsonText, fc.array(enqueueOption, { maxLength: 3 })).map(([q, json, opts]) => ['enqueue', q, json, ...opts.flat()]);
const statsArgv = fc.tuple(name).map(([q]) => ['stats', q]);
/** Handler modules: missing, not modules, without a default export function, a directory; or the real fixture (then something else is bad). */
const badHandler = fc.oneof(
  fc.constantFrom('./no/such/handler.mjs', '', '.', 'src', 'package.json', 'LICENSE', 'src/errors.ts', 'test/fixtures/child-consumer.ts.missing'),
  fc.string({ maxLength: 8 }).map((s) => `./no-such-dir/${s.replace(/[./\\]/g, '_')}.mjs`),
);
/** A handler module that cannot be loaded: exit 1, or 2 when the queue name or an option is bad too (checked first). */
const badHandlerArgv = fc.tuple(name, badHandler, fc.array(consumeOption, { maxLength: 3 })).map(([q, h, opts]) => ['consume', q, '--handler', h, ...opts.flat()]);
const consumeArgv = fc.oneof(
  fc.tuple(name, fc.array(consumeOption, { maxLength: 3 })).map(([q, opts]) => ['consume', q, ...opts.flat()]),
  poisoned(fc.tuple(name, fc.array(consumeOption, { maxLength: 3 })).map(([q, opts]) => ['consume', q, '--handler', 'test/fixtures/sleep-handler.mjs', ...opts.flat()])),
  // a real handler with every option valid but the queue name
  fc.tuple(badName, fc.array(consumeOption, { maxLength: 2 })).map(([q, opts]) => ['consume', q, '--handler', 'test/fixtures/sleep-handler.mjs', ...opts.flat()]),
);
/** --port values no listener takes: past 65535, negative, not integers, empty, or not numbers at all. */
const badPort = fc.constantFrom('65536', '99999', '-1', '1.5', 'abc', '', ' 80', '0x50', '1e3', '9007199254740993', '80 ', '+80');
const listenArgv = (command: 'serve' | 'bridge'): fc.Arbitrary<string[]> =>
  fc.oneof(
    option('port', badPort).map((p) => [command, ...p]),
    poisoned(fc.constantFrom<string[]>([command], [command, '--port', '0'], [command, '--host', '127.0.0.1'])),
    fc.constantFrom<string[]>([command, 'positional'], [command, '--port'], [command, '--host']),
  );

/** Every kind of command line, and what each must exit with. */
const cliCase: fc.Arbitrary<CliCase> = fc.oneof(
  { arbitrary: enqueueArgv.map((argv): CliCase => ({ argv, expect: 'ok-or-usage', env: UP })), weight: 10 },
  { arbitrary: poisoned(enqueueArgv).map((argv): CliCase => ({ argv, expect: 'usage', env: UP })), weight: 4 },
  { arbitrary: statsArgv.map((argv): CliCase => ({ argv, expect: 'ok-or-usage', env: UP })), weight: 3 },
  { arbitrary: poisoned(statsArgv).map((argv): CliCase => ({ argv, expect: 'usage', env: UP })), weight: 2 },
  { arbitrary: consumeArgv.map((argv): CliCase => ({ argv, expect: 'usage', env: UP })), weight: 4 },
  { arbitrary: badHandlerArgv.map((argv): CliCase => ({ argv, expect: 'failed-or-usage', env: UP })), weight: 2 },
  { arbitrary: listenArgv('serve').map((argv): CliCase => ({ argv, expect: 'usage', env: UP })), weight: 3 },
  { arbitrary: listenArgv('bridge').map((argv): CliCase => ({ argv, expect: 'usage', env: { redis: 'up', restToken: true } })), weight: 3 },
  // without its token the bridge refuses every command line, even a valid one
  { arbitrary: fc.constantFrom(['bridge'], ['bridge', '--port', '0']).map((argv): CliCase => ({ argv, expect: 'usage', env: UP })), weight: 1 },
  {
    arbitrary: fc.constantFrom<CliCase>(
      { argv: ['serve', '--port', TAKEN_PORT], expect: 'failed', env: UP },
      { argv: ['bridge', '--port', TAKEN_PORT], expect: 'failed', env: { redis: 'up', restToken: true } },
      { argv: ['serve', '--port', TAKEN_PORT, '--host', '127.0.0.1'], expect: 'failed', env: { redis: 'up', emqToken: true } },
    ),
    weight: 1,
  },
  { arbitrary: fc.oneof(enqueueArgv, statsArgv).map((argv): CliCase => ({ argv, expect: 'failed-or-usage', env: { redis: 'away' } })), weight: 2 },
  {
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }).filter((s) => s !== '' && !COMMANDS.includes(s) && s !== '--help' && s !== '-h'), fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }))
      .map(([command, rest]): CliCase => ({ argv: [command, ...rest], expect: 'usage', env: UP })),
    weight: 2,
  },
  { arbitrary: fc.constantFrom<CliCase>({ argv: [], expect: 'usage', env: UP }, { argv: ['--help'], expect: 'help', env: UP }, { argv: ['-h'], expect: 'help', env: UP }, { argv: ['help'], expect: 'help', env: UP }, { argv: ['stats', 'cli-1', '--help'], expect: 'help', env: UP }), weight: 1 },
);

/** The exit codes a case may end with. */
const ALLOWED: Record<Expect, readonly number[]> = { usage: [2], 'ok-or-usage': [0, 2], failed: [1], 'failed-or-usage': [1, 2], ok: [0], help: [0] };

/** Where a case's REDIS_URL points, and the port a `<taken>` port stands for. */
export interface CliTargets {
  /** The run's Redis, the CLI's database of its own. */
  readonly upUrl: string;
  /** A port nothing listens on. */
  readonly awayUrl: string;
  /** A port something listens on (the run's Redis). */
  readonly takenPort: number;
}

/** The environment variables a case sets, everything else as the process has it. */
function envOf(env: CliEnv, targets: CliTargets): Record<string, string | undefined> {
  return {
    REDIS_URL: env.redis === 'up' ? targets.upUrl : targets.awayUrl,
    EMQ_TOKEN: env.emqToken ? 'fuzz-token' : undefined,
    UPSTASH_REDIS_REST_TOKEN: env.restToken ? 'fuzz-rest-token' : undefined,
  };
}

const argvOf = (c: CliCase, targets: CliTargets): string[] => c.argv.map((a) => (a === TAKEN_PORT ? String(targets.takenPort) : a));

/** What one in-process run of `main` did. */
interface InProcess {
  readonly code: number | 'threw' | 'hung';
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `main(argv)` in this process with `env` set and stdout and stderr captured (restored
 * after, whatever happens). A run that has not exited in 5 s started something long-running: it
 * is told SIGTERM, the way its process would be, and given 15 s more to stop.
 */
async function runInProcess(argv: string[], env: Record<string, string | undefined>): Promise<InProcess> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const setEnv = (values: Record<string, string | undefined>): void => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write;
  const err = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  setEnv(env);
  try {
    const running = main(argv);
    const ended = await within(EXIT_LIMIT_MS, () => running);
    if (ended.kind === 'hung') {
      process.emit('SIGTERM', 'SIGTERM');
      await within(15_000, () => running);
      return { code: 'hung', stdout, stderr };
    }
    return { code: ended.kind === 'resolved' ? ended.value : 'threw', stdout, stderr: ended.kind === 'threw' ? `${stderr}${describeError(ended.error)}` : stderr };
  } finally {
    setEnv(saved);
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

/** The queue an `enqueue` or `stats` command line names, if any. */
const queueOf = (argv: readonly string[]): string | undefined => (argv[0] === 'enqueue' || argv[0] === 'stats' ? argv[1] : undefined);

/** What the CLI fuzzer needs: its database (raw, for digests and invariants) and where REDIS_URL points. */
export interface CliFuzzContext {
  readonly raw: Redis;
  readonly targets: CliTargets;
  readonly runs: number;
  readonly seed: number;
  readonly tally: FuzzTally;
}

/**
 * Runs `runs` generated command lines through `main` in process. Promises checked: the exit code
 * is one USAGE documents for the case (usage errors 2, Redis away 1, never 1 while Redis is up for
 * enqueue and stats), main never throws, no stack trace on stderr, a command that exits non-zero
 * (and stats, and help) leaves every key and value as it was, an enqueue that exits 0 leaves the
 * queue's invariants clean, consume, serve and bridge with bad arguments exit within 5 s, and no
 * run leaves a socket, a server or a timer behind.
 */
export async function fuzzCliArgv(ctx: CliFuzzContext): Promise<void> {
  const { raw, targets, tally } = ctx;
  await fc.assert(
    fc.asyncProperty(cliCase, async (c) => {
      const argv = argvOf(c, targets);
      const shown = `emq ${argv.map((a) => JSON.stringify(a.length > 40 ? `${a.slice(0, 40)}...` : a)).join(' ')}${c.env.redis === 'away' ? ' (Redis away)' : ''}`;
      tally.ran('cli_in_process');
      const handles = activeHandles(CONNECTIONS);
      const before = await digestBeforeCase(raw);
      const run = await runInProcess(argv, envOf(c.env, targets));
      if (run.code === 'hung') {
        tally.broke('hangs', `${shown} did not exit within ${EXIT_LIMIT_MS} ms`);
        return;
      }
      if (run.code === 'threw') {
        tally.broke('server_errors', `${shown}: main threw ${run.stderr.split('\n').at(-1)}`);
        return;
      }
      tally.exited(run.code);
      if (!ALLOWED[c.expect].includes(run.code)) tally.broke('server_errors', `${shown} exited ${run.code}, wanted ${ALLOWED[c.expect].join(' or ')}: ${run.stderr.split('\n')[0]}`);
      if (/\n\s+at /.test(run.stderr)) tally.broke('server_errors', `${shown} printed a stack trace: ${run.stderr.slice(0, 200)}`);
      const wrote = (await keyspaceDigest(raw, before)).sha1 !== before.sha1;
      const writes = run.code === 0 && argv[0] === 'enqueue';
      if (wrote && !writes) tally.broke('refused_requests_that_wrote', `${shown} exited ${run.code}, but the keyspace changed`);
      const queue = queueOf(argv);
      if (wrote && writes && queue !== undefined) {
        const violations = await checkInvariants(raw, queue);
        if (violations.length > 0) tally.broke('invariant_violations', `after ${shown}: ${violations.join('; ')}`);
      }
      const left = await handlesLeftOver(handles, CONNECTIONS);
      if (left !== '') tally.broke('handles_leaked', `${shown} exited ${run.code}, left ${left}`);
    }),
    { numRuns: ctx.runs, seed: ctx.seed },
  );
}

/** Command lines run through the real bin too: one of each way to exit. */
const SPAWNED: readonly CliCase[] = [
  { argv: ['frobnicate'], expect: 'usage', env: UP },
  { argv: ['enqueue', 'cli-1', '{not json'], expect: 'usage', env: UP },
  { argv: ['consume', 'cli-1', '--handler', 'test/fixtures/sleep-handler.mjs', '--concurrency', 'x'], expect: 'usage', env: UP },
  { argv: ['serve', '--port', '65536'], expect: 'usage', env: UP },
  { argv: ['enqueue', 'cli-1', '{"via":"bin"}', '--delay-ms=5', '--delay-ms', '10'], expect: 'ok', env: UP },
  { argv: ['stats', 'a b'], expect: 'usage', env: UP },
  { argv: ['bridge', '--port', '0'], expect: 'usage', env: UP },
  { argv: ['serve', '--port', TAKEN_PORT], expect: 'failed', env: UP },
  { argv: ['stats', 'cli-1'], expect: 'failed', env: { redis: 'away' } },
  { argv: ['consume', 'a b', '--handler', 'test/fixtures/sleep-handler.mjs'], expect: 'usage', env: UP },
  { argv: ['--help'], expect: 'help', env: UP },
  { argv: [], expect: 'usage', env: UP },
];

/** Runs the bin (`node --import tsx src/node/cli/bin.ts ...`) in a child process and resolves to its exit code. */
function spawnBin(argv: string[], env: Record<string, string | undefined>): Promise<number | 'hung'> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'node', 'cli', 'bin.ts'), ...argv], { cwd: root, env: childEnv, stdio: 'ignore' });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('hung');
    }, SPAWN_LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

/**
 * Runs `count` of the SPAWNED command lines through `main` in process, then (two at a time)
 * through the real bin, and checks each exits with the code it must and the same both ways: the
 * process wrapper adds nothing.
 */
export async function spawnBinChecks(ctx: CliFuzzContext, count: number): Promise<void> {
  const { targets, tally } = ctx;
  const cases = SPAWNED.slice(0, count).map((c) => ({ c, argv: argvOf(c, targets), env: envOf(c.env, targets) }));
  // in process one at a time: a run swaps the process's stdout, stderr and environment
  const inProcess: Array<InProcess['code']> = [];
  for (const { argv, env } of cases) inProcess.push((await runInProcess(argv, env)).code);
  for (let i = 0; i < cases.length; i += 2) {
    await Promise.all(
      cases.slice(i, i + 2).map(async ({ c, argv, env }, j) => {
        const spawned = await spawnBin(argv, env);
        tally.ran('cli_spawned');
        const shown = `emq ${argv.join(' ')}`;
        const here = inProcess[i + j]!;
        if (spawned === 'hung') tally.broke('hangs', `${shown} (spawned) did not exit within ${SPAWN_LIMIT_MS} ms`);
        else if (spawned !== here) tally.broke('server_errors', `${shown} exited ${spawned} from the bin but ${String(here)} in process`);
        else if (!ALLOWED[c.expect].includes(spawned)) tally.broke('server_errors', `${shown} exited ${spawned} both ways, wanted ${ALLOWED[c.expect].join(' or ')}`);
      }),
    );
  }
}
