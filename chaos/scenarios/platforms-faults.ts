import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createWorker } from '../../src/edge/worker.js';
import { accountForJobs } from '../lib/edge-accounting.js';
import { startEdgeRig } from '../lib/edge-rig.js';
import { CHAOS_EVENTS_MAX_LEN } from '../lib/results-events.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const QUEUE = 'chaos-platforms';

/**
 * One warm Lambda instance in a child process (chaos/children/lambda-function.ts): invocations
 * one at a time, as Lambda gives an instance; every handler run reported to `onRun`. Killed by
 * its PID, an invocation in flight is lost with it (it rejects).
 */
class LambdaInstance {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (answer: { result?: unknown; error?: string }) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();
  readonly ready: Promise<void>;

  constructor(restUrl: string, token: string, onRun: (jobId: string, at: number) => void) {
    this.child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'children', 'lambda-function.ts'), restUrl, token, QUEUE], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let ready: () => void = () => {};
    this.ready = new Promise((resolve) => (ready = resolve));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      if (line === 'ready') return ready();
      const message = JSON.parse(line) as { run?: string; at?: number; id?: number; result?: unknown; error?: string };
      if (message.run !== undefined) onRun(message.run, message.at!);
      else if (message.id !== undefined) {
        this.waiting.get(message.id)?.resolve(message);
        this.waiting.delete(message.id);
      }
    });
    this.child.on('exit', () => {
      ready();
      for (const { reject } of this.waiting.values()) reject(new Error('the instance was killed'));
      this.waiting.clear();
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Invokes the function with `event`, after the invocations sent before it. */
  invoke(event: unknown): Promise<{ result?: unknown; error?: string }> {
    const run = this.queue.then(
      () =>
        new Promise<{ result?: unknown; error?: string }>((resolve, reject) => {
          if (!this.alive) return reject(new Error('the instance was killed'));
          const id = this.nextId++;
          this.waiting.set(id, { resolve, reject });
          this.child.stdin!.write(`${JSON.stringify({ id, event })}\n`);
        }),
    );
    this.queue = run.catch(() => {});
    return run;
  }

  kill(): void {
    if (this.alive && this.child.pid !== undefined) process.kill(this.child.pid, 'SIGKILL');
  }
}

/** A Function URL request (API Gateway v2 payload) enqueueing `{n}` with its client's key. */
function enqueueEvent(n: number): unknown {
  const path = `/v1/queues/${QUEUE}/jobs`;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'fn.lambda-url.us-east-1.on.aws', 'content-type': 'application/json', authorization: 'Bearer chaos', 'idempotency-key': `job-${n}` },
    requestContext: { accountId: '1', apiId: 'fn', domainName: 'fn.lambda-url.us-east-1.on.aws', domainPrefix: 'fn', http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'chaos' }, requestId: `r${n}`, routeKey: '$default', stage: '$default', time: '', timeEpoch: Date.now() },
    body: JSON.stringify({ payload: { n } }),
    isBase64Encoded: false,
  };
}

/**
 * One queue driven from two platforms at once over a faulty network (issue 33): the Worker's code
 * (`createWorker`, in this process) and AWS Lambda's (`createLambdaHandler`, warm instances in
 * child processes), both over @upstash/redis through one fault proxy in front of `emq bridge`
 * (500s, replies dropped after Redis ran the request, stalls, resets). Clients enqueue one job at
 * a time through either platform's API, retrying a failure with the same Idempotency-Key; both
 * platforms' scheduled events beat the queue at the same time; a Lambda instance is killed
 * (SIGKILL by PID) every so often, mid-beat or mid-request, and a fresh one takes its place. Then
 * the faults stop, the queue drains, and every job is accounted for as in `edge-faults`: none lost,
 * one job an enqueue, each completed (its result its handler's) or dead once, the keyspace whole.
 */
export const platformsFaults: Scenario = {
  name: 'platforms-faults',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const rig = await startEdgeRig(ctx, QUEUE);
    const { jobs, rate, raw, queue, proxy, injected, runs, ran } = rig;
    const started = performance.now();
    const env = rig.env(2_000);
    const token = env.UPSTASH_REDIS_REST_TOKEN!;
    const worker = createWorker({
      handlers: {
        [QUEUE]: (job: { id: string; payload: { n: number } }) => {
          ran(job.id, Date.now());
          return { n: job.payload.n * 2 };
        },
      },
      log: () => {},
    });
    const drains: Array<Promise<unknown>> = [];
    const ctxWait = { waitUntil: (p: Promise<unknown>) => void drains.push(p) };
    let lambda = new LambdaInstance(proxy.url, token, ran);
    let killed = 0;
    const instance = async (): Promise<LambdaInstance> => {
      if (!lambda.alive) lambda = new LambdaInstance(proxy.url, token, ran);
      await lambda.ready;
      return lambda;
    };
    const killer = setInterval(() => {
      if (!lambda.alive) return;
      lambda.kill();
      killed++;
    }, ctx.quick ? 1_500 : 4_000);
    try {
      await queue.setEvents({ maxLen: CHAOS_EVENTS_MAX_LEN });
      // both platforms beat the queue while the clients enqueue, and until it is drained
      let beating = true;
      const beats = Promise.all([
        (async () => {
          while (beating) await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctxWait).catch(() => {});
        })(),
        (async () => {
          while (beating) await (await instance()).invoke({ 'detail-type': 'Scheduled Event', source: 'aws.events' }).catch(() => {});
        })(),
      ]);
      /** `{n}` through the Worker or Lambda, by turns: a client's retry goes to the other platform. */
      const { acknowledged, gaveUp, clientRetries } = await rig.enqueueAll(async (n, attempt) => {
        if ((n + attempt) % 2 === 0) {
          const res = await worker.fetch(
            rig.enqueueRequest(n),
            env,
            ctxWait,
          );
          return res.status;
        }
        const answer = await (await instance()).invoke(enqueueEvent(n));
        return (answer.result as { statusCode?: number } | undefined)?.statusCode ?? 0;
      });
      while (drains.length > 0) await Promise.allSettled(drains.splice(0));
      const stats = async () => (await queue.stats()).counts;
      let counts = await stats();
      const drainUntil = performance.now() + (ctx.quick ? 30_000 : 120_000);
      while (counts.pending + counts.scheduled + counts.active > 0 && performance.now() < drainUntil) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        counts = await stats();
      }
      // then without faults or kills, until nothing is left (a lease lost to the last kill lapses first)
      clearInterval(killer);
      proxy.setFaults({});
      for (let i = 0; i < 40 && counts.pending + counts.scheduled + counts.active > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        counts = await stats();
      }
      beating = false;
      await beats;
      while (drains.length > 0) await Promise.allSettled(drains.splice(0));
      counts = await stats();
      const accounted = await accountForJobs(raw, queue, jobs, gaveUp, runs, injected);
      return {
        scenario: 'platforms-faults',
        jobs,
        faults: `${Math.round(rate * 100)}% each of 500, dropped reply, stall, reset; a Lambda instance killed every ${ctx.quick ? 1.5 : 4} s`,
        injected: { ...proxy.counts() },
        lambda_instances_killed: killed,
        acknowledged,
        enqueue_gave_up: gaveUp,
        client_retries: clientRetries,
        completed: counts.completed,
        // attempts used up on leases lost to the faults and kills (3 by default): dead, as designed
        dead: counts.dead,
        not_finished: counts.pending + counts.scheduled + counts.active,
        ...accounted,
        duration_s: Math.round((performance.now() - started) / 100) / 10,
      };
    } finally {
      clearInterval(killer);
      lambda.kill();
      await rig.close();
    }
  },
};
