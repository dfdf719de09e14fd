import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Durability, type DurabilityOptions, replicationOf } from '../../durability.js';
import { EmqError, InvalidArgumentError, JobFailedError, WaitTimeoutError } from '../../errors.js';
import type { Handler } from '../../handler.js';
import type { DedupeOptions, EnqueueOptions } from '../../job.js';
import { type AnyQueue, openQueue } from '../../open-queue.js';
import { PartitionedQueue } from '../../partitioned-queue.js';
import { Queue } from '../../queue.js';
import { queueOverviews } from '../../registry.js';
import type { Transport } from '../../transport.js';
import { startBridge } from '../bridge/index.js';
import { ADMIN_USAGE, adminCommands } from './admin.js';
import { Consumer } from '../consumer/index.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../connection-watch.js';
import { FLOW_USAGE, flowCommands } from './flow.js';
import { GROUPS_USAGE, groupsCommands } from './groups.js';
import type { IoredisTransport } from '../ioredis-transport.js';
import { connectTarget, type RedisTarget, redisTargetFromEnv, targetName } from '../redis-target.js';
import { initWorker } from './init-worker.js';
import { RATE_USAGE, rateCommands } from './rate.js';
import { SCHEDULE_USAGE, scheduleCommands } from './schedule.js';
import { UsageError, didYouMean, parseArgs } from './strict-args.js';
import { MAX_PARTITIONS } from '../../partitions.js';
import { type ApiServer, serveApi } from './serve.js';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const USAGE = `emq: echomq's command line (Redis from REDIS_URL, default redis://127.0.0.1:6379, or a
Redis Cluster from REDIS_CLUSTER_NODES)

usage:
  emq consume <queue> --handler <module> [--concurrency N] [--lease-ms N] [--beat-ms N] [--timeout-ms N] [--partitions N] [--quiet]
      Runs the parked consumer; over a partitioned queue (the registry's count, or --partitions N),
      one consumer over every partition, --concurrency slots in all. The module's default export is async (job) => void, where job is
      {id, payload, attempt, maxAttempts, group} (attempt: 1 on the first try); a throw retries
      the job. SIGTERM or SIGINT stops it at the settle point (jobs in hand may finish for
      --stop-timeout-ms, default 10000).
  emq enqueue <queue> <json> [--group G] [--delay-ms N] [--id ID] [--priority N] [--max-attempts N]
              [--dedupe-key K [--dedupe-ttl-ms MS] [--replace]] [--wait MS] [--partitions N]
      Adds one job; prints {"id", "state"}. --partitions N makes the queue partitioned (N
      partitions, fixed for its life) with its first job, or checks the count of one that is: a
      count the registry does not hold is refused (exit 2), nothing written. --dedupe-key: while a job added with key K is unfinished
      (or for MS after it was added), this one is a duplicate of it ("duplicate", its id); with
      --replace, that job, if not started, takes this payload and delay ("replaced"). With --wait,
      waits up to MS for it to finish and prints
      {"id", "state": "completed", "result"} (exit 0), {"id", "state": "dead", "error"} (exit 1),
      or {"id", "state"} when it did not finish in time (exit 1).
${FLOW_USAGE}
  emq job <queue> <id>
      Prints the job (its JobRecord) as JSON; exit 1 when there is no such job.
  emq events <queue> [--after ID] [--follow]
      Prints the queue's events, one JSON line each, oldest first, after entry id ID (default 0:
      all the stream keeps); --follow then waits for more (parked on XREAD BLOCK) until SIGTERM
      or SIGINT. A partitioned queue has a stream a partition: without --follow they are printed
      one partition after the other; with it, interleaved as they come.
  emq stats <queue>
      Prints {"queue", "paused", "counts", "rateLimits"}; rateLimits is {"queue", "groups",
      "throttled"}: the limits, and what may not start jobs yet (at its limit, or held) until when.
  emq queues
      Prints {"queues": [...]}: every queue of the registry (each that has had a job enqueued),
      sorted by name, each {"queue", "paused", "counts", "deadTotal", "retriedTotal",
      "stalledTotal", "firedTotal", "rateLimitedTotal"}, as GET /v1/queues answers; a
      partitioned queue is one row, its partitions summed, with "partitions" (its count).
  Every command that takes a <queue> addresses a partitioned queue by its name (the registry
  says how many partitions it has): counts summed, listings merged, admin on every partition.
${ADMIN_USAGE}
${GROUPS_USAGE}
${SCHEDULE_USAGE}
${RATE_USAGE}
  emq serve [--port N] [--host H]
      Serves the HTTP API (the same app as the Worker's) over REDIS_URL or REDIS_CLUSTER_NODES,
      default port 8787. Requests must carry Authorization: Bearer $EMQ_TOKEN; without EMQ_TOKEN
      the API is open and listens on 127.0.0.1 only. SIGTERM or SIGINT stops it.
  emq bridge [--port N] [--host H]
      Serves an Upstash-REST-compatible API over REDIS_URL or REDIS_CLUSTER_NODES (POST /,
      /pipeline, /multi-exec; on a cluster a transaction's keys must share a slot) for
      local edge work; clients send UPSTASH_REDIS_REST_TOKEN (required in the environment) as
      their bearer token. Prints its URL; SIGTERM or SIGINT stops it. Host default 127.0.0.1.
  emq init worker [--name N] [--force]
      Writes a Cloudflare Worker to start from into the current directory: wrangler.toml (the
      cron beat, minify) and workers/index.ts (one typed queue). Refuses, writing nothing, when
      either file exists (exit 1), unless --force. --name: the Worker's name (default: the
      directory's).

environment: REDIS_URL (default redis://127.0.0.1:6379), or REDIS_CLUSTER_NODES=host:port,...
(a Redis Cluster: one node is enough, the rest is learnt from it; both set is a usage error);
REDIS_CONNECT_TIMEOUT_MS, how long a command waits for Redis to answer before it fails with
exit 1 (default 5000): emq consume fails so only at start, and afterwards reconnects for as long
as it runs; EMQ_DURABILITY=replicated (default acknowledged), each write of enqueue, consume,
serve and flow followed by a WAIT for a replica within EMQ_REPLICATION_TIMEOUT_MS (default 1000),
else it fails with EMQREPLICA (the write is applied, and safe to send again).

exit codes: 0 done, 1 failed (Redis, a handler module, a file init would overwrite), 2 usage`;


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

