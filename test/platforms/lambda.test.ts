import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface, type Interface } from 'node:readline';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, EventBridgeEvent } from 'aws-lambda';
import { Queue } from '../../src/queue/queue.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { freePort } from '../../src/node/local-redis.js';
import { checkInvariants } from '../invariants.js';
import { queueName, until } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');

/** One warm instance under lambda-local (test/platforms/lambda-runner.ts), in a process of its own. */
class LambdaInstance {
  private readonly lines: Interface;
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | undefined;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout });
    this.lines.on('line', (line) => {
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(line);
      } else this.answers.push(line);
    });
  }

  static async start(env: Record<string, string>): Promise<LambdaInstance> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'platforms', 'lambda-runner.ts')], {
      cwd: root,
      // lambda-local reads HOME (the AWS profile's folder); nothing else of this process's environment
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? root, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const instance = new LambdaInstance(child);
    const ready = await Promise.race([instance.next(), new Promise<string>((_, reject) => child.once('exit', (code) => reject(new Error(`lambda-runner exited ${code}: ${stderr}`))))]);
    expect(JSON.parse(ready)).toEqual({ ready: true });
    return instance;
  }

  private next(): Promise<string> {
    const line = this.answers.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** Invokes the function with `event`; resolves to what lambda-local answered, and the wall time. */
  async invoke<R>(event: unknown, timeoutMs: number): Promise<{ result?: R; error?: string; ms: number }> {
    this.child.stdin.write(`${JSON.stringify({ event, timeoutMs })}\n`);
    return JSON.parse(await this.next()) as { result?: R; error?: string; ms: number };
  }

  /** Sends the invocation and does not wait for it (to kill the instance mid-beat). */
  send(event: unknown, timeoutMs: number): void {
    this.child.stdin.write(`${JSON.stringify({ event, timeoutMs })}\n`);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
  }
}

/** An EventBridge rule's scheduled event, as Lambda delivers it. */
const scheduledEvent = (): EventBridgeEvent<'Scheduled Event', Record<string, never>> => ({
  version: '0',
  id: randomBytes(8).toString('hex'),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/emq-beat'],
  detail: {},
});

/** A Function URL (API Gateway v2 payload) request. */
function httpEvent(method: string, path: string, body?: unknown, token = 'lambda'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'fn.lambda-url.us-east-1.on.aws', 'content-type': 'application/json', authorization: `Bearer ${token}` },
    requestContext: {
      accountId: '123456789012',
      apiId: 'fn',
      domainName: 'fn.lambda-url.us-east-1.on.aws',
      domainPrefix: 'fn',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: randomBytes(8).toString('hex'),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  };
}

type HttpAnswer = APIGatewayProxyStructuredResultV2;
const bodyOf = (answer: HttpAnswer | undefined): Record<string, unknown> => JSON.parse(answer?.body ?? '{}') as Record<string, unknown>;

/**
 * AWS Lambda, run in a local Lambda runner (lambda-local), one process per warm instance, with
 * the platform's event shapes (@types/aws-lambda): the function answers Function URL requests
 * with the API and EventBridge schedules with bounded beats, over REST (the bridge) and over TCP
 * (REDIS_URL).
 */
