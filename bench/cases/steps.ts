import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { scripts } from '../../src/generated/scripts.js';
import type { Handler } from '../../src/handler.js';
import { startBridge } from '../../src/node/bridge/index.js';
import { Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { freePort } from '../../src/node/local-redis.js';
import { Queue } from '../../src/queue/queue.js';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import type { Replication, Reply, ScriptCall } from '../../src/transport.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, sized, startMeter } from '../lib/context.js';
import { drain } from '../lib/drain.js';
import { ECHO_QUEUE_OPTIONS } from '../lib/impls.js';
import { CountingTransport } from '../lib/round-trips.js';
import { epochMs, latch, latencies, round, sleep, until } from '../lib/stats.js';

/**
 * `steps`: durable steps, a 10-step program per job (9 `step.run` with trivial work, a
 * `step.sleep` of 50 ms after the fifth), against Cloudflare Workflows running the same program.
 *
 * echomq (one line):
 * - Node: 3,000 jobs (quick 300) on one Consumer at concurrency 100, events off (as process-c100
 *   runs): steps a second (from the consumer's start to the last completion); round trips per
 *   step (its requests, counted by the transport) beside a plain job's at c100 in the same round
 *   (lib/drain, as process-c100 counts, 10 jobs a program: as many units as steps), and the
 *   requests that carried a step write; commands and Redis CPU per step; the gap from one step's
 *   end to the next one's start in the same run of the handler (each result is its start and end,
 *   the clock read inside the step); a sleep's lateness, its record's `until` (the server's clock,
 *   this machine's) to the start of the step after it, and its promotion (the record's
 *   finishedAt) less `until`; its overrun, the step after it starting so long after the step
 *   before it ended, less the sleep (what the anchor can measure too). `light_*`: the lateness
 *   again with 50 jobs, fewer than the slots, where no resumed job waits for one.
 * - Edge (`edge_*`): the same program on the Worker's code as bench/cases/edge.ts runs it
 *   (`createWorker` on Node over the Upstash-REST bridge, which counts requests), 1,000 jobs
 *   (quick 200) drained by scheduled events: requests per step (every request of the events, the
 *   last acknowledgements included), steps a second to the last step done.
 * workflows: `wrangler dev` (offline) on bench/workflows/, every instance created at once through
 * its fetch handler (Workflows has no concurrency to set), each reporting its marks when done:
 * steps a second from the create request to the last report, the gap and the overrun as above
 * (a ms clock); its lateness is against the clock read just before `step.sleep` (an upper
 * bound). If wrangler dev cannot start, the line says `available: 0` and stderr has its error.
 */

/** Run steps before the sleep, run steps in all, steps in all, and the sleep (ms): as bench/workflows/index.js. */
const BEFORE = 5;
const RUNS = 9;
const STEPS_PER_JOB = RUNS + 1;
const SLEEP_MS = 50;
const CONCURRENCY = 100;
/** The longest one side may take to run its jobs before the case fails rather than hang. */
const LIMIT_MS = 300_000;

/** A run step's result: when its work started and ended (epoch ms). */
interface Mark {
  readonly s: number;
  readonly e: number;
}

/** What the programs measured, added to as each job finishes. */
class Samples {
  readonly gaps: number[] = [];
  readonly late: number[] = [];
  readonly overrun: number[] = [];
  readonly promoted: number[] = [];
  done = 0;
  /** When the last program finished its steps (performance.now()). */
  lastAt = 0;

  /**
   * One finished program's marks, in step order, its sleep's due time (epoch ms) if known, and
   * when its sleep's record says it was promoted (finishedAt, server ms) if it does.
   */
  add(marks: readonly Mark[], due: number | undefined, promotedAt?: number): void {
    for (let k = 0; k + 1 < marks.length; k++) {
      if (k + 1 !== BEFORE) this.gaps.push(marks[k + 1]!.s - marks[k]!.e);
    }
    const after = marks[BEFORE]!.s;
    this.overrun.push(after - marks[BEFORE - 1]!.e - SLEEP_MS);
    if (due !== undefined) this.late.push(after - due);
    if (due !== undefined && promotedAt !== undefined) this.promoted.push(promotedAt - due);
    this.done++;
    this.lastAt = performance.now();
  }

  figures(prefix = ''): Figures {
    const gap = latencies(this.gaps);
    const late = latencies(this.late);
    const overrun = latencies(this.overrun);
    const promoted = latencies(this.promoted);
    return {
      [`${prefix}gap_p50_ms`]: gap.p50_ms,
      [`${prefix}gap_p99_ms`]: gap.p99_ms,
      [`${prefix}resume_late_p50_ms`]: late.p50_ms,
      [`${prefix}resume_late_p99_ms`]: late.p99_ms,
      ...(this.promoted.length > 0 ? { [`${prefix}promote_late_p50_ms`]: promoted.p50_ms, [`${prefix}promote_late_p99_ms`]: promoted.p99_ms } : {}),
      [`${prefix}sleep_overrun_p50_ms`]: overrun.p50_ms,
      [`${prefix}sleep_overrun_p99_ms`]: overrun.p99_ms,
    };
  }
}

/** The program as an echomq handler: each job's samples taken by the run that finishes it (its replayed marks from the record). */
function program(samples: Samples): Handler {
  return async (job, { step }) => {
    const marks: Mark[] = [];
    for (let i = 1; i <= RUNS; i++) {
      if (i === BEFORE + 1) await step.sleep('nap', SLEEP_MS);
      marks.push(
        await step.run(`s${i}`, () => {
          const s = epochMs();
          return { s, e: epochMs() };
        }),
      );
    }
    const nap = job.steps?.find((r) => r.kind === 'sleep');
    samples.add(marks, nap?.until, nap?.finishedAt);
  };
}

/** A CountingTransport that also counts the requests carrying a step write (lua/step.lua). */
class StepCountingTransport extends CountingTransport {
  stepWrites = 0;

  override evalsha(calls: readonly ScriptCall[], replication?: Replication): Promise<Array<Reply | Error>> {
    if (calls.some((c) => c.script.name === 'step')) this.stepWrites++;
    return super.evalsha(calls, replication);
  }
}

/** Resolves with `promise`, or rejects after LIMIT_MS naming `what`. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`bench: ${what} did not finish within ${LIMIT_MS} ms`)), LIMIT_MS)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** `n` programs' jobs in `queue`, a fresh one, its events turned off first (as process-c100 runs). */
async function enqueuePrograms(queue: Queue, n: number): Promise<void> {
  await queue.setEvents({ maxLen: 0 });
  for (let i = 0; i < n; i += 1000) await queue.addBulk(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ payload: i + j })));
}

