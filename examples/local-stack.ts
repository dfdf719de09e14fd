/**
 * `npm start`: the whole system on this machine, one queue (`demo`) served at the edge and by the
 * sidecar at once:
 *   - Redis: REDIS_URL, else a private redis-server (installed with apt-get on Debian as root);
 *     with `--cluster`, a Redis Cluster instead: REDIS_CLUSTER_NODES, else a private one of three
 *     masters with a replica each (src/node/local-cluster.ts); REDIS_CLUSTER_NODES alone means it
 *     too, and beside REDIS_URL is a usage error;
 *   - the Upstash-REST bridge over it (what the Worker's @upstash/redis talks to locally);
 *   - the Worker under `wrangler dev` (offline), its scheduled beat fired every 10 s;
 *   - a parked Node consumer.
 * A mix of jobs goes in through both the Worker's HTTP API and Node: grouped jobs under a limit,
 * delayed jobs, one that fails once then succeeds, one that ends dead. Each run is printed with
 * the runtime that ran it. Then a scheduler fires three slots on the parked Node consumer's timer,
 * and another three from the Worker's beat alone (the Node consumer stopped meanwhile). Then a
 * group is held for a moment and rate limited to 3 starts a second, and the starts are shown
 * second by second from the events stream. Then a flow: four pages rendered by either runtime,
 * then their parent merges them, once, after the last page. Then two signups of the durable steps'
 * signup flow (examples/signup-demo.ts), their steps run by either runtime, one verified by an
 * event sent over HTTP, the other reminded when its wait times out. Then a job with a timeout of
 * its own dies at it, beside one under the consumer's, a running job is cancelled, and one
 * not started in time expires (examples/job-controls-demo.ts). Then a partitioned queue of 8
 * partitions (on a cluster, spread over the masters) takes jobs of 8 groups from both runtimes,
 * each group in order. Ctrl-C
 * ends everything cleanly. `--once` exits when the mix is done;
 * `--no-edge` leaves the bridge and the Worker out; `--cluster` runs it all over a Redis Cluster;
 * `--platform lambda` runs an AWS Lambda function (examples/lambda-local.ts: createLambdaHandler
 * behind a local Function URL, an EventBridge beat every 10 s) in place of the Worker;
 * `--platform deno` a Deno app (examples/deno-local.ts: serveDeno under the `deno` binary, a beat
 * every 10 s through its stdin); `--platform vercel` a Vercel function (examples/vercel-local.ts:
 * createVercelHandlers in Vercel's Edge runtime, its cron route called every 10 s with CRON_SECRET).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Flows, InvalidArgumentError, PartitionedQueue, Queue, queueOverviews, type Job } from '../src/index.js';
import { keyspace } from '../src/keyspace.js';
import { slotOf } from '../src/cluster-slot.js';
import { type RunningBridge, startBridge } from '../src/node/bridge/index.js';
import { type ApiServer, serveApi } from '../src/node/cli/serve.js';
import { Consumer, freePort, startLocalRedis } from '../src/node/index.js';
import type { Transport } from '../src/transport.js';
import { startLocalCluster } from '../src/node/local-cluster.js';
import { connectTarget, type RedisTarget, redisTargetFromEnv, targetName } from '../src/node/redis-target.js';
import { type DemoPayload, demoHandler } from '../workers/demo-handler.js';
import { startLocalDeno } from './deno-local.js';
import { startLocalLambda } from './lambda-local.js';
import { startLocalVercel } from './vercel-local.js';
import { runSignupDemo } from './signup-demo.js';
import { runBullMQDemo } from './bullmq-demo.js';
import { runCancelDemo, runKeysDemo, runTimeoutDemo } from './job-controls-demo.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const once = process.argv.includes('--once');
const withEdge = !process.argv.includes('--no-edge');
/** Which serverless platform runs beside the Node consumer: the Worker (default), a Lambda function, a Deno app or a Vercel function. */
const PLATFORMS = ['cloudflare', 'lambda', 'deno', 'vercel'] as const;
const platformArg = process.argv[process.argv.indexOf('--platform') + 1];
const platform = (process.argv.includes('--platform') ? platformArg : 'cloudflare') as (typeof PLATFORMS)[number];
if (!PLATFORMS.includes(platform)) {
  console.error(`npm start: --platform takes ${PLATFORMS.slice(0, -1).join(', ')} or ${PLATFORMS.at(-1)}, not ${JSON.stringify(platformArg)}`);
  process.exit(2);
}
/** How the platform's runtime names itself in the demo's lines, and in what the stack says. */
const RUNTIME = {
  cloudflare: { label: 'edge', name: 'the Worker' },
  lambda: { label: 'lambda', name: 'the Lambda function' },
  deno: { label: 'deno', name: 'the Deno app' },
  vercel: { label: 'vercel', name: 'the Vercel function' },
}[platform];
const asCluster = process.argv.includes('--cluster');
const t0 = performance.now();
const say = (line: string): void => console.log(`${((performance.now() - t0) / 1000).toFixed(2).padStart(6)}s  ${line}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const QUEUE = 'demo';
/** The partitioned example queue (the Worker drains its 8 partitions too: workers/index.ts). */
const PARTS = 'demo-parts';
const PARTITIONS = 8;
const BEAT_EVERY_MS = 10_000;
/** Where `npm start` serves the dashboard on Node, when the port is free. */
const DASHBOARD_PORT = 8790;

/** The Worker under `wrangler dev`, kept offline, with its scheduled handler reachable locally. */
async function startWorker(bridge: RunningBridge, token: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const vars = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_LOCAL_DEV: '1', EMQ_BEAT_DEADLINE_MS: '8000', EMQ_JOB_TIMEOUT_MS: '5000' };
  const child = spawn(
    process.execPath,
    [join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'dev', '--port', String(port), '--ip', '127.0.0.1', '--test-scheduled', '--show-interactive-dev-session=false', ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`])],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_SEND_ERROR_REPORTS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_HIDE_BANNER: 'true', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let ready = false;
  const relay = (chunk: Buffer): void => {
    for (const line of chunk.toString().split('\n')) {
      if (/Ready on/.test(line)) ready = true;
      if (/^\[edge\]/.test(line)) say(line); // the demo handler's lines: which runtime ran what
      else if (/scheduled beat"/.test(line)) say(`[edge] beat ${line.slice(line.indexOf('"summaries"'), 200)}`);
      else if (/ERROR|error/.test(line) && !/"level":"info"/.test(line)) say(`wrangler: ${line}`);
    }
  };
  child.stdout!.on('data', relay);
  child.stderr!.on('data', relay);
  for (let i = 0; i < 600 && !ready; i++) {
    if (child.exitCode !== null) throw new Error('wrangler dev exited at start (run with --no-edge to leave the Worker out)');
    await sleep(50);
  }
  if (!ready) throw new Error('wrangler dev did not get ready within 30 s (run with --no-edge to leave the Worker out)');
  return { url: `http://127.0.0.1:${port}`, child };
}

