import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** When Redis fsyncs its append-only file: before every reply, or once a second in the background. */
export type FsyncPolicy = 'always' | 'everysec';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A redis-server of a scenario's own (`appendonly yes`, the fsync policy given, no RDB saves),
 * whose append-only files survive its kill: `kill()` SIGKILLs it by its PID, and `start()` starts
 * it again on the same files, on the same port. `stop()` kills it and removes its files.
 *
 * @example
 * const redis = new DurableRedis(findRedisServer()!, await freePort(), 'everysec');
 * await redis.start();
 * redis.kill();
 * await redis.start(); // loads what the files hold
 */
export class DurableRedis {
  private child: ChildProcess | undefined;
  /** The server's working directory: its AOF is under `appendonlydir/`. */
  readonly dir = mkdtempSync(join(tmpdir(), 'echomq-chaos-'));

  /**
   * @param binary the redis-server to run
   * @param port a free port on 127.0.0.1
   * @param fsync the `appendfsync` policy
   * @param args more redis-server arguments, e.g. `['--auto-aof-rewrite-percentage', '0']`
   */
  constructor(
    private readonly binary: string,
    readonly port: number,
    readonly fsync: FsyncPolicy,
    private readonly args: readonly string[] = [],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The running server's PID, if it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The AOF directory Redis 7 keeps its base and incremental files and manifest in. */
  get aofDir(): string {
    return join(this.dir, 'appendonlydir');
  }

  /** The incremental AOF Redis appends to: the last `type i` file of its manifest. */
  incrFile(): string {
    const manifest = readFileSync(join(this.aofDir, 'appendonly.aof.manifest'), 'utf8');
    const incr = manifest
      .split('\n')
      .map((line) => /^file (\S+) seq \d+ type i$/.exec(line.trim())?.[1])
      .filter((name): name is string => name !== undefined);
    if (incr.length === 0) throw new Error(`no incremental AOF in ${this.aofDir}`);
    return join(this.aofDir, incr[incr.length - 1]!);
  }

  /** Starts the server on its files and resolves once it answers PING: it has loaded them. */
  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', this.fsync, ...this.args];
    this.child = spawn(this.binary, args, { stdio: 'ignore' });
    // no ready check: ioredis's waits up to a second more once INFO says loading; PING is refused
    // (LOADING) until the files are loaded, so its PONG is the moment the server serves
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableReadyCheck: false });
    probe.on('error', () => {}); // refused while the server starts: expected
    try {
      for (let i = 0; i < 400; i++) {
        try {
          await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
          await sleep(25);
        }
      }
      throw new Error(`redis-server did not answer on port ${this.port} within 10 s (dir ${this.dir})`);
    } finally {
      probe.disconnect();
    }
  }

  /**
   * SIGKILL by its PID: no shutdown, no final write or fsync beyond what the policy already did.
   * Resolves once the process is gone, so its files are still.
   */
  async kill(): Promise<void> {
    const child = this.child;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid, 'SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
