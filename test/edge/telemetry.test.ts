import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { UpstashTransport } from '../../src/serverless/upstash-transport.js';
import { createWorker, type WorkerEnv } from '../../src/edge/worker.js';
import { Queue } from '../../src/queue/queue.js';
import { type RunningBridge, startBridge } from '../../src/node/bridge/index.js';
import { keysOf, queueName } from '../helpers.js';
import { ERROR, isChildOf, KIND, linksOf, traceparentOf, useTracing } from '../telemetry-fixture.js';

/**
 * Spans of the edge runtime (README, "Telemetry"): the Worker's own code (createWorker, its
 * bounded beats) run on Node over @upstash/redis and the REST bridge, as test/edge/drains.test.ts
 * does, so the SDK's in-memory exporter sees what the Worker records.
 */
describe('OpenTelemetry at the edge', () => {
  const tracing = useTracing();
  let bridge: RunningBridge;
  let raw: Redis;
  let env: WorkerEnv;
  const token = randomBytes(8).toString('hex');
  const HEADER_TRACE = '0af7651916cd43dd8448eb211c80319c';
  const HEADER = `00-${HEADER_TRACE}-b7ad6b7169203331-01`;

  beforeAll(async () => {
    bridge = await startBridge({ redisUrl: inject('redisUrl'), token });
    raw = new Redis(inject('redisUrl'));
    env = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: token, EMQ_TOKEN: 'edge', EMQ_DRAIN_ON_ENQUEUE_MS: '1000', EMQ_ACK_WITHIN_MS: '0' };
  });
  const made: string[] = [];
  afterEach(async () => {
    for (const name of made.splice(0)) {
      const keys = await raw.keys(`emq:{${name}}:*`);
      if (keys.length > 0) await raw.del(...keys);
    }
  });
  afterAll(async () => {
    await bridge.close();
    raw.disconnect();
  });

  /** A Worker serving `name` with `handler`, and the waitUntil promises of its requests. */
  function worker(name: string, handler: (job: { id: string; payload: unknown }) => void) {
    made.push(name);
    const w = createWorker({ handlers: { [name]: handler }, log: () => {} });
    const pending: Array<Promise<unknown>> = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
    return {
      enqueue: (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
        w.fetch(
          new Request(`http://edge/v1/queues/${name}/jobs`, {
            method: 'POST',
            headers: { Authorization: 'Bearer edge', 'Content-Type': 'application/json', ...headers },
            body: JSON.stringify(body),
          }),
          env,
          ctx,
        ),
      scheduled: () => w.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, env, ctx),
      settled: async () => {
        while (pending.length > 0) await Promise.allSettled(pending.splice(0));
      },
    };
  }

  it('an enqueue through the Worker with a traceparent header is run by its drain in that trace', async () => {
    const name = queueName('edge-otel');
    let active: string | undefined;
    const w = worker(name, () => {
      active = trace.getActiveSpan()?.spanContext().spanId;
    });
    const res = await w.enqueue({ payload: { to: 'a@example.com' }, group: 'tenant-1' }, { traceparent: HEADER });
    const { id } = (await res.json()) as { id: string };
    await w.settled();

    const [send] = tracing.spans('send', name);
    expect(send!.kind).toBe(KIND.PRODUCER);
    expect(send!.parentSpanContext).toMatchObject({ traceId: HEADER_TRACE, spanId: 'b7ad6b7169203331', isRemote: true });
    expect(await raw.hget(keysOf({ name }).job(id), 'x')).toBe(traceparentOf(send!));

    const [receive] = tracing.spans('receive', name);
    expect(linksOf(receive!)).toEqual([[send!.spanContext().spanId, id]]);

    const [process] = tracing.spans('process', name);
    expect(process!.kind).toBe(KIND.CONSUMER);
    expect(isChildOf(process!, send!)).toBe(true);
    expect(process!.attributes).toMatchObject({
      'messaging.system': 'echomq',
      'messaging.destination.name': name,
      'messaging.operation.type': 'process',
      'messaging.message.id': id,
      'echomq.job.attempt': 1,
      'echomq.job.group': 'tenant-1',
      'echomq.job.outcome': 'complete',
    });
    expect(active).toBe(process!.spanContext().spanId);

    const [settle] = tracing.spans('settle', name);
    expect(isChildOf(settle!, process!)).toBe(true);
    expect(settle!.attributes).toMatchObject({ 'messaging.message.id': id, 'echomq.settle.outcome': 'completed' });
  });

  it('a scheduled beat links its claim to each enqueue; a handler that throws has an ERROR span', async () => {
    const name = queueName('edge-otel');
    const queue = new Queue<string>(UpstashTransport.connect({ url: bridge.url, token }), name);
    const added = await tracing.tracer.startActiveSpan('producer', async (span) => {
      try {
        return [await queue.add('fine'), await queue.add('boom', { maxAttempts: 1 })];
      } finally {
        span.end();
      }
    });
    const sends = tracing.spans('send', name);
    expect(sends).toHaveLength(2);
    const w = worker(name, (job) => {
      if (job.payload === 'boom') throw new RangeError('out of range');
    });
    await w.scheduled();
    await w.settled();

    const [receive] = tracing.spans('receive', name);
    expect(receive!.attributes).toMatchObject({ 'messaging.operation.type': 'receive', 'messaging.batch.message_count': 2 });
    expect(linksOf(receive!)).toEqual(sends.map((s, i) => [s.spanContext().spanId, added[i]!.id]));

    const processes = tracing.spans('process', name);
    expect(processes).toHaveLength(2);
    for (const [i, send] of sends.entries()) {
      const process = processes.find((p) => p.attributes['messaging.message.id'] === added[i]!.id)!;
      expect(isChildOf(process, send)).toBe(true);
    }
    const boom = processes.find((p) => p.attributes['messaging.message.id'] === added[1]!.id)!;
    expect(boom.status).toEqual({ code: ERROR, message: 'out of range' });
    expect(boom.attributes).toMatchObject({ 'error.type': 'RangeError', 'echomq.job.outcome': 'retry' });
    expect(boom.events.map((e) => e.name)).toEqual(['exception']);

    const outcomes = Object.fromEntries(tracing.spans('settle', name).map((s) => [s.attributes['messaging.message.id'], s.attributes['echomq.settle.outcome']]));
    expect(outcomes).toEqual({ [added[0]!.id]: 'completed', [added[1]!.id]: 'dead' });
    await queue.transport.close();
  });
});
