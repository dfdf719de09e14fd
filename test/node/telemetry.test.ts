import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Flows } from '../../src/flows/flows.js';
import { UnrecoverableError } from '../../src/handler.js';
import { serveApi } from '../../src/node/cli/serve.js';
import { BatchConsumer, Consumer } from '../../src/node/consumer/index.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Queue } from '../../src/queue/queue.js';
import { keysOf, leases, sleep, until, useRedis } from '../helpers.js';
import { ERROR, isChildOf, KIND, linksOf, traceparentOf, useTracing } from '../telemetry-fixture.js';

/**
 * Spans of the Node runtime (README, "Telemetry"), recorded by the OpenTelemetry SDK's in-memory
 * exporter over a real Redis: an enqueue's `send` span, stored on the row, is the parent of the
 * job's `process` span in a consumer, whose `settle` span is its child; a claim's `receive` span
 * links to each job's enqueue.
 */
describe('OpenTelemetry on Node', () => {
  const redis = useRedis();
  const tracing = useTracing();
  const url = inject('redisUrl');
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  function consume<P>(queue: Queue<P>, handler: (job: { id: string; payload: P }) => Promise<void> | void, concurrency = 1): Consumer<P> {
    const consumer = new Consumer<P>(IoredisTransport.connect(url), queue.name, handler, { concurrency, beatMs: 10_000, ownsTransport: true });
    stops.push(() => consumer.stop(1_000));
    return consumer.start();
  }

  it('a job enqueued under a span runs in a process span that is its enqueue span\'s child', async () => {
    const queue = redis.queue<{ n: number }>();
    const { id } = await tracing.tracer.startActiveSpan('request', async (request) => {
      try {
        return await queue.add({ n: 1 }, { group: 'tenant-1' });
      } finally {
        request.end();
      }
    });
    const [request] = tracing.all().filter((s) => s.name === 'request');
    const [send] = tracing.spans('send', queue.name);
    expect(send).toBeDefined();
    expect(send!.kind).toBe(KIND.PRODUCER);
    expect(isChildOf(send!, request!)).toBe(true);
    expect(send!.attributes).toEqual({
      'messaging.system': 'echomq',
      'messaging.destination.name': queue.name,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.message.id': id,
      'echomq.job.state': 'pending',
    });
    // the row carries the send span's context, and nothing else of the trace
    expect(await redis.raw.hget(keysOf(queue).job(id), 'x')).toBe(traceparentOf(send!));

    let active: string | undefined;
    consume(queue, () => {
      active = trace.getActiveSpan()?.spanContext().spanId;
    });
    await until(() => tracing.spans('settle', queue.name).length === 1);

    const [process] = tracing.spans('process', queue.name);
    expect(process!.kind).toBe(KIND.CONSUMER);
    expect(isChildOf(process!, send!)).toBe(true);
    expect(process!.attributes).toEqual({
      'messaging.system': 'echomq',
      'messaging.destination.name': queue.name,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.message.id': id,
      'echomq.job.attempt': 1,
      'echomq.job.max_attempts': 3,
      'echomq.job.group': 'tenant-1',
      'echomq.job.outcome': 'complete',
    });
    expect(process!.status.code).not.toBe(ERROR);
    // the handler ran with its process span active: its own spans are the process span's children
    expect(active).toBe(process!.spanContext().spanId);

    const [receive] = tracing.spans('receive', queue.name);
    expect(receive!.kind).toBe(KIND.CLIENT);
    expect(linksOf(receive!)).toEqual([[send!.spanContext().spanId, id]]);
    expect(receive!.attributes).toMatchObject({ 'messaging.operation.type': 'receive', 'messaging.batch.message_count': 1, 'messaging.message.id': id });

    const [settle] = tracing.spans('settle', queue.name);
    expect(settle!.kind).toBe(KIND.CLIENT);
    expect(isChildOf(settle!, process!)).toBe(true);
    expect(settle!.attributes).toMatchObject({ 'messaging.operation.type': 'settle', 'messaging.message.id': id, 'echomq.settle.outcome': 'completed' });
  });

  it('a bulk enqueue is one send span; a claim of several jobs is one receive span linked to each enqueue', async () => {
    const queue = redis.queue<number>();
    const single = [await queue.add(1), await queue.add(2)];
    const bulk = await queue.addBulk([{ payload: 3 }, { payload: 4 }]);
    const sends = tracing.spans('send', queue.name);
    expect(sends).toHaveLength(3);
    expect(sends[2]!.attributes).toMatchObject({ 'messaging.batch.message_count': 2 });
    expect(sends[2]!.attributes['messaging.message.id']).toBeUndefined();
    // every job of the bulk carries the one send span's context
    for (const { id } of bulk) expect(await redis.raw.hget(keysOf(queue).job(id), 'x')).toBe(traceparentOf(sends[2]!));

    // a consumer claims in halves (two requests in flight): one claim of all four, by hand
    const { jobs } = await leases(queue).claim(4, 30_000);
    expect(jobs.map((j) => j.traceparent)).toEqual(sends.map(traceparentOf).concat(traceparentOf(sends[2]!)));
    const [receive] = tracing.spans('receive', queue.name);
    expect(receive!.attributes['messaging.batch.message_count']).toBe(4);
    expect(receive!.attributes['messaging.message.id']).toBeUndefined();
    const [a, b, c] = sends.map((s) => s.spanContext().spanId);
    expect(linksOf(receive!)).toEqual([
      [a, single[0]!.id],
      [b, single[1]!.id],
      [c, bulk[0]!.id],
      [c, bulk[1]!.id],
    ]);
  });

  it('a flow is one send span under the active one, and every job of the tree keeps its context', async () => {
    const parents = redis.queue();
    const kids = redis.queue();
    const tree = await tracing.tracer.startActiveSpan('request', async (request) => {
      try {
        return await new Flows(redis.transport).add({ queue: parents.name, id: 'traced', payload: 0, children: [{ queue: kids.name, payload: 1 }, { queue: kids.name, payload: 2 }] });
      } finally {
        request.end();
      }
    });
    const [request] = tracing.all().filter((s) => s.name === 'request');
    const [send] = tracing.spans('send', parents.name);
    expect(send).toBeDefined();
    expect(isChildOf(send!, request!)).toBe(true);
    expect(send!.attributes).toMatchObject({ 'messaging.destination.name': parents.name, 'messaging.batch.message_count': 3 });
    expect(await redis.raw.hget(keysOf(parents).job(tree.id), 'x')).toBe(traceparentOf(send!));
    for (const child of tree.children) expect(await redis.raw.hget(keysOf(kids).job(child.id), 'x')).toBe(traceparentOf(send!));
  });

  it('a handler that throws has an ERROR span with the exception; its settle says what became of the job', async () => {
    const queue = redis.queue<string>();
    const retried = await queue.add('boom', { maxAttempts: 2, backoff: 60_000 });
    const failed = await queue.add('for good');
    consume(queue, (job) => {
      if (job.payload === 'boom') throw new TypeError('boom');
      throw new UnrecoverableError('not an address');
    });
    await until(() => tracing.spans('settle', queue.name).length === 2);
    const byId = (id: string) => tracing.spans('process', queue.name).find((s) => s.attributes['messaging.message.id'] === id)!;

    const boom = byId(retried.id);
    expect(boom.status).toEqual({ code: ERROR, message: 'boom' });
    expect(boom.attributes).toMatchObject({ 'error.type': 'TypeError', 'echomq.job.outcome': 'retry', 'echomq.job.attempt': 1, 'echomq.job.max_attempts': 2 });
    const [exception] = boom.events;
    expect(exception!.name).toBe('exception');
    expect(exception!.attributes).toMatchObject({ 'exception.type': 'TypeError', 'exception.message': 'boom' });
    expect(String(exception!.attributes!['exception.stacktrace'])).toContain('TypeError: boom');

    expect(byId(failed.id).attributes).toMatchObject({ 'error.type': 'UnrecoverableError', 'echomq.job.outcome': 'fail' });

    const outcomes = Object.fromEntries(tracing.spans('settle', queue.name).map((s) => [s.attributes['messaging.message.id'], s.attributes['echomq.settle.outcome']]));
    expect(outcomes).toEqual({ [retried.id]: 'scheduled', [failed.id]: 'dead' });
  });

  it('a fenced settle is an ERROR settle span', async () => {
    const queue = redis.queue<string>();
    const { id } = await queue.add('slow');
    const lease = leases(queue);
    const [job] = (await lease.claim(1, 20)).jobs;
    await sleep(30);
    expect(await lease.reap()).toEqual({ requeued: 1, buried: 0 });
    const { settled } = await lease.round({ finished: [{ job: job!, outcome: { kind: 'complete' } }], leaseMs: 1_000 });
    expect(settled).toEqual(['fenced']);
    const [settle] = tracing.spans('settle', queue.name);
    expect(settle!.status.code).toBe(ERROR);
    expect(settle!.attributes).toMatchObject({ 'messaging.message.id': id, 'echomq.settle.outcome': 'fenced', 'error.type': 'fenced' });
    // no process span ran it here: the settle span is its enqueue's child
    expect(isChildOf(settle!, tracing.spans('send', queue.name)[0]!)).toBe(true);
  });

  it('a batch handler runs in one process span linked to each job\'s enqueue', async () => {
    const queue = redis.queue<number>();
    const added = [await queue.add(1), await queue.add(2), await queue.add(3)];
    const sends = tracing.spans('send', queue.name);
    let active: string | undefined;
    const consumer = new BatchConsumer<number>(IoredisTransport.connect(url), queue.name, (jobs) => {
      active = trace.getActiveSpan()?.spanContext().spanId;
      return jobs.map((job) => (job.payload === 2 ? { retry: new Error('two is wrong') } : 'completed'));
    }, { batchSize: 3, beatMs: 10_000 });
    stops.push(async () => {
      await consumer.stop(1_000);
      await consumer.queue.transport.close();
    });
    consumer.start();
    await until(() => tracing.spans('settle', queue.name).length === 3);
    const [process] = tracing.spans('process', queue.name);
    expect(process!.parentSpanContext).toBeUndefined();
    expect(process!.attributes).toMatchObject({ 'messaging.batch.message_count': 3, 'echomq.job.outcome': 'retry', 'error.type': '_OTHER' });
    expect(process!.status).toEqual({ code: ERROR, message: expect.stringMatching(/^1 of 3 jobs failed; the first: Error: two is wrong/) });
    expect(linksOf(process!)).toEqual(sends.map((s, i) => [s.spanContext().spanId, added[i]!.id]));
    expect(active).toBe(process!.spanContext().spanId);
    for (const settle of tracing.spans('settle', queue.name)) expect(isChildOf(settle, process!)).toBe(true);
  });

  it('an enqueue through the HTTP API with a traceparent header continues that trace', async () => {
    const transport = IoredisTransport.connect(url);
    const api = await serveApi({ transport, port: 0, log: () => {} });
    stops.push(async () => {
      await api.close();
      await transport.close();
    });
    const queue = redis.queue<{ to: string }>();
    const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const post = (path: string, body: unknown) =>
      fetch(`${api.url}/v1/queues/${queue.name}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', traceparent: header }, body: JSON.stringify(body) });
    const one = (await (await post('/jobs', { payload: { to: 'a@example.com' } })).json()) as { id: string };
    const bulk = (await (await post('/jobs/bulk', { jobs: [{ payload: { to: 'b@example.com' } }] })).json()) as { jobs: Array<{ id: string }> };
    const sends = tracing.spans('send', queue.name);
    expect(sends).toHaveLength(2);
    for (const send of sends) {
      expect(send.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(send.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
    }
    expect(await redis.raw.hget(keysOf(queue).job(one.id), 'x')).toBe(traceparentOf(sends[0]!));
    expect(await redis.raw.hget(keysOf(queue).job(bulk.jobs[0]!.id), 'x')).toBe(traceparentOf(sends[1]!));

    consume(queue, () => {});
    await until(() => tracing.spans('settle', queue.name).length === 2);
    for (const process of tracing.spans('process', queue.name)) expect(process.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});