/** Every script cached, as on a Redis that served queues before: a first NOSCRIPT and its EVAL are no step's cost. */
async function loadScripts(ctx: BenchContext): Promise<void> {
  for (const script of Object.values(scripts)) await ctx.admin.script('LOAD', script.lua);
}

/** The Node side: `n` programs on one Consumer at CONCURRENCY. */
async function onNode(ctx: BenchContext, n: number): Promise<Figures> {
  const name = benchQueueName('steps');
  const producer = IoredisTransport.connect(ctx.url);
  await enqueuePrograms(new Queue(producer, name, ECHO_QUEUE_OPTIONS), n);
  await producer.close();
  await loadScripts(ctx);
  const transport = new StepCountingTransport(IoredisTransport.connect(ctx.url));
  const queue = new Queue(transport, name, ECHO_QUEUE_OPTIONS);
  await transport.ping();
  const samples = new Samples();
  const done = latch<number>();
  let completed = 0;
  const consumer = new Consumer(transport, queue, program(samples), {
    concurrency: CONCURRENCY,
    hooks: {
      onCompleted: () => {
        if (++completed === n) done.resolve(performance.now());
      },
      onError: (error) => console.error('echomq consumer error:', error),
    },
  });
  const requests0 = transport.requests;
  const writes0 = transport.stepWrites;
  const meter = await startMeter(ctx);
  const t0 = performance.now();
  void consumer.start();
  try {
    const t1 = await within(done.promise, `${n} step programs on Node`);
    const m = await meter.stop();
    const steps = n * STEPS_PER_JOB;
    return {
      n,
      steps_per_s: round(steps / ((t1 - t0) / 1000), 0),
      round_trips_per_step: round((transport.requests - requests0) / steps, 4),
      step_write_requests_per_step: round((transport.stepWrites - writes0) / steps, 4),
      commands_per_step: round(m.commands / steps),
      redis_us_per_step: round(m.redisUs / steps),
      script_us_per_step: round(m.scriptUs / steps),
      ...samples.figures(),
    };
  } finally {
    await consumer.stop();
    await transport.close();
  }
}