const mix = (via: string): Array<{ payload: DemoPayload; group?: string; delayMs?: number; maxAttempts?: number }> => [
  ...Array.from({ length: 4 }, (_, i) => ({ payload: { kind: 'email', to: `a${i}-${via}@tenant-a.test`, sleepMs: 300 } as DemoPayload, group: 'tenant-a' })),
  ...Array.from({ length: 2 }, (_, i) => ({ payload: { kind: 'email', to: `b${i}-${via}@tenant-b.test`, sleepMs: 300 } as DemoPayload, group: 'tenant-b' })),
  { payload: { kind: 'reminder', to: `later-${via}@example.test` }, delayMs: 2000 },
  { payload: { kind: 'report', to: `ops-${via}@example.test` } },
  { payload: { kind: via === 'node' ? 'flaky' : 'doomed', to: `${via}@example.test` }, maxAttempts: 3 },
];

/** The Redis of the stack and whether it is ours (started here, so stopped here and cleaned at start). */
interface StackRedis {
  readonly target: RedisTarget;
  readonly ours: boolean;
  stop(): Promise<void>;
}

/**
 * REDIS_CLUSTER_NODES or REDIS_URL when given (both is a usage error), else a private
 * redis-server, or with `--cluster` a private Redis Cluster (three masters, a replica each).
 */
