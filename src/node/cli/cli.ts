import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { EmqError } from '../../errors.js';
import type { Handler } from '../../handler.js';
import type { EnqueueOptions } from '../../job.js';
import { Queue } from '../../queue.js';
import { startBridge } from '../bridge/index.js';
import { Consumer } from '../consumer/index.js';
import { IoredisTransport } from '../ioredis-transport.js';
import { serveApi } from './serve.js';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const USAGE = `emq: echomq's command line (Redis from REDIS_URL, default redis://127.0.0.1:6379)

usage:
  emq consume <queue> --handler <module> [--concurrency N] [--lease-ms N] [--beat-ms N] [--timeout-ms N] [--quiet]
      Runs the parked consumer. The module's default export is async (job) => void, where job is
      {id, payload, attempt, maxAttempts, group} (attempt: 1 on the first try); a throw retries
      the job. SIGTERM or SIGINT stops it at the settle point (jobs in hand may finish for
      --stop-timeout-ms, default 10000).
  emq enqueue <queue> <json> [--group G] [--delay-ms N] [--id ID] [--priority N] [--max-attempts N]
      Adds one job; prints {"id", "state"}.
  emq stats <queue>
      Prints {"queue", "paused", "counts"}.
  emq serve [--port N] [--host H]
      Serves the HTTP API (the same app as the Worker's) over REDIS_URL, default port 8787.
      Requests must carry Authorization: Bearer $EMQ_TOKEN; without EMQ_TOKEN the API is open
      and listens on 127.0.0.1 only. SIGTERM or SIGINT stops it.
  emq bridge [--port N] [--host H]
      Serves an Upstash-REST-compatible API over REDIS_URL (POST /, /pipeline, /multi-exec) for
      local edge work; clients send UPSTASH_REDIS_REST_TOKEN (required in the environment) as
      their bearer token. Prints its URL; SIGTERM or SIGINT stops it. Host default 127.0.0.1.

exit codes: 0 done, 1 failed (Redis, a handler module), 2 usage`;

class UsageError extends Error {}

/** The parsed integer of option `name`, if given. */
function intOption(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${name} takes an integer, got ${JSON.stringify(raw)}`);
  }
  return n;
}

const redisUrl = (): string => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A connection for one command: it fails fast, with the URL, when Redis cannot be reached. */
function connect(): IoredisTransport {
  return IoredisTransport.connect(redisUrl(), { maxRetriesPerRequest: 0, connectTimeout: 5_000, retryStrategy: () => null });
}

async function reachable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmqError && error.code !== 'EMQREDIS') throw error;
    throw new Error(`cannot reach Redis at ${redisUrl()}: ${(error as Error).message}`);
  }
}

async function loadHandler(module: string): Promise<Handler> {
  const url = pathToFileURL(resolve(process.cwd(), module)).href;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new EmqError('EMQARG', `cannot load handler module ${module}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof loaded.default !== 'function') {
    throw new EmqError('EMQARG', `handler module ${module} has no default export function`);
  }
  return loaded.default as Handler;
}

async function consume(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      handler: { type: 'string' },
      concurrency: { type: 'string' },
      'lease-ms': { type: 'string' },
      'beat-ms': { type: 'string' },
      'timeout-ms': { type: 'string' },
      'stop-timeout-ms': { type: 'string' },
      quiet: { type: 'boolean' },
    },
  });
  const [queueName, ...extra] = positionals;
  if (!queueName || extra.length > 0) throw new UsageError('consume takes one queue name');
  if (!values.handler) throw new UsageError('consume needs --handler <module>');
  const handler = await loadHandler(values.handler);
  const log = values.quiet ? () => {} : (line: string) => process.stderr.write(`[emq] ${line}\n`);
  // The consumer's connection reconnects for ever: Redis going away is backed off, never fatal.
  const transport = IoredisTransport.connect(redisUrl(), { maxRetriesPerRequest: 2 });
  const queue = new Queue(transport, queueName);
  const consumer = new Consumer(transport, queue, handler, {
    concurrency: intOption(values, 'concurrency') ?? 1,
    leaseMs: intOption(values, 'lease-ms') ?? 30_000,
    beatMs: intOption(values, 'beat-ms') ?? 5_000,
    timeoutMs: intOption(values, 'timeout-ms') ?? 0,
    stopTimeoutMs: intOption(values, 'stop-timeout-ms') ?? 10_000,
    ownsTransport: true,
    hooks: {
      onCompleted: (job, { durationMs }) => log(`completed ${job.id} in ${durationMs.toFixed(1)} ms`),
      onRetried: (job, { error, outcome }) => log(`retry ${job.id} (${outcome}): ${error.split('\n')[0]}`),
      onDead: (job, { error }) => log(`dead ${job.id}: ${error.split('\n')[0]}`),
      onFenced: (job) => log(`lost the lease of ${job.id}: its result was not recorded`),
      onError: (error) => log(`redis: ${(error as Error).message}`),
    },
  });
  consumer.start();
  log(`consuming ${queueName} (concurrency ${consumer.concurrency}); SIGTERM or Ctrl-C stops`);
  await new Promise<void>((done) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        process.exit(EXIT.failed);
      }
      stopping = true;
      log(`${signal}: stopping at the settle point`);
      void consumer.stop().then(done);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  log('stopped');
  return EXIT.ok;
}

