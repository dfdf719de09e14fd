import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

/** The repository's root: the children's working directory unless a test names another. */
export const root = join(import.meta.dirname, '..');

/**
 * The `emq` bin the run's global setup built from src/ (test/emq-build.ts), run by node as `npx
 * emq` runs the built one.
 */
export const cli = builtBin();

function builtBin(): string {
  const path = inject('emqBin');
  if (!path) throw new Error('this project did not build emq: see test/global-setup.ts');
  return path;
}

/** How an `emq` process ended: its exit code (null when a signal ended it) and all it printed. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An `emq` process under way: the child to signal, its end, and what it has printed so far. */
export interface Running {
  child: ChildProcess;
  done: Promise<Run>;
  stdout(): string;
  stderr(): string;
}

/** What a test may change about how `emq` is started. */
export interface EmqOptions {
  /** Written to its stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Its working directory; the repository's root by default. */
  cwd?: string;
  /** Another path to the bin (a symlink to it, as npm links bins); {@link cli} by default. */
  bin?: string;
}

/**
 * The environment of a child: this process's, with `env` over it; a key set to undefined is
 * left out, so a test can say "no REDIS_URL" whatever the shell running vitest has set.
 */
function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...env })) if (value !== undefined) merged[key] = value;
  return merged;
}

/**
 * Starts `emq ...args` as a child process (node on the bin the global setup built from src/) and
 * collects its output; the caller signals `child` when the command runs until stopped.
 *
 * @example
 * const serve = startEmq(['serve', '--port', '0'], { REDIS_URL: url, EMQ_TOKEN: undefined });
 * await until(() => /^http:\/\//m.test(serve.stdout()), 20_000);
 * serve.child.kill('SIGTERM');
 * expect((await serve.done).code).toBe(0);
 */
export function startEmq(args: readonly string[], env: Record<string, string | undefined> = {}, options: EmqOptions = {}): Running {
  const child = spawn(process.execPath, [options.bin ?? cli, ...args], {
    cwd: options.cwd ?? root,
    env: childEnv(env),
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Runs `emq ...args` to its end: `env` over this process's environment (undefined unsets a
 * key), in the repository's root unless `options.cwd` says otherwise.
 *
 * @example
 * const run = await emq(['stats', queue.name], { REDIS_URL: inject('redisUrl') });
 * expect(run.code, run.stderr).toBe(0);
 */
export function emq(args: readonly string[], env: Record<string, string | undefined> = {}, options: EmqOptions = {}): Promise<Run> {
  return startEmq(args, env, options).done;
}