let target: RedisTarget | undefined;

/**
 * The Redis of this run, from REDIS_CLUSTER_NODES or REDIS_URL, read once: both set, or a node
 * that is not host:port, is a usage error (exit 2) before anything connects.
 */
function redisTarget(): RedisTarget {
  if (target) return target;
  try {
    return (target = redisTargetFromEnv());
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(error.message);
    throw error;
  }
}

/** How long a command waits for Redis to answer a connection: REDIS_CONNECT_TIMEOUT_MS, default 5000. */
function connectTimeoutMs(): number {
  const raw = process.env.REDIS_CONNECT_TIMEOUT_MS;
  if (raw === undefined || raw === '') return DEFAULT_CONNECT_TIMEOUT_MS;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(`REDIS_CONNECT_TIMEOUT_MS takes a whole number of ms >= 1, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

/**
 * The connection of one command (a cluster client with REDIS_CLUSTER_NODES). A Redis it cannot
 * reach within the connect timeout fails its request with a ConnectionError naming the URL (never
 * its password) and the cause: one line, exit 1.
 */
function connect(): IoredisTransport {
  return connectTarget(redisTarget(), { connectTimeoutMs: connectTimeoutMs() });
}

/**
 * The durability of the writes a command makes (enqueue, consume's settles, serve's enqueues and
 * flows, flow): EMQ_DURABILITY (`acknowledged`, the default, or `replicated`: a `WAIT 1` behind
 * each write) and EMQ_REPLICATION_TIMEOUT_MS (default 1000). A bad value is a usage error.
 */
function durability(): DurabilityOptions {
  const chosen = process.env.EMQ_DURABILITY || undefined;
  const timeout = process.env.EMQ_REPLICATION_TIMEOUT_MS || undefined;
  if (timeout !== undefined && !/^\d+$/.test(timeout)) throw new UsageError(`EMQ_REPLICATION_TIMEOUT_MS takes a whole number of ms >= 1, got ${JSON.stringify(timeout)}`);
  const options: DurabilityOptions = {
    ...(chosen === undefined ? {} : { durability: chosen as Durability }),
    ...(timeout === undefined ? {} : { replicationTimeoutMs: Number(timeout) }),
  };
  try {
    replicationOf(options);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(`EMQ_DURABILITY, EMQ_REPLICATION_TIMEOUT_MS: ${error.message}`);
    throw error;
  }
  return options;
}

/** The Redis of this run in a message: `Redis at redis://host:port` or `Redis Cluster host:port,...`. */
const redisName = (): string => (redisTarget().kind === 'url' ? `Redis at ${targetName(redisTarget())}` : targetName(redisTarget()));

/** `work`'s result; a failure that is no EmqError still names the Redis (without its password). */
async function reachable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmqError) throw error;
    throw new Error(`${redisName()} failed: ${(error as Error).message}`);
  }
}

