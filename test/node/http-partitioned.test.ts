import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Leases } from '../../src/lease/leases.js';
import { serveApi } from '../../src/node/cli/serve.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { PartitionedQueue } from '../../src/partitions/partitioned-queue.js';
import { partitionOf, PARTITIONS_REGISTRY } from '../../src/partitions/partition-of.js';
import type { ApiTarget } from '../http-call.js';
import { type Answer, callApi } from '../http-call.js';
import { queueName, sleep } from '../helpers.js';

/** The HTTP API addresses a partitioned queue by its name (`emq serve` over a real Redis). */
describe('the HTTP API on a partitioned queue', () => {
  let target: ApiTarget & { close(): Promise<void> };
  let raw: Redis;
  let transport: IoredisTransport;
  const made: string[] = [];

  beforeAll(async () => {
    raw = new Redis(inject('redisUrl'));
    transport = IoredisTransport.connect(inject('redisUrl'));
    const served = IoredisTransport.connect(inject('redisUrl'));
    const api = await serveApi({ transport: served, port: 0, log: () => {}, token: 'test-token-partitioned' });
    target = {
      baseUrl: api.url,
      token: 'test-token-partitioned',
      close: async () => {
        await api.close();
        await served.close();
      },
    };
  }, 60_000);
  afterEach(async () => {
    for (const name of made.splice(0)) {
      const keys = [...(await raw.keys(`emq:{${name}~*}:*`)), ...(await raw.keys(`emq:{${name}}:*`))];
      if (keys.length > 0) await raw.del(...keys);
      await raw.srem('emq:queues', name);
      await raw.hdel(PARTITIONS_REGISTRY, name);
    }
  });
  afterAll(async () => {
    await target.close();
    await transport.close();
    raw.disconnect();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Answer> => callApi(target, method, path, body);

  /** A partitioned queue made from code, registered by its first job. */
  async function partitioned(partitions = 4): Promise<PartitionedQueue> {
    const name = queueName('http-pq');
    made.push(name);
    const queue = new PartitionedQueue(transport, name, { partitions });
    await queue.add('seed', { group: 'seed' });
    return queue;
  }

  it('enqueues by the name into the group\'s partition, one and in bulk; reads and acts on jobs by id', async () => {
    const queue = await partitioned(4);
    const q = queue.name;
    const one = await call('POST', `/v1/queues/${q}/jobs`, { payload: { n: 1 }, group: 'tenant-7' });
    expect(one.status).toBe(201);
    expect(one.body.id).toMatch(new RegExp(`^JOB:\\d+~${partitionOf('tenant-7', 4)}$`));
    const bulk = await call('POST', `/v1/queues/${q}/jobs/bulk`, {
      jobs: [{ payload: 2, group: 'a' }, { payload: 3, id: 'mine' }, { payload: 4, delayMs: 60_000 }],
    });
    expect(bulk.status).toBe(201);
    const ids = (bulk.body.jobs as Array<{ id: string }>).map((j) => j.id);
    expect(ids[1]).toBe('JOB:mine');
    // nothing under the bare name
    expect(await raw.keys(`emq:{${q}}:*`)).toEqual([]);

    const got = await call('GET', `/v1/queues/${q}/jobs/${one.body.id as string}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: one.body.id, group: 'tenant-7', payload: { n: 1 } });
    expect((await call('GET', `/v1/queues/${q}/jobs/mine`)).body).toMatchObject({ id: 'JOB:mine', payload: 3 });
    expect((await call('GET', `/v1/queues/${q}/jobs/JOB:999~1`)).status).toBe(404);

    expect((await call('PUT', `/v1/queues/${q}/jobs/mine/priority`, { priority: 9 })).status).toBe(200);
    expect((await queue.getJob('mine'))?.priority).toBe(9);
    expect((await call('PUT', `/v1/queues/${q}/jobs/${ids[2]!}/payload`, { payload: 'new' })).status).toBe(200);
    expect((await queue.getJob(ids[2]!))?.payload).toBe('new');
    expect((await call('DELETE', `/v1/queues/${q}/jobs/${ids[0]!}`)).body).toEqual({ id: ids[0], removed: true });
    expect(await queue.getJob(ids[0]!)).toBeNull();
    expect((await call('DELETE', `/v1/queues/${q}/jobs/${ids[0]!}`)).status).toBe(404);

    // reprocess a dead job in its partition
    const part = queue.partitionOfGroup('tenant-7');
    const leases = new Leases(part);
    const { jobs } = await leases.claim(10, 30_000);
    await leases.fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'boom' })));
    const dead = await call('GET', `/v1/queues/${q}/dead`);
    expect((dead.body.jobs as Array<{ id: string }>).map((j) => j.id)).toContain(one.body.id);
    expect((await call('POST', `/v1/queues/${q}/jobs/${one.body.id as string}/reprocess`)).status).toBe(200);
    expect((await queue.getJob(one.body.id as string))?.state).toBe('pending');
  });

  it('shows one row per queue, its partitions summed: /v1/queues, /metrics, stats; lists jobs merged', async () => {
    const queue = await partitioned(4);
    const q = queue.name;
    await queue.addBulk(Array.from({ length: 9 }, (_, i) => ({ payload: i, group: `g${i}` })));
    await queue.add('later', { delayMs: 60_000 });
    const list = await call('GET', '/v1/queues');
    const rows = (list.body.queues as Array<{ queue: string }>).filter((row) => row.queue.startsWith(q));
    expect(rows).toEqual([expect.objectContaining({ queue: q, partitions: 4, paused: false, counts: expect.objectContaining({ pending: 10, scheduled: 1 }) })]);
    const metrics = await fetch(`${target.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${target.token!}` } }).then((r) => r.text());
    expect(metrics).toContain(`emq_jobs{queue="${q}",state="pending"} 10`);
    expect(metrics).not.toContain(`${q}~`);
    const stats = await call('GET', `/v1/queues/${q}`);
    expect(stats.body).toMatchObject({ queue: q, paused: false, counts: { pending: 10, scheduled: 1 } });
    const pending = await call('GET', `/v1/queues/${q}/jobs?state=pending&limit=4&offset=1`);
    expect((pending.body.jobs as Array<{ group: string }>).map((j) => j.group)).toEqual(['g1', 'g2', 'g3', 'g4']);
  });

  it('pauses every partition, and a group in its own; limits and rates; schedulers by name', async () => {
    const queue = await partitioned(4);
    const q = queue.name;
    expect((await call('POST', `/v1/queues/${q}/pause`)).status).toBe(200);
    for (const part of queue.parts) expect((await part.stats()).paused).toBe(true);
    expect((await call('GET', `/v1/queues/${q}`)).body.paused).toBe(true);
    expect((await call('POST', `/v1/queues/${q}/resume`)).status).toBe(200);
    expect((await queue.stats()).paused).toBe(false);

    expect((await call('POST', `/v1/queues/${q}/groups/stripe/pause`)).status).toBe(200);
    expect((await call('PUT', `/v1/queues/${q}/groups/stripe/limit`, { limit: 2 })).status).toBe(200);
    expect((await call('PUT', `/v1/queues/${q}/groups/stripe/rate`, { limit: 5, periodMs: 1000 })).status).toBe(200);
    expect((await call('PUT', `/v1/queues/${q}/rate`, { limit: 50, periodMs: 1000 })).status).toBe(200);
    const home = queue.partitionOfGroup('stripe');
    expect((await home.rateLimits()).groups.stripe).toEqual({ limit: 5, periodMs: 1000 });
    for (const part of queue.parts) expect((await part.rateLimits()).queue).toEqual({ limit: 50, periodMs: 1000 });
    const hold = await call('POST', `/v1/queues/${q}/ungrouped/hold`, { ms: 10_000 });
    expect(hold.status).toBe(200);
    expect((await queue.rateLimits()).throttled.filter((t) => t.ungrouped)).toHaveLength(4);

    const upsert = await call('PUT', `/v1/queues/${q}/schedulers/nightly`, { every: 60_000, job: { payload: 1, group: 'stripe' } });
    expect(upsert.status).toBe(200);
    expect(await home.getScheduler('nightly')).not.toBeNull();
    expect((await call('GET', `/v1/queues/${q}/schedulers/nightly`)).body).toMatchObject({ id: 'nightly', every: 60_000 });
    expect(((await call('GET', `/v1/queues/${q}/schedulers`)).body.schedulers as unknown[]).length).toBe(1);
    expect((await call('DELETE', `/v1/queues/${q}/schedulers/nightly`)).status).toBe(200);
    expect((await call('GET', `/v1/queues/${q}/schedulers/nightly`)).status).toBe(404);
  });

  it('runs bulk admin across partitions and obliterates by the name', async () => {
    const queue = await partitioned(4);
    const q = queue.name;
    await queue.addBulk(Array.from({ length: 8 }, (_, i) => ({ payload: i, group: `g${i}`, maxAttempts: 1 })));
    for (const part of queue.parts) {
      const leases = new Leases(part);
      const { jobs } = await leases.claim(100, 30_000);
      if (jobs.length > 0) await leases.fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'x' })));
    }
    expect((await call('POST', `/v1/queues/${q}/dead/reprocess?limit=3`)).body).toEqual({ reprocessed: 3, more: true });
    expect((await call('POST', `/v1/queues/${q}/clean`, { state: 'dead', limit: 2 })).body).toMatchObject({ more: true });
    expect((await queue.counts()).dead).toBe(4);
    expect((await call('POST', `/v1/queues/${q}/drain`)).body).toEqual({ removed: 3, more: false });
    expect((await call('PUT', `/v1/queues/${q}/dead/retention`, { maxCount: 7 })).body).toEqual({ maxAgeMs: null, maxCount: 7 });
    for (const part of queue.parts) expect((await part.deadRetention()).maxCount).toBe(7);
    expect((await call('GET', `/v1/queues/${q}/dead/retention`)).body).toEqual({ maxAgeMs: null, maxCount: 7 });
    expect((await call('DELETE', `/v1/queues/${q}?force=true`)).body).toEqual({ queue: q, obliterated: true });
    expect(await raw.hget(PARTITIONS_REGISTRY, q)).toBeNull();
    expect(await raw.sismember('emq:queues', q)).toBe(0);
  });

  it('answers 409 EMQPARTITION where a partitioned queue cannot serve: its events, one stream a partition', async () => {
    const queue = await partitioned(2);
    const page = await call('GET', `/v1/queues/${queue.name}/events`);
    expect(page.status).toBe(409);
    expect(page.body.error).toMatchObject({ code: 'EMQPARTITION' });
    expect(page.body.error!.message).toContain('2 partitions');
    const stream = await fetch(`${target.baseUrl}/v1/queues/${queue.name}/events/stream`, { headers: { Authorization: `Bearer ${target.token!}` } });
    expect(stream.status).toBe(409);
    expect(((await stream.json()) as Answer['body']).error?.code).toBe('EMQPARTITION');
    const doc = (await call('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(doc.paths['/v1/queues/{queue}/events']!.get!.responses['409']).toBeDefined();
    expect(doc.paths['/v1/queues/{queue}/events/stream']!.get!.responses['409']).toBeDefined();
  });

  it('enqueues with ?wait into the partition and waits there', async () => {
    const queue = await partitioned(4);
    const waited = call('POST', `/v1/queues/${queue.name}/jobs?wait=10000`, { payload: 'w', group: 'waiter' });
    const part = queue.partitionOfGroup('waiter');
    const leases = new Leases(part);
    let claimed = await leases.claim(1, 30_000);
    for (let i = 0; claimed.jobs.length === 0 && i < 500; i++) {
      await sleep(10);
      claimed = await leases.claim(1, 30_000);
    }
    await leases.complete([{ ...claimed.jobs[0]!, result: '"done"' }]);
    expect((await waited).body).toEqual({ id: claimed.jobs[0]!.id, state: 'completed', result: 'done' });
  });

  it('drops a plain Queue cached for a name partitioned since: one 409 writing nothing, then the partitioned queue', async () => {
    const name = queueName('http-late');
    made.push(name);
    // the server resolves the name while it is unregistered: a plain Queue
    expect((await call('GET', `/v1/queues/${name}`)).status).toBe(200);
    await new PartitionedQueue(transport, name, { partitions: 3 }).add('from code');
    const refused = await call('POST', `/v1/queues/${name}/jobs`, { payload: 1 });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe('EMQPARTITION');
    expect(await raw.keys(`emq:{${name}}:*`)).toEqual([]);
    const added = await call('POST', `/v1/queues/${name}/jobs`, { payload: 2 });
    expect(added.status).toBe(201);
    expect(added.body.id).toMatch(/^JOB:\d+~[0-2]$/);
    expect((await call('GET', `/v1/queues/${name}`)).body).toMatchObject({ counts: { pending: 2 } });
  });
});