/** The edge side: `n` programs' jobs drained by the Worker's scheduled events over the counting bridge. */
async function onEdge(ctx: BenchContext, n: number): Promise<Figures> {
  const token = randomBytes(12).toString('hex');
  const bridge = await startBridge({ redisUrl: ctx.url, token });
  try {
    await loadScripts(ctx);
    const name = benchQueueName('steps-edge');
    await enqueuePrograms(new Queue(UpstashTransport.connect({ url: bridge.url, token }), name, ECHO_QUEUE_OPTIONS), n);
    const samples = new Samples();
    const worker = createWorker({ handlers: { [name]: program(samples) }, log: () => {} });
    const pending: Array<Promise<unknown>> = [];
    const waitUntil = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
    const env: WorkerEnv = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'bench' };
    bridge.reset();
    const t0 = performance.now();
    // an event drains until the queue is dry with nothing due before its deadline, or its request
    // budget (900) is spent: the next event goes on
    for (let events = 0; samples.done < n; events++) {
      if (events === 50) throw new Error(`bench: 50 scheduled events ran ${samples.done} of ${n} step programs`);
      await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, waitUntil);
      while (pending.length > 0) await Promise.allSettled(pending.splice(0));
    }
    // to the last step done: the last completions' acknowledgement waits up to a second for a
    // request to ride with (EMQ_ACK_WITHIN_MS), by design, and says nothing of the steps' pace
    const ms = samples.lastAt - t0;
    const steps = n * STEPS_PER_JOB;
    return {
      edge_n: n,
      edge_steps_per_s: round(steps / (ms / 1000), 0),
      edge_requests_per_step: round(bridge.stats().requests / steps, 3),
      ...samples.figures('edge_'),
    };
  } finally {
    await bridge.close();
  }
}

/** wrangler kept offline, as test/edge/worker-bundle.ts and examples/local-stack.ts keep it. */
const OFFLINE_WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CI: 'true',
};

