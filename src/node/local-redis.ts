import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { EmqError } from '../errors.js';

/** A Redis to talk to: the one REDIS_URL names, or a private server this process started. */
export interface LocalRedis {
  /** Where to connect: REDIS_URL when set, else the private server's `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** The private server's PID, when this process started one. */
  readonly pid: number | undefined;
  /** Stops the private server and removes its files; does nothing for REDIS_URL. */
  stop(): Promise<void>;
}

/** Options for startLocalRedis. */
export interface LocalRedisOptions {
  /** Where REDIS_URL is read from (default process.env). */
  readonly env?: Record<string, string | undefined>;
  /** The port to listen on (default: a free one). */
  readonly port?: number;
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']. */
  readonly args?: readonly string[];
  /** Allow `apt-get install redis-server` when no binary exists on Debian or Ubuntu as root (default true). */
  readonly install?: boolean;
  /** Where progress lines go (default: nowhere). */
  readonly log?: (line: string) => void;
}

/** No Redis could be found or installed: the message is one line saying what to do. */
export class RedisMissingError extends EmqError {
  constructor(message: string) {
    super('EMQREDIS', message);
  }
}

const SERVERS = ['redis-server', 'valkey-server'];

/** The path of the first redis-server or valkey-server on PATH. */
export function findRedisServer(path = process.env.PATH ?? ''): string | undefined {
  for (const name of SERVERS) {
    for (const dir of path.split(delimiter)) {
      if (!dir) continue;
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

function installWithApt(log: (line: string) => void): boolean {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/etc/debian_version')) return false;
  log('redis-server not found: installing it with apt-get (Debian/Ubuntu, as root)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  if (update.status !== 0) return false;
  const install = spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'ignore', env });
  return install.status === 0;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function waitReady(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new RedisMissingError(`redis-server exited at start: ${output().trim().split('\n').pop() ?? ''}`);
    if (await pingOnce(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new RedisMissingError(`redis-server did not answer PING on port ${port} within 10 s`);
}

/**
 * The Redis for tests and `npm start`: REDIS_URL when set; otherwise a private `redis-server` (or
 * `valkey-server`) from PATH on a free loopback port, its files in a temp dir, stopped on exit.
 * With no binary, on Debian or Ubuntu as root it installs `redis-server` with apt-get; elsewhere
 * it throws RedisMissingError with one line on how to install it.
 *
 * @example
 * const redis = await startLocalRedis({ log: console.log });
 * // ... use redis.url ...
 * await redis.stop();
 */
export async function startLocalRedis(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const url = env.REDIS_URL;
  if (url) return { url, pid: undefined, stop: async () => {} };

  let binary = findRedisServer(env.PATH ?? process.env.PATH);
  if (!binary && options.install !== false && installWithApt(log)) binary = findRedisServer();
  if (!binary) {
    throw new RedisMissingError(
      'redis-server not found: install Redis 7+ (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL',
    );
  }

  const dir = mkdtempSync(join(tmpdir(), 'echomq-redis-'));
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...(options.args ?? [])];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    const killOnExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', killOnExit);
    try {
      await waitReady(port, child, () => output);
    } catch (error) {
      child.kill('SIGKILL');
      process.off('exit', killOnExit);
      if (attempt < 2 && options.port === undefined && /Address already in use/.test(output)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    log(`started ${binary} on 127.0.0.1:${port} (pid ${child.pid})`);
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    return {
      url: `redis://127.0.0.1:${port}`,
      pid: child.pid,
      stop: async () => {
        process.off('exit', killOnExit);
        child.kill('SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