async function enqueue(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      group: { type: 'string' },
      'delay-ms': { type: 'string' },
      id: { type: 'string' },
      priority: { type: 'string' },
      'max-attempts': { type: 'string' },
    },
  });
  const [queueName, json, ...extra] = positionals;
  if (!queueName || json === undefined || extra.length > 0) throw new UsageError('enqueue takes a queue name and one JSON payload');
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    throw new UsageError(`the payload is not JSON: ${json}`);
  }
  const options: EnqueueOptions = {
    ...(values.group === undefined ? {} : { group: values.group }),
    ...(values.id === undefined ? {} : { id: values.id }),
  };
  const delayMs = intOption(values, 'delay-ms');
  const priority = intOption(values, 'priority');
  const maxAttempts = intOption(values, 'max-attempts');
  const transport = connect();
  try {
    const queue = new Queue(transport, queueName);
    const result = await reachable(() => queue.add(payload, {
      ...options,
      ...(delayMs === undefined ? {} : { delayMs }),
      ...(priority === undefined ? {} : { priority }),
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
    }));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return EXIT.ok;
  } finally {
    await transport.close();
  }
}

async function stats(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [queueName, ...extra] = positionals;
  if (!queueName || extra.length > 0) throw new UsageError('stats takes one queue name');
  const transport = connect();
  try {
    const queue = new Queue(transport, queueName);
    process.stdout.write(`${JSON.stringify(await reachable(() => queue.stats()))}\n`);
    return EXIT.ok;
  } finally {
    await transport.close();
  }
}

/** Resolves with the first SIGTERM or SIGINT: how a server command is told to stop. */
const stopSignal = (): Promise<NodeJS.Signals> =>
  new Promise((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });

/** The options of a command that listens (serve, bridge): `--port` (0 to 65535) and `--host`, nothing else. */
function listenOptions(command: string, args: string[]): { port: number | undefined; host: string | undefined } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { port: { type: 'string' }, host: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments`);
  const port = intOption(values, 'port');
  if (port !== undefined && (port < 0 || port > 65_535)) throw new UsageError(`--port takes 0 to 65535, got ${port}`);
  return { port, host: values.host };
}

async function serve(args: string[]): Promise<number> {
  const { port = 8787, host } = listenOptions('serve', args);
  const token = process.env.EMQ_TOKEN || undefined;
  const transport = IoredisTransport.connect(redisUrl(), { maxRetriesPerRequest: 2 });
  const api = await serveApi({ transport, port, ...(token ? { token } : {}), ...(host ? { host } : {}) });
  process.stdout.write(`${api.url}\n`);
  if (api.open) {
    process.stderr.write(`[emq] no EMQ_TOKEN: the API is open, so it listens on 127.0.0.1 only (${api.url})\n`);
  } else {
    process.stderr.write(`[emq] serving the API on ${api.url}, bearer token required\n`);
  }
  const signal = await stopSignal();
  process.stderr.write(`[emq] ${signal}: stopping the API\n`);
  await api.close();
  await transport.close();
  return EXIT.ok;
}

async function bridge(args: string[]): Promise<number> {
  const { port, host } = listenOptions('bridge', args);
  const token = process.env.UPSTASH_REDIS_REST_TOKEN;
  if (!token) throw new UsageError('bridge needs UPSTASH_REDIS_REST_TOKEN in the environment: the token clients must send');
  const running = await startBridge({ redisUrl: redisUrl(), token, port, host });
  process.stdout.write(`${running.url}\n`);
  process.stderr.write(`[emq] bridge on ${running.url} over ${redisUrl()}; SIGTERM or Ctrl-C stops\n`);
  const signal = await stopSignal();
  process.stderr.write(`[emq] ${signal}: stopping the bridge (${JSON.stringify(running.stats())})\n`);
  await running.close();
  return EXIT.ok;
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = { consume, enqueue, stats, serve, bridge };

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help' || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return command ? EXIT.ok : EXIT.usage;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`emq: unknown command ${JSON.stringify(command)}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  try {
    return await run(args);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`emq ${command}: ${error.message}\n(see emq --help)\n`);
      return EXIT.usage;
    }
    if (error instanceof EmqError && error.status < 500) {
      process.stderr.write(`emq ${command}: ${error.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`emq ${command}: ${(error as Error).message ?? String(error)}\n`);
    return EXIT.failed;
  }
}