async function startRedis(): Promise<StackRedis> {
  const given = redisTargetFromEnv();
  if (given.kind === 'cluster') return { target: given, ours: false, stop: async () => {} };
  if (asCluster && process.env.REDIS_URL) throw new InvalidArgumentError('--cluster runs over REDIS_CLUSTER_NODES or a cluster of its own: unset REDIS_URL');
  if (asCluster) {
    const cluster = await startLocalCluster({ log: say });
    return { target: { kind: 'cluster', nodes: cluster.nodes.slice(0, cluster.masters) }, ours: true, stop: () => cluster.stop() };
  }
  const redis = await startLocalRedis({ log: say });
  return { target: { kind: 'url', url: redis.url }, ours: redis.pid !== undefined, stop: () => redis.stop() };
}

/** The dashboard on Node: port 8790 when free (a stable address to keep open), else any. */
async function serveDashboard(transport: Transport): Promise<ApiServer> {
  try {
    return await serveApi({ transport, port: DASHBOARD_PORT, log: () => {} });
  } catch {
    return serveApi({ transport, port: 0, log: () => {} });
  }
}

/** What the dashboard's queues page shows of the demo queue, beside what the API answers. */
async function dashboardCheck(nodeUrl: string, edgeUrl: string | undefined): Promise<string> {
  const rowOf = async (base: string): Promise<string> => {
    const html = await (await fetch(`${base}/ui/part`)).text();
    const row = new RegExp(`<tr data-queue="${QUEUE}">(.*?)</tr>`, 's').exec(html)?.[1] ?? '';
    return [...row.matchAll(/data-count="(\w+)"[^>]*>(\d+)</g)].map(([, state, n]) => `${state} ${n}`).join(', ');
  };
  const { queues } = (await (await fetch(`${nodeUrl}/v1/queues`)).json()) as { queues: Array<{ queue: string; counts: Record<string, number> }> };
  const counts = queues.find((q) => q.queue === QUEUE)?.counts ?? {};
  const node = await rowOf(nodeUrl);
  // the API's counts in the page's order of states
  const api = node.split(', ').map((cell) => `${cell.split(' ')[0]} ${counts[cell.split(' ')[0]!] ?? '?'}`).join(', ');
  const edge = edgeUrl ? await rowOf(edgeUrl) : undefined;
  return `dashboard: /ui shows "${QUEUE}" with ${node}; the same as GET /v1/queues (${node === api})${edge === undefined ? '' : ` and as ${RUNTIME.name}'s /ui (${edge === node})`}`;
}

