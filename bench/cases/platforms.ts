import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { esbuild } from '../../tools/esbuild.js';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { scripts } from '../../src/generated/scripts.js';
import { createLambdaHandler, type LambdaEnv } from '../../src/lambda/index.js';
import { createNetlifyFunction, createNetlifyScheduledFunction } from '../../src/netlify/index.js';
import { createVercelHandlers } from '../../src/vercel/index.js';
import { Leases } from '../../src/lease/leases.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { Queue } from '../../src/queue/queue.js';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, sized } from '../lib/context.js';

const root = join(import.meta.dirname, '..', '..');

/**
 * What each serverless platform costs in Redis requests (issue 33, section 4), measured as the
 * Worker's edge cases are (bench/cases/edge.ts): the platform's adapter run on Node over
 * @upstash/redis through the Upstash-REST bridge, which counts every HTTP request (each a billed
 * Upstash request). One case per platform, the same figures each:
 * - `idle_requests_per_event`: a scheduled event of a host serving three queues with nothing to claim;
 * - `requests_per_job` / `burst_requests_per_job`: jobs enqueued through the platform's API, one at
 *   a time (20 ms apart, one warm instance) and all at once, counting the enqueues themselves;
 * - `delayed_requests_per_job`: the same one at a time, each job delayed 500 ms;
 * - `requests_per_slot`: a scheduled event that fires an every-200 ms scheduler for its 2 s;
 * - `left_behind`: jobs no drain after an enqueue ran (left to the next scheduled event);
 * - `bundle_kb` / `bundle_gzip_kb`: the adapter's entry bundled and minified with esbuild, as a
 *   deployment ships it;
 * - `cold_start_ms`: a fresh process loading the adapter and answering its first enqueue, beside
 *   `runtime_start_ms`, the bare runtime's start (see coldStart).
 * On Lambda and Netlify (whose functions run on Lambda) a burst is a request per instance (Lambda
 * runs one request at a time in an instance and scales out for the rest): each a fresh handler,
 * none sharing another's drain; on Vercel (Fluid compute), Deno and Cloudflare one instance takes
 * them together. Deno runs in the `deno` binary (bench/children/deno-platform.ts, bundled with
 * esbuild), driven over its HTTP API and stdin; the others in this process, as they are deployed.
 */
interface PlatformDriver {
  /** A scheduled event, resolved when it and what it started are over. */
  scheduled(): Promise<void>;
  /** An HTTP request to the API (POST with a JSON body), resolved with the answer. */
  post(path: string, body: unknown): Promise<Response>;
  /** Resolves once what the requests started after their answers (waitUntil) is over. */
  settled(): Promise<void>;
  /** Ends the instance (a process of its own: killed by its PID). */
  close?(): Promise<void>;
}

/** Makes a warm instance of the platform serving `queues` (no-op handlers) on `env`. */
type PlatformFactory = (queues: readonly string[], env: PlatformEnv) => PlatformDriver;

/** The environment every platform's instance gets: the bridge's REST endpoint, the API token, the drain window. */
type PlatformEnv = WorkerEnv & LambdaEnv;

const handlersFor = (queues: readonly string[]): Record<string, () => void> => Object.fromEntries(queues.map((q) => [q, () => {}]));

/** Cloudflare: createWorker, its waitUntil promises awaited as the isolate would keep them. */
const cloudflare: PlatformFactory = (queues, env) => {
  const w = createWorker({ handlers: handlersFor(queues), log: () => {} });
  const pending: Array<Promise<unknown>> = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
  const settled = async (): Promise<void> => {
    while (pending.length > 0) await Promise.allSettled(pending.splice(0));
  };
  return {
    scheduled: async () => {
      await w.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctx);
      await settled();
    },
    post: async (path, body) =>
      w.fetch(new Request(`http://edge${path}`, { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }), env, ctx),
    settled,
  };
};

/** A Function URL request, as Lambda hands it to the handler. */
function functionUrlEvent(path: string, body: unknown): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'fn.lambda-url.us-east-1.on.aws', 'content-type': 'application/json', authorization: 'Bearer bench' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'fn',
      domainName: 'fn.lambda-url.us-east-1.on.aws',
      domainPrefix: 'fn',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: randomBytes(8).toString('hex'),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/** Lambda: createLambdaHandler invoked as Lambda invokes it, a minute left each time. */
