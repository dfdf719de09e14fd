import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findRedisServer, freePort } from '../../src/node/local-redis.js';

/**
 * A private redis-server run under valgrind's callgrind, whose instructions can be counted over a
 * stretch of work: `count(work)` zeroes the counters, runs `work`, and answers the instructions
 * (callgrind's `Ir`) the server executed meanwhile, everything it did included (reading the
 * requests, the scripts, the commands, the replies). Unlike time, the count is the same from run
 * to run within about 1% (Lua's garbage collector runs when it runs), however noisy the machine,
 * so a change to a script is measured against the one before it (docs/design/scripts-and-invariants.md).
 */
export interface CountedRedis {
  readonly url: string;
  count(work: () => Promise<void>): Promise<number>;
  stop(): Promise<void>;
}

/** Why the counting server cannot start here (no valgrind, no redis-server), or undefined. */
export function callgrindMissing(): string | undefined {
  if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status !== 0) return 'valgrind not found (Debian/Ubuntu: apt-get install valgrind)';
  if (!findRedisServer()) return 'redis-server not found (Debian/Ubuntu: apt-get install redis-server)';
  return undefined;
}

export async function startCountedRedis(): Promise<CountedRedis> {
  const missing = callgrindMissing();
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), 'echomq-callgrind-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg.out')}`, findRedisServer()!, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  // valgrind takes a few seconds to start the server: one probe a try, until it answers
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server under callgrind exited at start (${child.exitCode})`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    const up = await probe.connect().then(() => probe.ping(), () => undefined);
    probe.disconnect();
    if (up === 'PONG') break;
    if (Date.now() > deadline) throw new Error('redis-server under callgrind did not answer within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }

  // each dump writes cg.out.<n>, n counting up, holding what ran since the last zero or dump
  const dumped = (): number => {
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    const parts = readdirSync(dir).filter((f) => /^cg\.out\.\d+$/.test(f));
    const newest = parts.sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop())).at(-1);
    const summary = newest ? /^summary: (\d+)/m.exec(readFileSync(join(dir, newest), 'utf8')) : null;
    if (!summary) throw new Error(`callgrind wrote no summary in ${dir}`);
    return Number(summary[1]);
  };
  return {
    url,
    async count(work) {
      dumped();
      await work();
      return dumped();
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