async function main(): Promise<void> {
  let redis: StackRedis;
  try {
    redis = await startRedis();
  } catch (error) {
    console.error(`npm start: ${(error as Error).message}`);
    process.exit(error instanceof InvalidArgumentError ? 2 : 1);
  }
  const transport = connectTarget(redis.target);
  say(`redis: ${targetName(redis.target)}${redis.ours ? ' (private)' : ''}${redis.target.kind === 'cluster' ? '' : '; npm start -- --cluster runs over a Redis Cluster'}`);
  const queue = new Queue<DemoPayload>(transport, QUEUE);
  if (redis.ours && redis.target.kind === 'url') {
    // our private server: start from a clean queue (never on a Redis named by REDIS_URL; a
    // private cluster is new)
    for (const key of await transport.redis.keys(`emq:{${QUEUE}}:*`)) await transport.redis.del(key);
  }

  const cleanups: Array<() => Promise<unknown> | void> = [];
  let stopping = false;
  const stop = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    for (const cleanup of cleanups.reverse()) await cleanup();
    await transport.close();
    await redis.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  let edgeUrl: string | undefined;
  /** One scheduled event of the platform's runtime (the Worker's cron, Lambda's EventBridge schedule, Deno.cron's beat, Vercel Cron's call). */
  let edgeBeat: () => void = () => {};
  if (withEdge) {
    try {
      const token = randomBytes(16).toString('hex');
      const target = redis.target;
      const bridge = await startBridge({ ...(target.kind === 'url' ? { redisUrl: target.url } : { clusterNodes: target.nodes }), token });
      cleanups.push(() => bridge.close());
      say(`bridge: Upstash REST over ${target.kind === 'cluster' ? 'the Redis Cluster' : 'Redis'} on ${bridge.url}`);
      if (platform === 'lambda') {
        const fn = await startLocalLambda(bridge.url, token, say);
        cleanups.push(() => fn.close());
        edgeUrl = fn.url;
        edgeBeat = () => void fn.beat();
        say(`lambda: createLambdaHandler behind a Function URL on ${edgeUrl} (an EventBridge beat every ${BEAT_EVERY_MS / 1000} s)`);
      } else if (platform === 'deno') {
        const app = await startLocalDeno(bridge.url, token, say);
        cleanups.push(() => app.close());
        edgeUrl = app.url;
        edgeBeat = () => app.beat();
        say(`deno: serveDeno under the deno binary (process ${app.pid}) on ${edgeUrl} (a beat every ${BEAT_EVERY_MS / 1000} s through its stdin)`);
      } else if (platform === 'vercel') {
        const fn = await startLocalVercel(bridge.url, token, say);
        cleanups.push(() => fn.close());
        edgeUrl = fn.url;
        edgeBeat = () => void fn.beat();
        say(`vercel: createVercelHandlers in the Edge runtime (edge-runtime) on ${edgeUrl} (its cron route called every ${BEAT_EVERY_MS / 1000} s with CRON_SECRET)`);
      } else {
        const worker = await startWorker(bridge, token);
        cleanups.push(() => {
          worker.child.kill('SIGTERM');
        });
        edgeUrl = worker.url;
        edgeBeat = () => void fetch(`${worker.url}/__scheduled?cron=*+*+*+*+*`).catch(() => {});
        say(`worker: wrangler dev on ${edgeUrl} (scheduled beat every ${BEAT_EVERY_MS / 1000} s)`);
      }
      const beat = setInterval(edgeBeat, BEAT_EVERY_MS);
      cleanups.push(() => clearInterval(beat));
    } catch (error) {
      say(`npm start: ${(error as Error).message}`);
      return stop(1);
    }
  }

  // the dashboard on Node (`emq serve`'s app, open on loopback as it is without EMQ_TOKEN); the
  // Worker serves the same pages at its own /ui
  const dashboard = await serveDashboard(transport);
  cleanups.push(() => dashboard.close());
  say(`dashboard: ${dashboard.url}/ui (Node, live over SSE)${edgeUrl ? `; ${RUNTIME.name}'s: ${edgeUrl}/ui (reloads every 5 s)` : ''}`);

  const startConsumer = (): Consumer<DemoPayload> =>
    new Consumer<DemoPayload>(connectTarget(redis.target), QUEUE, (job: Job<DemoPayload>, { progress }) => demoHandler(job, 'node', say, progress), {
      ownsTransport: true,
      concurrency: 2,
      hooks: {
        onRetried: (job, { error }) => say(`[node] retry ${job.id}: ${error.split('\n')[0]}`),
        onDead: (job, { error }) => say(`[node] dead  ${job.id}: ${error.split('\n')[0]}`),
        onError: (error) => say(`[node] redis: ${(error as Error).message}`),
      },
    }).start();
  let consumer = startConsumer();
  cleanups.push(() => consumer.stop(2_000));
  say(`node: a parked consumer on "${QUEUE}" (concurrency 2)`);

  await queue.setGroupLimit('tenant-a', 2);
  const nodeJobs = mix('node');
  await queue.addBulk(nodeJobs.map((j) => ({ ...j, backoff: 300 })));
  let total = nodeJobs.length;
  if (edgeUrl) {
    // the same jobs, the same shape: a BulkJob as JSON is a job of the bulk route's body
    const edgeJobs = mix('edge').map((j) => ({ ...j, backoff: 300 }));
    const res = await fetch(`${edgeUrl}/v1/queues/${QUEUE}/jobs/bulk`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jobs: edgeJobs }) });
    if (res.status !== 201) say(`${RUNTIME.name} refused the bulk enqueue: ${res.status} ${await res.text()}`);
    else total += edgeJobs.length;
  }
  say(`enqueued ${total} jobs on "${QUEUE}"${edgeUrl ? ` (half through ${RUNTIME.name}, half from Node)` : ''}: tenant-a (limit 2), tenant-b, delayed, flaky, doomed`);

  const settled = async (): Promise<void> => {
    for (;;) {
      await sleep(1000);
      const { counts } = await queue.stats();
      say(`counts  ${JSON.stringify(counts)}`);
      if (counts.pending + counts.scheduled + counts.active === 0 && counts.completed + counts.dead === total) return;
    }
  };
  await settled();
  say(`the mix is done (${edgeUrl ? 'the doomed job dies by design' : 'all completed'})`);

  // a result, progress and the events stream: enqueue and wait for the outcome
  const waited = await queue.addAndWait({ kind: 'report', message: 'waited for', progress: { stage: 'half' }, result: { pages: 3 } }, { timeoutMs: 15_000 });
  say(`addAndWait: ${waited.id} completed with ${JSON.stringify(waited.result)}; its progress was ${JSON.stringify((await queue.getJob(waited.id))?.progress)}`);
  total++;

  // a scheduler: each slot fired once, by whichever runtime gets there first
  const firedAll = async (id: string, n: number): Promise<void> => {
    for (let i = 0; i < 150 && ((await queue.getScheduler(id))?.fired ?? 0) < n; i++) await sleep(200);
  };
  const shown = async (id: string): Promise<string> => {
    const s = await queue.getScheduler(id);
    return JSON.stringify({ id, every: s?.every, limit: s?.limit, fired: s?.fired, nextRunAt: s?.nextRunAt });
  };
  await queue.upsertScheduler('heartbeat', { every: 1000, limit: 3 }, { payload: { kind: 'report', message: 'heartbeat' } });
  await firedAll('heartbeat', 3);
  total += 3;
  await settled();
  say(`scheduler ${await shown('heartbeat')}: each slot fired on time by the parked Node consumer's timer`);
  if (edgeUrl) {
    // the Worker alone: its beat fires the slot due, then sleeps until each next one within its deadline
    await consumer.stop(2_000);
    say(`node: consumer stopped for a moment: ${RUNTIME.name} fires the next scheduler on its own`);
    await queue.upsertScheduler('edge-heartbeat', { every: 1000, limit: 3 }, { payload: { kind: 'report', message: 'edge heartbeat' } });
    edgeBeat();
    await firedAll('edge-heartbeat', 3);
    total += 3;
    await settled();
    say(`scheduler ${await shown('edge-heartbeat')}: each slot fired by ${RUNTIME.name}'s beat`);
    consumer = startConsumer();
    say('node: consumer back');
  }
  // flow control: a group held (what a handler's RateLimitedError does after a 429), then at most
  // 3 starts a second; the starts' times come from the events stream (server ms)
  let from = '0';
  for (let page = await queue.readEvents({ after: from, limit: 1000 }); page.next !== from; page = await queue.readEvents({ after: from, limit: 1000 })) from = page.next;
  await queue.setGroupRateLimit('partner-api', { limit: 3, periodMs: 1000 });
  const heldUntil = await queue.holdGroup('partner-api', 1500);
  await queue.addBulk(Array.from({ length: 6 }, (_, i) => ({ payload: { kind: 'email' as const, message: `partner call ${i + 1}` }, group: 'partner-api' })));
  total += 6;
  await settled();
  const starts: number[] = [];
  for (let after = from; ; ) {
    const page = await queue.readEvents({ after, limit: 1000 });
    for (const e of page.events) if (e.event === 'active' && e.group === 'partner-api') starts.push(e.time);
    if (page.next === after) break;
    after = page.next;
  }
  const bySecond = new Map<number, number>();
  for (const t of starts) bySecond.set(Math.floor((t - heldUntil) / 1000), (bySecond.get(Math.floor((t - heldUntil) / 1000)) ?? 0) + 1);
  say(
    `rate: partner-api held 1.5 s, then 3 starts a second: ${starts.length} starts, none before the hold ended (${starts.every((t) => t >= heldUntil)}), per second after it ${JSON.stringify([...bySecond.values()])}`,
  );

  // a flow: four pages rendered (by either runtime), then their parent merges them, once, after
  // the last page (sent through the Worker's API when it runs, else written from Node)
  const tree = {
    queue: QUEUE,
    id: 'pdf-1',
    payload: { kind: 'report' as const, message: 'merge the pages' },
    children: [1, 2, 3, 4].map((page) => ({ queue: QUEUE, payload: { kind: 'report' as const, message: `render page ${page}`, sleepMs: 200, result: { page } } })),
  };
  let flowFrom = '0';
  for (let page = await queue.readEvents({ after: flowFrom, limit: 1000 }); page.next !== flowFrom; page = await queue.readEvents({ after: flowFrom, limit: 1000 })) flowFrom = page.next;
  if (edgeUrl) {
    const res = await fetch(`${edgeUrl}/v1/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(tree) });
    if (res.status !== 201) say(`${RUNTIME.name} refused the flow: ${res.status} ${await res.text()}`);
  } else {
    await new Flows(transport).add(tree);
  }
  const merged = await queue.waitFor('pdf-1', { timeoutMs: 30_000 });
  total += 5;
  await settled();
  const flowTimes = { lastChild: 0, parentStarts: [] as number[] };
  for (let after = flowFrom; ; ) {
    const page = await queue.readEvents({ after, limit: 1000 });
    for (const e of page.events) {
      if (e.event === 'completed' && e.jobId.startsWith('JOB:pdf-1.')) flowTimes.lastChild = Math.max(flowTimes.lastChild, e.time);
      if (e.event === 'active' && e.jobId === 'JOB:pdf-1') flowTimes.parentStarts.push(e.time);
    }
    if (page.next === after) break;
    after = page.next;
  }
  const pages = (await queue.getJob('pdf-1'))?.children?.map((c) => (c.result as { page: number }).page);
  say(
    `flow: pdf-1 merged ${JSON.stringify(merged)} from pages ${JSON.stringify(pages)}, run ${flowTimes.parentStarts.length} time(s), after the last page (${flowTimes.parentStarts.every((t) => t >= flowTimes.lastChild)})`,
  );

  // durable steps: the signup flow, its steps run by either runtime, its event sent over HTTP
  say(await runSignupDemo({ transport, consumerTransport: connectTarget(redis.target), edgeUrl, runtimeName: RUNTIME.name, say }));
  // a timeout per job: one job's own 200 ms beside one under the consumer's (none)
  say(await runTimeoutDemo({ transport, consumerTransport: connectTarget(redis.target), say }));
  say(await runCancelDemo({ transport, consumerTransport: connectTarget(redis.target), say }));
  say(await runKeysDemo({ transport, consumerTransport: connectTarget(redis.target), say }));
  // BullMQ code on echomq (echomq/bullmq), and bull-board showing it (echomq/bull-board)
  const bullTransport = connectTarget(redis.target);
  say(await runBullMQDemo({ connection: bullTransport.redis, say }));
  await bullTransport.close();

  // a partitioned queue: 8 partitions, each a queue in a slot of its own (on a cluster, spread over
  // the masters); one Node consumer over all of them (one subscriber connection per master), the
  // Worker's beat over all of them; a group stays in its partition, so each runs in order
  const parts = new PartitionedQueue<DemoPayload>(transport, PARTS, { partitions: PARTITIONS });
  const partsTransport = connectTarget(redis.target);
  const partsRuns = new Map<string, number[]>();
  const partsConsumer = new Consumer<DemoPayload>(
    partsTransport,
    new PartitionedQueue<DemoPayload>(partsTransport, PARTS, { partitions: PARTITIONS }),
    async (job) => {
      partsRuns.set(job.group ?? '', [...(partsRuns.get(job.group ?? '') ?? []), Number(job.payload.message?.split('#')[1])]);
      await sleep(job.payload.sleepMs ?? 0);
    },
    { concurrency: 4, ownsTransport: true },
  ).start();
  cleanups.push(() => partsConsumer.stop(2_000));
  for (let g = 0; g < 8; g++) await parts.setGroupLimit(`tenant-${g}`, 1);
  const partsJobs = (from: number) => Array.from({ length: 16 }, (_, i) => ({ payload: { kind: 'report' as const, message: `tenant-${i % 8} #${from + i}`, sleepMs: 20 }, group: `tenant-${i % 8}` }));
  await parts.addBulk(partsJobs(0));
  let partsTotal = 16;
  if (edgeUrl) {
    const res = await fetch(`${edgeUrl}/v1/queues/${PARTS}/jobs/bulk`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jobs: partsJobs(16) }) });
    if (res.status !== 201) say(`${RUNTIME.name} refused the partitioned bulk enqueue: ${res.status} ${await res.text()}`);
    else partsTotal += 16;
  }
  for (let i = 0; i < 150 && (await parts.counts()).completed < partsTotal; i++) await sleep(200);
  const masters = redis.target.kind === 'cluster' ? new Map<string, number>() : undefined;
  if (masters && 'slots' in transport.redis) {
    for (const part of parts.parts) {
      const master = transport.redis.slots[slotOf(keyspace(part.name).key('meta'))]?.[0] ?? '?';
      masters.set(master, (masters.get(master) ?? 0) + 1);
    }
  }
  const byNode = [...partsRuns.values()].reduce((n, runs) => n + runs.length, 0);
  const inOrder = [...partsRuns.values()].every((runs) => runs.every((n, i) => i === 0 || n > runs[i - 1]!));
  say(
    `partitioned: "${PARTS}" over ${PARTITIONS} partitions${masters ? ` (on the masters: ${[...masters.values()].join('/')})` : ''}: ${(await parts.counts()).completed} of ${partsTotal} jobs completed, ${byNode} by the Node consumer${edgeUrl ? ` and the rest by ${RUNTIME.name}` : ''}; each group in order on Node (${inOrder})`,
  );

  const overview = (await queueOverviews(transport)).find((o) => o.queue === QUEUE);
  say(`/metrics: emq_scheduler_fired_total{queue="${QUEUE}"} ${overview?.firedTotal ?? 0}, emq_rate_limited_total{queue="${QUEUE}"} ${overview?.rateLimitedTotal ?? 0}`);

  const seen = new Map<string, number>();
  for (let after = '0'; ; ) {
    const page = await queue.readEvents({ after, limit: 1000 });
    for (const e of page.events) seen.set(e.event, (seen.get(e.event) ?? 0) + 1);
    if (page.next === after) break;
    after = page.next;
  }
  say(`events  ${JSON.stringify(Object.fromEntries(seen))}`);
  say(await dashboardCheck(dashboard.url, edgeUrl));
  if (once) return stop(0);
  const env = redis.target.kind === 'url' ? `REDIS_URL=${redis.target.url}` : `REDIS_CLUSTER_NODES=${redis.target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  say(`still serving "${QUEUE}"; try: ${env} npx emq enqueue ${QUEUE} '{"message":"hi"}'${edgeUrl ? `  or  curl -X POST ${edgeUrl}/v1/queues/${QUEUE}/jobs -H 'content-type: application/json' -d '{"payload":{"message":"hi"}}'` : ''}`);
  say('Ctrl-C stops everything');
}

void main();
