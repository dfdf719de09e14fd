/**
 * `git` over a checkout (`-C`) or a bare git dir (`--git-dir`), for the harnesses that read another
 * project's tests from a fetched copy (tools/bullmq-suite, tools/upstash-suite).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A runner of git commands on the repository at `path`; each answers its stdout, or throws with git's stderr.
 *
 * @example
 * const git = gitRunner('../bullmq');
 * const sha = git('rev-parse', 'HEAD').trim();
 */
export function gitRunner(path: string): (...argv: string[]) => string {
  const bare = existsSync(join(path, 'objects')) && existsSync(join(path, 'HEAD'));
  const base = bare ? ['--git-dir', path] : ['-C', path];
  return (...argv) => {
    const out = spawnSync('git', [...base, ...argv], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (out.status !== 0) throw new Error(`git ${argv.join(' ')}: ${out.stderr}`);
    return out.stdout;
  };
}