/** `wrangler dev` on a copy of bench/workflows/ (its state in the copy), serving once it says Ready. */
interface RunningWorkflows {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts `wrangler dev` in a process group of its own (wrangler starts workerd under it: the group
 * goes together), rejecting with its output when it exits or is not ready within 60 s.
 */
async function startWorkflows(ctx: BenchContext, reportUrl: string): Promise<RunningWorkflows> {
  const dir = mkdtempSync(join(tmpdir(), 'echomq-bench-workflows-'));
  cpSync(join(ctx.benchDir, 'workflows'), dir, { recursive: true });
  const port = await freePort();
  const wrangler = join(ctx.benchDir, '..', 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  const args = [wrangler, 'dev', '--port', String(port), '--ip', '127.0.0.1', '--show-interactive-dev-session=false', '--var', `REPORT_URL:${reportUrl}`];
  const child: ChildProcess = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, ...OFFLINE_WRANGLER_ENV }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const kill = (): void => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  };
  process.once('exit', kill);
  const stop = async (): Promise<void> => {
    process.off('exit', kill);
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone already
      }
      await Promise.race([exited, sleep(5000)]);
      kill();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let output = '';
  let ready = false;
  const read = (chunk: Buffer): void => {
    output += chunk.toString();
    if (/Ready on/.test(output)) ready = true;
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  try {
    await until(() => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`wrangler dev exited (${child.exitCode ?? child.signalCode})`);
      return ready;
    }, 60_000, 'wrangler dev ready', 50);
  } catch (error) {
    await stop();
    // without its colours: wrangler writes them to a pipe too
    throw new Error(`${(error as Error).message}: ${output.replace(/\u001b\[[0-9;]*m/g, '').trim()}`);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** A report of one Workflow instance, and when it arrived (epoch ms). */
interface WorkflowReport {
  readonly id: string;
  readonly marks: Mark[];
  readonly before: number;
  readonly at: number;
}

/** A loopback HTTP server collecting the instances' reports. */
async function reportServer(): Promise<{ url: string; reports: WorkflowReport[]; close: () => Promise<void> }> {
  const reports: WorkflowReport[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      reports.push({ ...(JSON.parse(body) as Omit<WorkflowReport, 'at'>), at: epochMs() });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, reports, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The anchor: `n` Workflow instances of the program under `wrangler dev`. */
async function onWorkflows(ctx: BenchContext, n: number): Promise<Figures> {
  const collector = await reportServer();
  let workflows: RunningWorkflows;
  try {
    workflows = await startWorkflows(ctx, collector.url);
  } catch (error) {
    await collector.close();
    // not faked: the anchor is reported missing, with why
    console.error(`# steps workflows: unavailable: ${(error as Error).message}`);
    return { available: 0 };
  }
  try {
    const tag = randomBytes(4).toString('hex');
    const create = async (ids: string[]): Promise<void> => {
      const response = await fetch(`${workflows.url}/create`, { method: 'POST', body: JSON.stringify({ ids }) });
      if (!response.ok) throw new Error(`bench: creating ${ids.length} Workflow instances answered ${response.status}: ${await response.text()}`);
    };
    // the first instance of a process starts its engine: not a step's cost
    await create([`warm-${tag}`]);
    await until(() => collector.reports.length >= 1, 60_000, 'the warm-up Workflow instance');
    collector.reports.length = 0;
    const t0 = epochMs();
    await create(Array.from({ length: n }, (_, i) => `run-${tag}-${i}`));
    await until(() => collector.reports.length >= n, LIMIT_MS, `${n} Workflow instances`, 20).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (${collector.reports.length} reported)`);
    });
    const t1 = Math.max(...collector.reports.map((r) => r.at));
    const samples = new Samples();
    for (const report of collector.reports) samples.add(report.marks, report.before + SLEEP_MS);
    return { available: 1, n, steps_per_s: round((n * STEPS_PER_JOB) / ((t1 - t0) / 1000), 0), ...samples.figures() };
  } finally {
    await workflows.stop();
    await collector.close();
  }
}

export const steps: BenchCase = {
  name: 'steps',
  impls: ['echomq', 'workflows'],
  async run(ctx, impl) {
    const n = sized(ctx, { full: 3000, quick: 300, smoke: 20 });
    // local Workflows took ~50 s for 1,000 instances here and did not finish 3,000 in 5 minutes
    if (impl === 'workflows') return onWorkflows(ctx, sized(ctx, { full: 1000, quick: 300, smoke: 20 }));
    // a plain job's round trips at c100 in the same state of the machine, as many jobs as steps
    const plain = await drain(ctx, 'echomq', { n: n * STEPS_PER_JOB, groups: 0, concurrency: CONCURRENCY, events: false });
    const node = await onNode(ctx, n);
    // the same with fewer jobs than slots: a resumed job never waits for a slot, so its lateness
    // is the due timer's and the claim's alone
    const light = await onNode(ctx, sized(ctx, { full: 50, quick: 50, smoke: 10 }));
    const edge = await onEdge(ctx, sized(ctx, { full: 1000, quick: 200, smoke: 10 }));
    const perJob = plain['round_trips_per_job'] as number;
    return {
      ...node,
      job_round_trips_per_job: perJob,
      step_to_job_round_trips: perJob > 0 ? round((node['round_trips_per_step'] as number) / perJob, 2) : null,
      light_n: light['n']!,
      light_resume_late_p50_ms: light['resume_late_p50_ms']!,
      light_resume_late_p99_ms: light['resume_late_p99_ms']!,
      ...edge,
    };
  },
};