const lambda: PlatformFactory = (queues, env) => {
  const handler = createLambdaHandler({ handlers: handlersFor(queues), log: () => {}, env: { ...env } });
  const context = { getRemainingTimeInMillis: () => 60_000 };
  return {
    scheduled: async () => void (await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' }, context)),
    post: async (path, body) => {
      const answer = (await handler(functionUrlEvent(path, body), context)) as { statusCode: number; body?: string };
      return new Response(answer.body ?? null, { status: answer.statusCode });
    },
    // an invocation answers only once its drain is over: nothing runs after
    settled: async () => {},
  };
};

/** A POST of `body` as JSON to `path` with the bench's bearer token. */
const postRequest = (path: string, body: unknown): Request =>
  new Request(`http://platform${path}`, { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Collects what requests hand `waitUntil`, and awaits it. */
function keptAlive(): { waitUntil: (p: Promise<unknown>) => void; settled: () => Promise<void> } {
  const pending: Array<Promise<unknown>> = [];
  return {
    waitUntil: (p) => void pending.push(p),
    settled: async () => {
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    },
  };
}

/** Vercel: createVercelHandlers with Vercel's waitUntil (as on Vercel), its cron route called with CRON_SECRET. */
const vercel: PlatformFactory = (queues, env) => {
  const alive = keptAlive();
  const handlers = createVercelHandlers({ handlers: handlersFor(queues), log: () => {}, env: { ...env, CRON_SECRET: 'cron' }, waitUntil: alive.waitUntil });
  return {
    scheduled: async () => {
      await handlers.cron(new Request('http://platform/api/emq-cron', { headers: { Authorization: 'Bearer cron' } }));
      await alive.settled();
    },
    post: (path, body) => handlers.POST(postRequest(path, body)),
    settled: alive.settled,
  };
};

/** Netlify: createNetlifyFunction with Netlify's context.waitUntil, the scheduled function POSTed as Netlify's scheduler does. */
const netlify: PlatformFactory = (queues, env) => {
  const alive = keptAlive();
  const api = createNetlifyFunction({ handlers: handlersFor(queues), log: () => {}, env: { ...env }, basePath: '' });
  const beat = createNetlifyScheduledFunction({ handlers: handlersFor(queues), log: () => {}, env: { ...env } });
  return {
    scheduled: async () => {
      await beat(new Request('http://platform/.netlify/functions/emq-beat', { method: 'POST', body: JSON.stringify({ next_run: new Date().toISOString() }) }), {});
    },
    post: (path, body) => api(postRequest(path, body), { waitUntil: alive.waitUntil }),
    settled: alive.settled,
  };
};

/** The deno-platform child bundled once per run, for the Deno instances. */
let denoBundle: Promise<string> | undefined;
function bundledDenoApp(): Promise<string> {
  denoBundle ??= (async () => {
    const outfile = join(mkdtempSync(join(tmpdir(), 'echomq-bench-deno-')), 'app.mjs');
    await esbuild().build({ entryPoints: [join(root, 'bench', 'children', 'deno-platform.ts')], bundle: true, format: 'esm', platform: 'node', outfile, logLevel: 'silent' });
    return outfile;
  })();
  return denoBundle;
}

/** Deno: serveDeno in a `deno` process of its own, over its API and stdin (`beat`, `close`). */
const deno: PlatformFactory = (queues, env) => {
  const started = (async () => {
    const child: ChildProcessWithoutNullStreams = spawn(join(root, 'node_modules', '.bin', 'deno'), ['run', '--allow-net', '--allow-env', await bundledDenoApp()], {
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_DIR: mkdtempSync(join(tmpdir(), 'echomq-bench-deno-dir-')), QUEUES: queues.join(','), ...env },
    });
    // a line to a process that has ended (killed at the end) is dropped, not thrown
    child.stdin.on('error', () => {});
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => JSON.parse(((await lines.next()).value as string | undefined) ?? '{}') as Record<string, unknown>;
    const { url } = (await next()) as { url: string };
    return { child, next, url };
  })();
  let turn: Promise<unknown> = Promise.resolve();
  /** A line to the app and its answer, one at a time. */
  const ask = (line: string): Promise<unknown> => {
    const answered = turn.then(async () => {
      const app = await started;
      app.child.stdin.write(`${line}\n`);
      return app.next();
    });
    turn = answered.catch(() => {});
    return answered;
  };
  return {
    scheduled: async () => void (await ask('beat')),
    post: async (path, body) => fetch(`${(await started).url}${path}`, { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    // its drains run on in the process: `close` waits for them (and ends it)
    settled: async () => void (await ask('close')),
    close: async () => {
      const { child } = await started;
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    },
  };
};

/**
 * A module that, loaded in a fresh process, builds the platform's adapter for queue `Q` on `ENV`
 * (both from its environment, as JSON) and answers one enqueue through its API, then prints
 * `answered <status>`: what a cold start costs, load and first request (the queue's registration,
 * the enqueue and what rides with it) together. Bundled with esbuild, as a deployment ships it.
 */
const coldEntry = (imports: string, answer: string): string => `${imports}
const ENV = JSON.parse(process.env.COLD_ENV ?? '{}');
const Q = process.env.COLD_QUEUE ?? 'cold';
const handlers = { [Q]: () => {} };
const request = () => new Request('http://platform/v1/queues/' + Q + '/jobs', { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: 1 }) });
const status = await (async () => { ${answer} })();
console.log('answered ' + status);
process.exit(0);
`;

/** Each platform's factory, whether a burst shares one instance, the entry its bundle is measured from, and its cold start's module (Deno: none, its app is bench/children/deno-platform.ts). */
const PLATFORMS: Readonly<Record<string, { factory: PlatformFactory; burstShares: boolean; entry: string; cold?: string }>> = {
  cloudflare: {
    factory: cloudflare,
    burstShares: true,
    entry: 'export { createWorker } from "./src/edge/index.ts";',
    cold: coldEntry(
      'import { createWorker } from "./src/edge/index.ts";',
      'return (await createWorker({ handlers, log: () => {} }).fetch(request(), ENV, { waitUntil: () => {} })).status;',
    ),
  },
  lambda: {
    factory: lambda,
    burstShares: false,
    entry: 'export { createLambdaHandler } from "./src/lambda/index.ts";',
    cold: coldEntry(
      'import { createLambdaHandler } from "./src/lambda/index.ts";',
      `const r = await request(); const body = await r.text();
       const event = { version: '2.0', routeKey: '$default', rawPath: new URL(r.url).pathname, rawQueryString: '', headers: Object.fromEntries(r.headers), requestContext: { http: { method: 'POST', path: new URL(r.url).pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' }, domainName: 'fn', requestId: 'cold', stage: '$default' }, body, isBase64Encoded: false };
       return (await createLambdaHandler({ handlers, log: () => {}, env: ENV })(event, { getRemainingTimeInMillis: () => 60_000 })).statusCode;`,
    ),
  },
  vercel: {
    factory: vercel,
    burstShares: true,
    entry: 'export { createVercelHandlers } from "./src/vercel/index.ts";',
    cold: coldEntry(
      'import { createVercelHandlers } from "./src/vercel/index.ts";',
      'return (await createVercelHandlers({ handlers, log: () => {}, env: ENV, waitUntil: () => {} }).POST(request())).status;',
    ),
  },
  netlify: {
    factory: netlify,
    burstShares: false,
    entry: 'export { createNetlifyFunction, createNetlifyScheduledFunction } from "./src/netlify/index.ts";',
    cold: coldEntry(
      'import { createNetlifyFunction } from "./src/netlify/index.ts";',
      "return (await createNetlifyFunction({ handlers, log: () => {}, env: ENV, basePath: '' })(request(), { waitUntil: () => {} })).status;",
    ),
  },
  deno: { factory: deno, burstShares: true, entry: 'export { serveDeno } from "./src/deno/index.ts";' },
};

/** A bridge over the bench's Redis with every script cached (as a Redis that served before has them), and its request count. */
async function onBridge<T>(ctx: BenchContext, work: (env: PlatformEnv, requests: () => number, transport: UpstashTransport) => Promise<T>): Promise<T> {
  const token = randomBytes(12).toString('hex');
  const bridge = await startBridge({ redisUrl: ctx.url, token });
  try {
    for (const script of Object.values(scripts)) await ctx.admin.script('LOAD', script.lua);
    const transport = UpstashTransport.connect({ url: bridge.url, token });
    const warm = new Queue(transport, benchQueueName('platform-warm'));
    await warm.stats();
    await new Leases(warm).beat({ n: 0, leaseMs: 1000 });
    const env: PlatformEnv = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'bench', EMQ_DRAIN_ON_ENQUEUE_MS: '1000' };
    bridge.reset();
    return await work(env, () => bridge.stats().requests, transport);
  } finally {
    await bridge.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The adapter's entry bundled for its platform, minified: its size and gzipped size in KiB. */
async function bundleSize(entry: string): Promise<{ bundle_kb: number; bundle_gzip_kb: number }> {
  const out = await esbuild().build({
    stdin: { contents: entry, resolveDir: root, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    write: false,
    logLevel: 'silent',
  });
  const bytes = out.outputFiles![0]!.contents;
  return { bundle_kb: Math.round(bytes.length / 1024), bundle_gzip_kb: Math.round(gzipSync(bytes).length / 1024) };
}

/** Spawns `command args` and resolves to the ms until its stdout's first line matching `ready`; rejects when it exits first. */
function timeToLine(command: string, args: readonly string[], env: Record<string, string>, ready: RegExp): Promise<number> {
  const t0 = performance.now();
  const child = spawn(command, args, { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!ready.test(line)) return;
      resolve(performance.now() - t0);
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    });
    child.once('exit', (code) => setTimeout(() => reject(new Error(`${command} exited ${code} before ${ready}: ${stderr.slice(0, 400)}`)), 50));
  });
}

/**
 * A cold start: a fresh process of the platform's runtime loads the adapter's bundle and answers
 * one enqueue (its first request: the queue's registration, the enqueue and what rides with it),
 * in ms from the spawn, median of 3; beside it the bare runtime's start (a process printing a
 * line), so the difference is the adapter's.
 */
async function coldStart(platform: string, env: PlatformEnv): Promise<{ cold_start_ms: number; runtime_start_ms: number }> {
  const median = (xs: number[]): number => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const dir = mkdtempSync(join(tmpdir(), `echomq-bench-cold-${platform}-`));
  const cold: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 3; i++) {
    const queue = benchQueueName(`${platform}-cold`);
    if (platform === 'deno') {
      const denoEnv = { NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_DIR: dir };
      bare.push(await timeToLine(join(root, 'node_modules', '.bin', 'deno'), ['eval', 'console.log("up")'], denoEnv, /^up$/));
      // the app serves once its url line is out: the first request follows from here
      const app = spawn(join(root, 'node_modules', '.bin', 'deno'), ['run', '--allow-net', '--allow-env', await bundledDenoApp()], { env: { PATH: process.env['PATH'] ?? '', ...denoEnv, QUEUES: queue, ...env } });
      const t0 = performance.now();
      const lines = createInterface({ input: app.stdout })[Symbol.asyncIterator]();
      const { url } = JSON.parse((await lines.next()).value as string) as { url: string };
      await fetch(`${url}/v1/queues/${queue}/jobs`, { method: 'POST', headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' }, body: JSON.stringify({ payload: 1 }) });
      cold.push(performance.now() - t0);
      if (app.pid !== undefined) process.kill(app.pid, 'SIGKILL');
      continue;
    }
    const outfile = join(dir, 'cold.mjs');
    if (i === 0) {
      // an ES module bundle of CommonJS packages (ioredis) needs a `require` of its own
      const banner = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";
      await esbuild().build({ stdin: { contents: PLATFORMS[platform]!.cold!, resolveDir: root, loader: 'ts' }, bundle: true, minify: true, format: 'esm', platform: 'node', outfile, banner: { js: banner }, logLevel: 'silent' });
    }
    bare.push(await timeToLine(process.execPath, ['-e', 'console.log("up")'], {}, /^up$/));
    cold.push(await timeToLine(process.execPath, [outfile], { COLD_ENV: JSON.stringify(env), COLD_QUEUE: queue }, /^answered 20[01]$/));
  }
  return { cold_start_ms: median(cold), runtime_start_ms: median(bare) };
}

/** The economics of one platform (see above). */
async function economics(ctx: BenchContext, platform: string): Promise<Figures> {
  const { factory: make, burstShares, entry } = PLATFORMS[platform]!;
  const n = sized(ctx, { full: 50, quick: 20, smoke: 3 });
  const made: PlatformDriver[] = [];
  const factory: PlatformFactory = (queues, env) => {
    const instance = make(queues, env);
    made.push(instance);
    return instance;
  };
  try {
    return await measure(ctx, platform, factory, burstShares, entry, n);
  } finally {
    await Promise.all(made.map((instance) => instance.close?.()));
  }
}

/** economics' measures, on instances `factory` makes. */
async function measure(ctx: BenchContext, platform: string, factory: PlatformFactory, burstShares: boolean, entry: string, n: number): Promise<Figures> {
  return onBridge(ctx, async (env, requests, transport) => {
    // an idle event over three queues, after the instance's first (which may load scripts)
    const idleNames = [1, 2, 3].map(() => benchQueueName(`${platform}-idle`));
    for (const name of idleNames) await new Queue(transport, name).add(1, { delayMs: 3_600_000 });
    const idle = factory(idleNames, env);
    await idle.scheduled();
    let before = requests();
    const events = 5;
    for (let i = 0; i < events; i++) await idle.scheduled();
    const idleRequests = (requests() - before) / events;

    const through = async (jobs: number, gapMs: number | null, delayMs: number): Promise<{ perJob: number; completed: number }> => {
      const name = benchQueueName(`${platform}-api`);
      const shared = factory([name], env);
      const body = (i: number): unknown => ({ payload: i, ...(delayMs > 0 ? { delayMs } : {}) });
      before = requests();
      if (gapMs === null) {
        const instances = Array.from({ length: jobs }, () => (burstShares ? shared : factory([name], env)));
        await Promise.all(instances.map((instance, i) => instance.post(`/v1/queues/${name}/jobs`, body(i))));
        await Promise.all([...new Set(instances)].map((instance) => instance.settled()));
      } else {
        for (let i = 0; i < jobs; i++) {
          await shared.post(`/v1/queues/${name}/jobs`, body(i));
          await sleep(gapMs);
        }
        await shared.settled();
      }
      const spent = requests() - before;
      const { counts } = await new Queue(transport, name).stats();
      return { perJob: spent / jobs, completed: counts.completed };
    };
    const single = await through(n, 20, 0);
    const burst = await through(n * 4, null, 0);
    const delayed = await through(n, 20, 500);

    // a scheduler every 200 ms, fired by one scheduled event drained for 2 s
    const slotName = benchQueueName(`${platform}-slots`);
    const slots = new Queue(transport, slotName);
    await slots.upsertScheduler('tick', { every: 200 }, { payload: 1 });
    const ticking = factory([slotName], { ...env, EMQ_BEAT_DEADLINE_MS: '2000', EMQ_JOB_TIMEOUT_MS: '100' });
    before = requests();
    await ticking.scheduled();
    const slotRequests = requests() - before;
    const fired = (await slots.stats()).counts.completed;
    await slots.removeScheduler('tick');

    return {
      idle_requests_per_event: idleRequests,
      requests_per_job: single.perJob,
      burst_requests_per_job: burst.perJob,
      delayed_requests_per_job: delayed.perJob,
      requests_per_slot: fired > 0 ? slotRequests / fired : Number.NaN,
      left_behind: n * 6 - single.completed - burst.completed - delayed.completed,
      jobs: n * 6,
      ...(await bundleSize(entry)),
      ...(await coldStart(platform, env)),
    };
  });
}

/** `platform-<name>`: one platform's economics (see above). */
const platformCase = (platform: string): BenchCase => ({
  name: `platform-${platform}`,
  impls: ['echomq'],
  run: (ctx) => economics(ctx, platform),
});

export const platformCloudflare = platformCase('cloudflare');
export const platformLambda = platformCase('lambda');
export const platformVercel = platformCase('vercel');
export const platformNetlify = platformCase('netlify');
export const platformDeno = platformCase('deno');