async function loadHandler(module: string): Promise<Handler> {
  const url = pathToFileURL(resolve(process.cwd(), module)).href;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new Error(`cannot load handler module ${module}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (typeof loaded.default !== 'function') {
    throw new Error(`handler module ${module} has no default export function`);
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
      partitions: { type: 'string' },
      quiet: { type: 'boolean' },
    },
  });
  const [queueName, ...extra] = positionals;
  if (!queueName || extra.length > 0) throw new UsageError('consume takes one queue name');
  if (!values.handler) throw new UsageError('consume needs --handler <module>');
  const partitions = intOption(values, 'partitions');
  if (partitions !== undefined && (partitions < 1 || partitions > MAX_PARTITIONS)) throw new UsageError(`--partitions takes 1 to ${MAX_PARTITIONS}, got ${partitions}`);
  const settings = {
    concurrency: intOption(values, 'concurrency') ?? 1,
    leaseMs: intOption(values, 'lease-ms') ?? 30_000,
    beatMs: intOption(values, 'beat-ms') ?? 5_000,
    timeoutMs: intOption(values, 'timeout-ms') ?? 0,
    stopTimeoutMs: intOption(values, 'stop-timeout-ms') ?? 10_000,
  };
  const say = (line: string): void => void process.stderr.write(`[emq] ${line}\n`);
  const log = values.quiet ? () => {} : say;
  // The order of the refusals: a bad queue name or option (exit 2) before a handler module that
  // cannot be loaded (exit 1), before a Redis it cannot reach at start (exit 1, one line). Once
  // started, the connection reconnects for ever: Redis going away is backed off and told once.
  const transport = connect();
  let consumer: Consumer;
  try {
    let handler: Handler | undefined;
    const consumerOn = (queue: AnyQueue<unknown>): Consumer => new Consumer(transport, queue, (job, context) => handler!(job, context), {
      ...settings,
      ownsTransport: true,
      // connected, lost (with the cause), back: one line each, --quiet or not
      log: say,
      hooks: {
        onCompleted: (job, { durationMs }) => log(`completed ${job.id} in ${durationMs.toFixed(1)} ms`),
        onRetried: (job, { error, outcome }) => log(`retry ${job.id} (${outcome}): ${error.split('\n')[0]}`),
        onDead: (job, { error }) => log(`dead ${job.id}: ${error.split('\n')[0]}`),
        onFenced: (job) => log(`lost the lease of ${job.id}: its result was not recorded`),
        // Redis trouble is told by the lines above, once, not once per retry
        onError: (error) => {
          if (!(error instanceof EmqError && error.code === 'EMQREDIS')) log(`error: ${(error as Error).message}`);
        },
      },
    });
    // options and the name are checked (exit 2) before the handler module is loaded and Redis read
    consumer = consumerOn(new Queue(transport, queueName, durability()));
    handler = await loadHandler(values.handler);
    await reachable(() => transport.ping());
    // a partitioned queue by its name (the registry's count), or as --partitions says: one
    // consumer over every partition
    const queue = partitions === undefined ? await reachable(() => openQueue(transport, queueName, durability())) : new PartitionedQueue(transport, queueName, { ...durability(), partitions });
    if (queue instanceof PartitionedQueue) consumer = consumerOn(queue);
  } catch (error) {
    // Redis away, a bad queue name or option: the connection must not outlive the refusal
    // (main() may run in a longer-lived process)
    await transport.close();
    throw error;
  }
  consumer.start();
  const over = consumer.queue instanceof PartitionedQueue ? `, its ${consumer.queue.partitions} partitions` : '';
  log(`consuming ${queueName} (concurrency ${consumer.concurrency}${over}); SIGTERM or Ctrl-C stops`);
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
      'dedupe-key': { type: 'string' },
      'dedupe-ttl-ms': { type: 'string' },
      replace: { type: 'boolean' },
      wait: { type: 'string' },
      partitions: { type: 'string' },
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
  const wait = intOption(values, 'wait');
  const partitions = intOption(values, 'partitions');
  if (partitions !== undefined && (partitions < 1 || partitions > MAX_PARTITIONS)) throw new UsageError(`--partitions takes 1 to ${MAX_PARTITIONS}, got ${partitions}`);
  if (wait !== undefined && wait < 0) throw new UsageError(`--wait takes a whole number of ms >= 0, got ${wait}`);
  const dedupe = dedupeOption(values);
  const addOptions = {
    ...options,
    ...(delayMs === undefined ? {} : { delayMs }),
    ...(priority === undefined ? {} : { priority }),
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(dedupe === undefined ? {} : { dedupe }),
  };
  const written = durability();
  const transport = connect();
  try {
    // --partitions makes (or checks) a partitioned queue: a count the registry does not hold is EMQPARTITION, nothing written
    const queue = partitions === undefined ? await reachable(() => openQueue(transport, queueName, written)) : new PartitionedQueue(transport, queueName, { ...written, partitions });
    if (wait === undefined) {
      const result = await reachable(() => queue.add(payload, addOptions));
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return EXIT.ok;
    }
    return await reachable(() => enqueueAndWait(queue, payload, { ...addOptions, timeoutMs: wait }));
  } finally {
    await transport.close();
  }
}

/** `emq enqueue`'s dedupe options: --dedupe-ttl-ms and --replace only beside --dedupe-key (the key's own checks are `add`'s). */
function dedupeOption(values: Record<string, unknown>): DedupeOptions | undefined {
  const key = values['dedupe-key'];
  const ttlMs = intOption(values, 'dedupe-ttl-ms');
  const replace = values.replace === true;
  if (typeof key !== 'string') {
    if (ttlMs !== undefined || replace) throw new UsageError('--dedupe-ttl-ms and --replace go with --dedupe-key');
    return undefined;
  }
  if (ttlMs !== undefined && ttlMs < 1) throw new UsageError(`--dedupe-ttl-ms takes a whole number of ms >= 1, got ${ttlMs}`);
  return { key, ...(ttlMs === undefined ? {} : { ttlMs }), ...(replace ? { replace } : {}) };
}

/** `emq enqueue --wait`: adds, waits, prints the outcome; exit 0 only when the job completed. */
async function enqueueAndWait(queue: AnyQueue, payload: unknown, options: EnqueueOptions & { timeoutMs: number }): Promise<number> {
  let id = '';
  const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);
  try {
    const done = await queue.addAndWait(payload, { ...options, onAdded: (added) => (id = added.id) });
    print({ id: done.id, state: 'completed', ...(done.result === undefined ? {} : { result: done.result }) });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof JobFailedError) {
      print({ id, state: 'dead', error: error.jobError });
      return EXIT.failed;
    }
    if (!(error instanceof WaitTimeoutError)) throw error;
    print({ id, state: (await queue.getJob(id))?.state ?? 'removed' });
    return EXIT.failed;
  }
}

async function job(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [queueName, id, ...extra] = positionals;
  if (!queueName || !id || extra.length > 0) throw new UsageError('job takes a queue name and a job id');
  return withQueue(queueName, async (queue) => {
    const found = await queue.getJob(id);
    if (!found) {
      process.stderr.write(`emq job: no job ${id} in queue ${queueName}\n`);
      return EXIT.failed;
    }
    process.stdout.write(`${JSON.stringify(found)}\n`);
    return EXIT.ok;
  });
}

async function events(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { after: { type: 'string' }, follow: { type: 'boolean' } },
  });
  const [queueName, ...extra] = positionals;
  if (!queueName || extra.length > 0) throw new UsageError('events takes one queue name');
  const after = values.after ?? '0';
  const print = (event: unknown): void => void process.stdout.write(`${JSON.stringify(event)}\n`);
  return withQueue(queueName, async (queue) => {
    if (!values.follow) {
      // a partitioned queue's streams one after the other, each from `after` (an entry id is a time)
      for (const part of queue instanceof PartitionedQueue ? queue.parts : [queue]) {
        for (let from = after; ; ) {
          const page = await part.readEvents({ after: from, limit: 1000 });
          page.events.forEach(print);
          if (page.next === from) break;
          from = page.next;
        }
      }
      return EXIT.ok;
    }
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      for await (const event of queue.events({ after, signal: stop.signal })) print(event);
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    return EXIT.ok;
  });
}

async function stats(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [queueName, ...extra] = positionals;
  if (!queueName || extra.length > 0) throw new UsageError('stats takes one queue name');
  return withQueue(queueName, async (queue) => {
    process.stdout.write(`${JSON.stringify(await queue.stats())}\n`);
    return EXIT.ok;
  });
}

/** `emq queues`: every queue of the registry with its counts, one JSON line (the body of `GET /v1/queues`). */
async function queues(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length > 0) throw new UsageError('queues takes no arguments');
  return withTransport(async (transport) => {
    process.stdout.write(`${JSON.stringify({ queues: await queueOverviews(transport) })}\n`);
    return EXIT.ok;
  });
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
  const queueOptions = durability();
  const transport = connect();
  let api: ApiServer;
  try {
    api = await serveApi({ transport, port, queueOptions, ...(token ? { token } : {}), ...(host ? { host } : {}) });
  } catch (error) {
    // the port is taken, the host is not ours: nothing serves, so nothing stays connected
    await transport.close();
    throw error;
  }
  process.stdout.write(`${api.url}\n`);
  if (api.open) {
    process.stderr.write(`[emq] no EMQ_TOKEN: the API is open, so it listens on 127.0.0.1 only (${api.url}) over ${targetName(redisTarget())}\n`);
  } else {
    process.stderr.write(`[emq] serving the API on ${api.url} over ${targetName(redisTarget())}, bearer token required\n`);
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
  const redis = redisTarget();
  const running = await startBridge({ ...(redis.kind === 'url' ? { redisUrl: redis.url } : { clusterNodes: redis.nodes }), token, port, host });
  process.stdout.write(`${running.url}\n`);
  process.stderr.write(`[emq] bridge on ${running.url} over ${targetName(redis)}; SIGTERM or Ctrl-C stops\n`);
  const signal = await stopSignal();
  process.stderr.write(`[emq] ${signal}: stopping the bridge (${JSON.stringify(running.stats())})\n`);
  await running.close();
  return EXIT.ok;
}

async function init(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: 'string' }, force: { type: 'boolean' } },
  });
  const [kind, ...extra] = positionals;
  if (kind !== 'worker' || extra.length > 0) {
    throw new UsageError(
      kind === undefined || extra.length > 0 ? 'init takes what to write: worker' : `init writes a worker, not ${JSON.stringify(kind)}${didYouMean(kind, ['worker'])}`,
    );
  }
  const written = await initWorker(process.cwd(), { force: values.force === true, ...(values.name === undefined ? {} : { name: values.name }) });
  process.stderr.write(`[emq] wrote ${written.join(' and ')}; next: npm install -D wrangler, then npx wrangler dev\n`);
  return EXIT.ok;
}

/**
 * Runs `work` on queue `name` over a connection of its own, closed after (the admin commands): a
 * PartitionedQueue when the registry records the name as partitioned, else a Queue.
 */
async function withQueue<T>(name: string, work: (queue: AnyQueue) => Promise<T>): Promise<T> {
  const transport = connect();
  try {
    return await reachable(async () => work(await openQueue(transport, name)));
  } finally {
    await transport.close();
  }
}

/** Runs `work` over a connection of its own, closed after (the flow command: its queues are in its file). */
async function withTransport<T>(work: (transport: Transport) => Promise<T>): Promise<T> {
  const transport = connect();
  try {
    return await reachable(() => work(transport));
  } finally {
    await transport.close();
  }
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  consume,
  enqueue,
  job,
  events,
  stats,
  queues,
  serve,
  bridge,
  init,
  ...adminCommands({ withQueue, intOption, usage: (message) => new UsageError(message) }),
  ...scheduleCommands({ withQueue, intOption, usage: (message) => new UsageError(message) }),
  ...rateCommands({ withQueue, intOption, usage: (message) => new UsageError(message) }),
  ...groupsCommands({ withQueue, intOption, usage: (message) => new UsageError(message) }),
  ...flowCommands({ withTransport, durability, usage: (message) => new UsageError(message) }),
};

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  target = undefined; // each run reads its environment afresh (tests call main() in one process)
  if (!command || command === '--help' || command === '-h' || command === 'help' || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return command ? EXIT.ok : EXIT.usage;
  }
  // own keys only: `emq toString` is an unknown command, not Object.prototype's method
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) {
    process.stderr.write(`emq: unknown command ${JSON.stringify(command)}${didYouMean(command, Object.keys(COMMANDS))}\n\n${USAGE}\n`);
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