describe('echomq/lambda in lambda-local', () => {
  const redisUrl = inject('redisUrl');
  const token = randomBytes(8).toString('hex');
  let bridge: RunningBridge;
  let raw: Redis;
  const instances: LambdaInstance[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl, token });
    raw = new Redis(redisUrl);
  });
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((i) => i.stop()));
  });
  afterAll(async () => {
    await bridge.close();
    raw.disconnect();
  });

  const rest = (): Record<string, string> => ({ UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token });
  async function instance(queue: string, env: Record<string, string>): Promise<LambdaInstance> {
    const made = await LambdaInstance.start({ QUEUE: queue, SEEN_REDIS_URL: redisUrl, EMQ_TOKEN: 'lambda', ...env });
    instances.push(made);
    return made;
  }
  const seen = async (queue: string): Promise<Record<string, string>> => raw.hgetall(`${queue}:seen`);
  function nodeQueue(queue: string): Queue<unknown> {
    return new Queue(IoredisTransport.connect(redisUrl), queue, { keepCompletedMs: 60_000 });
  }

  for (const transport of ['rest', 'tcp'] as const) {
    it(`runs a job enqueued through its Function URL before it answers, and a repeat of the request is one job (${transport})`, async () => {
      const queue = queueName('lambda');
      const fn = await instance(queue, transport === 'rest' ? rest() : { REDIS_URL: redisUrl });
      const first = await fn.invoke<HttpAnswer>({ ...httpEvent('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } }), headers: { ...httpEvent('POST', '/').headers, 'idempotency-key': 'k1' } }, 10_000);
      expect(first.error).toBeUndefined();
      expect(first.result?.statusCode).toBe(201);
      const { id } = bodyOf(first.result) as { id: string };
      // the drain after the enqueue ran it inside the invocation: a frozen instance would not have
      expect(await seen(queue)).toEqual({ [id]: '1' });
      const q = nodeQueue(queue);
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: { ran: id } });
      // the same request again (a client's retry): the same job, not run again
      const again = await fn.invoke<HttpAnswer>({ ...httpEvent('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 1 } }), headers: { ...httpEvent('POST', '/').headers, 'idempotency-key': 'k1' } }, 10_000);
      expect(bodyOf(again.result)).toMatchObject({ id });
      // a second job in the same warm instance: its transport and what it knows are reused
      const second = await fn.invoke<HttpAnswer>(httpEvent('POST', `/v1/queues/${queue}/jobs`, { payload: { n: 2 } }), 10_000);
      const id2 = (bodyOf(second.result) as { id: string }).id;
      expect(await seen(queue)).toEqual({ [id]: '1', [id2]: '1' });
      expect(await checkInvariants(raw, queue)).toEqual([]);
      await q.transport.close();
    });
  }

  it('a scheduled event beats until its deadline and no further: jobs from Node, a delayed one and a scheduler slot run once', async () => {
    const queue = queueName('lambda');
    const q = nodeQueue(queue);
    const ids = (await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: { i } })))).map((r) => r.id);
    // the function started first: the delayed job and the slots are timed from its invocation, not
    // from before its own start (a second or more on a loaded machine, when a slot would be due at
    // the first request and fired in a second one)
    const fn = await instance(queue, { ...rest(), EMQ_BEAT_DEADLINE_MS: '3000', EMQ_JOB_TIMEOUT_MS: '500' });
    const delayed = await q.add({ late: true }, { delayMs: 1_500 });
    const delayedDueAt = Date.now() + 1_500;
    await q.upsertScheduler('tick', { every: 1_000 }, { payload: { tick: true } });
    const t0 = Date.now();
    const beat = await fn.invoke<{ firstRequests: number; requests: number; firedSlots: number }>(scheduledEvent(), 30_000);
    const took = Date.now() - t0;
    expect(beat.error).toBeUndefined();
    expect(beat.result?.firstRequests).toBe(1);
    expect(beat.result?.firedSlots).toBeGreaterThanOrEqual(2);
    // it drained until the deadline (sleeping for the delayed job and the slots), and stopped there:
    // it ended after the delayed job fell due (judged from that add, not from the invocation, whose
    // start comes later by the function's own start on a loaded machine)
    expect(t0 + took).toBeGreaterThanOrEqual(delayedDueAt);
    expect(took).toBeLessThan(3_000 + 2_000);
    const runs = await seen(queue);
    for (const id of [...ids, delayed.id]) expect(runs[id]).toBe('1');
    expect(Object.values(runs).every((n) => n === '1')).toBe(true);
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.removeScheduler('tick');
    await q.transport.close();
  });

  it('a scheduled event ends within the time Lambda leaves it, less its margin', async () => {
    const queue = queueName('lambda');
    const q = nodeQueue(queue);
    await q.upsertScheduler('tick', { every: 500 }, { payload: { tick: true } });
    // the deadline setting is a minute; the invocation's timeout, 4 s, wins: it beats about 2 s
    const fn = await instance(queue, { ...rest(), EMQ_BEAT_DEADLINE_MS: '60000', EMQ_JOB_TIMEOUT_MS: '300' });
    const beat = await fn.invoke<{ firedSlots: number }>(scheduledEvent(), 4_000);
    expect(beat.error).toBeUndefined();
    expect(beat.ms).toBeLessThan(4_000);
    // its last start is the deadline less a job's timeout (1.7 s): the slot at 1.5 s is its last
    expect(beat.ms).toBeGreaterThanOrEqual(1_200);
    expect(beat.result?.firedSlots).toBeGreaterThanOrEqual(2);
    await q.removeScheduler('tick');
    await q.transport.close();
  });

  it('a job left active by an instance killed mid-beat is reaped by the next scheduled event, and runs once more', async () => {
    const queue = queueName('lambda');
    const q = nodeQueue(queue);
    const { id } = await q.add({ sleepMs: 60_000 }, { maxAttempts: 3 });
    const env = { ...rest(), EMQ_BEAT_DEADLINE_MS: '1500', EMQ_JOB_TIMEOUT_MS: '1000', EMQ_LEASE_MARGIN_MS: '300' };
    const killed = await instance(queue, env);
    killed.send(scheduledEvent(), 30_000);
    await until(async () => (await seen(queue))[id] === '1', 10_000);
    await killed.stop('SIGKILL');
    expect(await q.getJob(id)).toMatchObject({ state: 'active' });
    // the lease (the deadline plus the margin) lapses; the next event reaps the job and runs it again
    await until(async () => {
      const job = await q.getJob(id);
      return job?.state === 'pending' || (job?.state === 'active' && (await raw.zscore(`emq:{${queue}}:active`, id)) !== null && Number(await raw.zscore(`emq:{${queue}}:active`, id)) < Date.now());
    }, 10_000);
    const next = await instance(queue, { ...env, EMQ_JOB_TIMEOUT_MS: '100' });
    await next.invoke(scheduledEvent(), 30_000);
    const job = await q.getJob(id);
    // run a second time (its handler timed out in that beat: a retry, attempts counted)
    expect((await seen(queue))[id]).toBe('2');
    expect(job?.attempt).toBe(2);
    expect(await checkInvariants(raw, queue)).toEqual([]);
    await q.remove(id);
    await q.transport.close();
  });

  it('answers bad input with a typed 4xx, a missing configuration with 503 EMQCONFIG, and an unreachable Redis with 503 EMQREDIS', async () => {
    const queue = queueName('lambda');
    const fn = await instance(queue, rest());
    const bad = await fn.invoke<HttpAnswer>(httpEvent('POST', `/v1/queues/${queue}/jobs`, { payload: 1, delayMs: -5 }), 10_000);
    expect(bad.result?.statusCode).toBe(400);
    expect(bodyOf(bad.result)).toMatchObject({ error: { code: 'EMQARG' } });
    const unauthorized = await fn.invoke<HttpAnswer>(httpEvent('GET', `/v1/queues/${queue}`, undefined, 'wrong'), 10_000);
    expect(unauthorized.result?.statusCode).toBe(401);
    expect(await raw.exists(`emq:{${queue}}:meta`)).toBe(0);

    const unconfigured = await instance(queue, {});
    const refused = await unconfigured.invoke<HttpAnswer>(httpEvent('GET', `/v1/queues/${queue}`), 10_000);
    expect(refused.result?.statusCode).toBe(503);
    expect(bodyOf(refused.result)).toMatchObject({ error: { code: 'EMQCONFIG', message: expect.stringContaining('REDIS_URL') } });

    const closedPort = await freePort();
    const away = await instance(queue, { REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    const down = await away.invoke<HttpAnswer>(httpEvent('POST', `/v1/queues/${queue}/jobs`, { payload: 1 }), 20_000);
    expect(down.result?.statusCode).toBe(503);
    expect(bodyOf(down.result)).toMatchObject({ error: { code: 'EMQREDIS' } });
  });
});
