import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../src/errors.js';
import { Leases } from '../src/lease/leases.js';
import { PartitionedQueue } from '../src/partitions/partitioned-queue.js';
import { Queue } from '../src/queue/queue.js';
import { checkRateLimit, MAX_RATE_MS } from '../src/queue/rate-limits.js';
import type { Answer, ApiTarget } from './http-call.js';
import { asJson, useHttpFixture } from './http-fixture.js';
import { snapshotKeys } from './helpers.js';
import { checkInvariants } from './invariants.js';

/**
 * The concurrency key routes (docs/design/job-controls.md, "Several concurrency keys"), against
 * any target (the Node server, the Worker under miniflare; both with a token): `PUT
 * .../keys/:key/limit` sets, raises and lifts a key's limit, the key in the path plain (`org:7`)
 * or encoded (`org%3A7`), answering `{key, limit, readmitted}`; `PUT .../keys/:key/rate` does the
 * same for its rate limit, answering `{key, rate, readmitted}`; `GET .../keys` lists the keys as
 * `Queue.keyLimits` does; a job enqueued over HTTP with `keys` parks on a full key (or one at its
 * rate) and a raised limit (or rate) readmits it; bad input is a 400 (a bad rate with
 * checkRateLimit's message, as the group rate route answers) and a partitioned queue a 409
 * EMQPARTITION, none of them writing anything; the routes are in the OpenAPI document. Each
 * effect is read in Redis.
 */
export function describeHttpKeys(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-keys', redisUrl, start, removeQueues: true });
    const { call, queueName: q } = fx;

    /** The queue's key limits as Redis holds them (`emq:{q}:klimit`). */
    const limitsOf = (queue: string): Promise<Record<string, string>> => fx.raw.hgetall(`emq:{${queue}}:klimit`);
    /** The queue's key rate limits as Redis holds them (`emq:{q}:krate`, "limit:periodMs"). */
    const ratesOf = (queue: string): Promise<Record<string, string>> => fx.raw.hgetall(`emq:{${queue}}:krate`);
    /** The jobs parked on `key`, oldest first. */
    const parkedOn = (queue: string, key: string): Promise<string[]> => fx.raw.zrange(`emq:{${queue}}:kwait:${key}`, 0, '-1');

    /** The request fails with `status` and `code`, and nothing of the queue (or its partitions) changes; answers its body. */
    async function refused(queue: string, status: number, code: string, method: string, path: string, body?: unknown, rawBody?: string): Promise<Answer['body']> {
      const snapshot = async () => [await fx.stateOf(queue), await snapshotKeys(fx.raw, `emq:{${queue}~*}:*`)];
      const before = await snapshot();
      const answer = await call(method, path, body, rawBody);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body ?? rawBody)}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe(code);
      expect(await snapshot()).toEqual(before);
      return answer.body;
    }

    /** The message checkRateLimit refuses `value` with: what a refused rate body answers, as on the group rate route. */
    function rateMessage(value: unknown): string {
      try {
        checkRateLimit(value);
      } catch (error) {
        if (error instanceof InvalidArgumentError) return error.message;
        throw error;
      }
      throw new Error(`checkRateLimit takes ${JSON.stringify(value)}`);
    }

    it('sets, raises and lifts a key limit by its name plain or encoded, and lists the keys as keyLimits does', async () => {
      const name = q();
      const code = new Queue(fx.transport, name);
      expect(await call('GET', `/v1/queues/${name}/keys`)).toEqual({ status: 200, body: { keys: [] } });

      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: 2 })).toEqual({ status: 200, body: { key: 'org:7', limit: 2, readmitted: 0 } });
      expect(await call('PUT', `/v1/queues/${name}/keys/${encodeURIComponent('plan:free')}/limit`, { limit: 0 })).toEqual({
        status: 200,
        body: { key: 'plan:free', limit: 0, readmitted: 0 },
      });
      expect(await limitsOf(name)).toEqual({ 'org:7': '2', 'plan:free': '0' });
      // the same key encoded is the same key
      expect(await call('PUT', `/v1/queues/${name}/keys/org%3A7/limit`, { limit: 5 })).toEqual({ status: 200, body: { key: 'org:7', limit: 5, readmitted: 0 } });
      expect(await call('PUT', `/v1/queues/${name}/keys/org%3a7/limit`, { limit: 6 })).toMatchObject({ status: 200, body: { key: 'org:7', limit: 6 } });
      expect(await limitsOf(name)).toEqual({ 'org:7': '6', 'plan:free': '0' });
      await code.add('one', { keys: ['team.b-1'] });

      const listed = await call('GET', `/v1/queues/${name}/keys`);
      expect(listed).toEqual({
        status: 200,
        body: {
          keys: [
            { key: 'org:7', limit: 6, running: 0, parked: 0, rate: null, throttledUntil: null },
            { key: 'plan:free', limit: 0, running: 0, parked: 0, rate: null, throttledUntil: null },
            { key: 'team.b-1', limit: null, running: 0, parked: 0, rate: null, throttledUntil: null },
          ],
        },
      });
      expect(listed.body.keys).toEqual(asJson(await code.keyLimits()));

      // lifted: null, gone from the limits, still listed
      expect(await call('PUT', `/v1/queues/${name}/keys/plan:free/limit`, { limit: null })).toEqual({ status: 200, body: { key: 'plan:free', limit: null, readmitted: 0 } });
      expect(await limitsOf(name)).toEqual({ 'org:7': '6' });
      expect(((await call('GET', `/v1/queues/${name}/keys`)).body.keys as Array<{ key: string; limit: number | null }>).map((k) => [k.key, k.limit])).toEqual([
        ['org:7', 6],
        ['plan:free', null],
        ['team.b-1', null],
      ]);
      const events = await code.readEvents({ after: '0', limit: 100 });
      expect(events.events.filter((e) => e.event === 'key-limit').map((e) => ('key' in e ? [e.key, e.limit] : []))).toEqual([
        ['org:7', 2],
        ['plan:free', 0],
        ['org:7', 5],
        ['org:7', 6],
        ['plan:free', null],
      ]);
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it('parks jobs enqueued with keys on a full key, shows them, and readmits them when the limit is raised', async () => {
      const name = q();
      const consumer = new Leases(new Queue(fx.transport, name));
      expect((await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: 1 })).body).toEqual({ key: 'org:7', limit: 1, readmitted: 0 });
      const bulk = await call('POST', `/v1/queues/${name}/jobs/bulk`, {
        jobs: [
          { payload: 1, group: 'user-1', keys: ['org:7', 'plan:free'] },
          { payload: 2, group: 'user-2', keys: ['org:7'] },
        ],
      });
      expect(bulk.status, JSON.stringify(bulk.body)).toBe(201);
      const one = await call('POST', `/v1/queues/${name}/jobs`, { payload: 3, keys: ['org:7'] });
      expect(one.status, JSON.stringify(one.body)).toBe(201);
      const ids = [...(bulk.body.jobs as Array<{ id: string }>).map((j) => j.id), (one.body as { id: string }).id];

      const claimed = (await consumer.claim(10, 30_000)).jobs;
      expect(claimed).toHaveLength(1);
      const [running] = claimed;
      const parked = ids.filter((id) => id !== running!.id);
      expect((await parkedOn(name, 'org:7')).sort()).toEqual([...parked].sort());
      expect((await call('GET', `/v1/queues/${name}/keys`)).body.keys).toEqual([
        { key: 'org:7', limit: 1, running: 1, parked: 2, rate: null, throttledUntil: null },
        // a key without a limit holds nothing back, and counts the runs that name it
        ...(running!.id === ids[0] ? [{ key: 'plan:free', limit: null, running: 1, parked: 0, rate: null, throttledUntil: null }] : [{ key: 'plan:free', limit: null, running: 0, parked: 0, rate: null, throttledUntil: null }]),
      ]);
      // a parked job is pending, and shows its keys
      const job = await call('GET', `/v1/queues/${name}/jobs/${parked[0]}`);
      expect(job.body).toMatchObject({ id: parked[0], state: 'pending', keys: expect.arrayContaining(['org:7']) });
      expect((await call('GET', `/v1/queues/${name}`)).body).toMatchObject({ counts: { pending: 2, active: 1 } });

      // raised by one: one readmitted, in its order, claimable at once
      expect(await call('PUT', `/v1/queues/${name}/keys/org%3A7/limit`, { limit: 2 })).toEqual({ status: 200, body: { key: 'org:7', limit: 2, readmitted: 1 } });
      expect(await parkedOn(name, 'org:7')).toHaveLength(1);
      expect((await consumer.claim(10, 30_000)).jobs).toHaveLength(1);
      // lifted: every parked job readmitted
      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: null })).toEqual({ status: 200, body: { key: 'org:7', limit: null, readmitted: 1 } });
      expect((await consumer.claim(10, 30_000)).jobs).toHaveLength(1);
      expect((await call('GET', `/v1/queues/${name}/keys`)).body.keys).toContainEqual({ key: 'org:7', limit: null, running: 3, parked: 0, rate: null, throttledUntil: null });
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    // a lowered limit leaves no room (limit - running < 0 is none, not "lifted": lua/key-limit.lua)
    it('readmits nothing when a limit is lowered below its running jobs', async () => {
      const name = q();
      const consumer = new Leases(new Queue(fx.transport, name));
      await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: 2 });
      await new Queue(fx.transport, name).addBulk([1, 2, 3].map((payload) => ({ payload, keys: ['org:7'] })));
      expect((await consumer.claim(10, 30_000)).jobs).toHaveLength(2);
      expect(await parkedOn(name, 'org:7')).toHaveLength(1);
      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: 1 })).toEqual({ status: 200, body: { key: 'org:7', limit: 1, readmitted: 0 } });
      expect(await parkedOn(name, 'org:7')).toHaveLength(1);
    });

    it('sets a key rate, parks the jobs over it, shows it and its throttle in GET /keys, and readmits them when raised or lifted', async () => {
      const name = q();
      const code = new Queue(fx.transport, name);
      const consumer = new Leases(code);
      const rate = { limit: 1, periodMs: 60_000 };
      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/rate`, rate)).toEqual({ status: 200, body: { key: 'org:7', rate, readmitted: 0 } });
      expect(await ratesOf(name)).toEqual({ 'org:7': '1:60000' });
      // a rate alone, no limit on running jobs
      expect(await limitsOf(name)).toEqual({});
      expect((await call('GET', `/v1/queues/${name}/keys`)).body.keys).toEqual([{ key: 'org:7', limit: null, running: 0, parked: 0, rate, throttledUntil: null }]);

      const bulk = await call('POST', `/v1/queues/${name}/jobs/bulk`, {
        jobs: [1, 2, 3].map((payload) => ({ payload, group: `user-${payload}`, keys: ['org:7'] })),
      });
      expect(bulk.status, JSON.stringify(bulk.body)).toBe(201);
      // one start a minute: one runs, two park on the key, and the key is throttled until the window has room
      const first = await consumer.claim(10, 30_000);
      expect(first.jobs).toHaveLength(1);
      expect(await parkedOn(name, 'org:7')).toHaveLength(2);
      const listed = (await call('GET', `/v1/queues/${name}/keys`)).body.keys as Array<{ throttledUntil: number }>;
      expect(listed).toEqual([{ key: 'org:7', limit: null, running: 1, parked: 2, rate, throttledUntil: expect.any(Number) }]);
      expect(listed[0]!.throttledUntil).toBeGreaterThan(first.now);
      expect(listed[0]!.throttledUntil).toBeLessThanOrEqual(first.now + rate.periodMs);
      expect(listed).toEqual(asJson(await code.keyLimits()));
      expect((await call('GET', `/v1/queues/${name}`)).body).toMatchObject({ counts: { pending: 2, active: 1 } });
      expect((await consumer.claim(10, 30_000)).jobs).toEqual([]);

      // raised to two a minute, by the key encoded: room for one more start, readmitted, claimable at once
      const raised = { limit: 2, periodMs: 60_000 };
      expect(await call('PUT', `/v1/queues/${name}/keys/org%3A7/rate`, raised)).toEqual({ status: 200, body: { key: 'org:7', rate: raised, readmitted: 1 } });
      expect(await parkedOn(name, 'org:7')).toHaveLength(1);
      expect((await consumer.claim(10, 30_000)).jobs).toHaveLength(1);
      // the same rate again changes nothing
      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/rate`, raised)).toEqual({ status: 200, body: { key: 'org:7', rate: raised, readmitted: 0 } });
      // lifted: every parked job readmitted, the key's rate and throttle gone
      expect(await call('PUT', `/v1/queues/${name}/keys/org:7/rate`, null)).toEqual({ status: 200, body: { key: 'org:7', rate: null, readmitted: 1 } });
      expect(await ratesOf(name)).toEqual({});
      expect((await consumer.claim(10, 30_000)).jobs).toHaveLength(1);
      expect((await call('GET', `/v1/queues/${name}/keys`)).body.keys).toEqual([{ key: 'org:7', limit: null, running: 3, parked: 0, rate: null, throttledUntil: null }]);
      const events = await code.readEvents({ after: '0', limit: 100 });
      expect(events.events.filter((e) => e.event === 'key-rate').map((e) => ('rate' in e ? [e.key, e.rate] : []))).toEqual([
        ['org:7', rate],
        ['org:7', raised],
        ['org:7', null],
      ]);
      expect(await checkInvariants(fx.raw, name)).toEqual([]);
    });

    it("refuses a bad rate body with 400 and checkRateLimit's message, a bad key with 400 and a partitioned queue with 409, writing nothing", async () => {
      const name = q();
      await new Queue(fx.transport, name).add('x', { keys: ['org:7'] });
      expect((await call('PUT', `/v1/queues/${name}/keys/org:7/rate`, { limit: 3, periodMs: 1000 })).status).toBe(200);
      for (const path of [`/v1/queues/${name}/keys/org:7/rate`, `/v1/queues/${name}/keys/plan:free/rate`]) {
        for (const body of [
          { limit: 0, periodMs: 1000 },
          { limit: -1, periodMs: 1000 },
          { limit: 1.5, periodMs: 1000 },
          { limit: 1, periodMs: 0 },
          { limit: 1, periodMs: MAX_RATE_MS + 1 },
          { limit: '5', periodMs: 1000 },
          { limit: 5 },
          {},
          { limit: 5, periodMs: 1000, burst: 2 },
          [5, 1000],
          5,
          'fast',
          true,
        ]) {
          expect((await refused(name, 400, 'EMQARG', 'PUT', path, body)).error?.message).toBe(rateMessage(body));
        }
        await refused(name, 400, 'EMQARG', 'PUT', path, undefined, '{"limit":');
        await refused(name, 400, 'EMQARG', 'PUT', path, undefined, '');
      }
      for (const key of ['a%2Cb', 'has%20space', 'x'.repeat(129)]) {
        await refused(name, 400, 'EMQARG', 'PUT', `/v1/queues/${name}/keys/${key}/rate`, { limit: 1, periodMs: 1000 });
      }
      await refused(name, 400, 'EMQARG', 'PUT', `/v1/queues/bad%20name/keys/org:7/rate`, { limit: 1, periodMs: 1000 });
      expect(await ratesOf(name)).toEqual({ 'org:7': '3:1000' });
      // no token: 401
      if (fx.target.token) {
        const open = await fetch(`${fx.target.baseUrl}/v1/queues/${name}/keys/org:7/rate`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: 'null' });
        expect(open.status).toBe(401);
        expect(await ratesOf(name)).toEqual({ 'org:7': '3:1000' });
      }
      // nothing on a queue that has none: no key, no registration
      const fresh = q();
      expect((await refused(fresh, 400, 'EMQARG', 'PUT', `/v1/queues/${fresh}/keys/org:7/rate`, { limit: 0, periodMs: 1000 })).error?.message).toBe(
        rateMessage({ limit: 0, periodMs: 1000 }),
      );
      expect(await fx.raw.keys(`emq:{${fresh}}:*`)).toEqual([]);

      // a partitioned queue refuses keys, by its name, a rate and a lift alike
      const split = q();
      await new PartitionedQueue(fx.transport, split, { partitions: 2 }).add('y', { group: 'g' });
      await refused(split, 409, 'EMQPARTITION', 'PUT', `/v1/queues/${split}/keys/org:7/rate`, { limit: 1, periodMs: 1000 });
      await refused(split, 409, 'EMQPARTITION', 'PUT', `/v1/queues/${split}/keys/org:7/rate`, null);
    });

    it('refuses a bad key, limit or body with 400 and a partitioned queue with 409, writing nothing', async () => {
      const name = q();
      await new Queue(fx.transport, name).add('x', { keys: ['org:7'] });
      expect((await call('PUT', `/v1/queues/${name}/keys/org:7/limit`, { limit: 1 })).status).toBe(200);
      const path = `/v1/queues/${name}/keys/org:7/limit`;
      for (const body of [{ limit: -1 }, { limit: 1.5 }, { limit: '2' }, { limit: true }, {}, { limit: 2, key: 'org:8' }, null, [2]]) {
        await refused(name, 400, 'EMQARG', 'PUT', path, body);
      }
      await refused(name, 400, 'EMQARG', 'PUT', path, undefined, '{"limit":');
      // a key is a name: no ',' (the separator of a job's keys), no space, 1 to 128 characters
      for (const key of ['a%2Cb', 'has%20space', 'x'.repeat(129), 'a%2Fb']) {
        await refused(name, 400, 'EMQARG', 'PUT', `/v1/queues/${name}/keys/${key}/limit`, { limit: 1 });
      }
      await refused(name, 400, 'EMQARG', 'PUT', `/v1/queues/bad%20name/keys/org:7/limit`, { limit: 1 });
      await refused(name, 400, 'EMQARG', 'GET', `/v1/queues/bad%20name/keys`);
      // a body that is not JSON
      const before = await fx.stateOf(name);
      const text = await fetch(`${fx.target.baseUrl}${path}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'text/plain', ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}) },
        body: '{"limit":3}',
      });
      expect(text.status).toBe(400);
      expect(await text.json()).toMatchObject({ error: { code: 'EMQARG' } });
      // no token: 401
      if (fx.target.token) {
        const open = await fetch(`${fx.target.baseUrl}${path}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{"limit":3}' });
        expect(open.status).toBe(401);
        expect((await fetch(`${fx.target.baseUrl}/v1/queues/${name}/keys`)).status).toBe(401);
      }
      expect(await fx.stateOf(name)).toEqual(before);
      expect(await limitsOf(name)).toEqual({ 'org:7': '1' });

      // a partitioned queue refuses keys, by its name
      const split = q();
      await new PartitionedQueue(fx.transport, split, { partitions: 2 }).add('y', { group: 'g' });
      await refused(split, 409, 'EMQPARTITION', 'PUT', `/v1/queues/${split}/keys/org:7/limit`, { limit: 1 });
      await refused(split, 409, 'EMQPARTITION', 'GET', `/v1/queues/${split}/keys`);
      // the enqueue body's keys are refused there too
      await refused(split, 409, 'EMQPARTITION', 'POST', `/v1/queues/${split}/jobs`, { payload: 1, group: 'g', keys: ['org:7'] });
    });

    it('lists the routes in the OpenAPI document, with the KeyInfo, KeyLimit and KeyRate shapes', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, { parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown>; security?: unknown }>>;
      const limit = paths['/v1/queues/{queue}/keys/{key}/limit']!;
      expect(Object.keys(limit)).toEqual(['put']);
      expect(limit.put!.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['path:queue', 'path:key']);
      expect(Object.keys(limit.put!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '409']));
      const rate = paths['/v1/queues/{queue}/keys/{key}/rate']!;
      expect(Object.keys(rate)).toEqual(['put']);
      expect(rate.put!.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['path:queue', 'path:key']);
      expect(Object.keys(rate.put!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '409']));
      // the body of the group rate route: a RateLimit or null
      expect(JSON.stringify((rate.put as { requestBody?: unknown }).requestBody)).toContain('{"anyOf":[{"$ref":"#/components/schemas/RateLimit"},{"type":"null"}]');
      const list = paths['/v1/queues/{queue}/keys']!;
      expect(Object.keys(list)).toEqual(['get']);
      expect(Object.keys(list.get!.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '409']));
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
      expect(Object.keys(schemas.KeyInfo!.properties)).toEqual(['key', 'limit', 'running', 'parked', 'rate', 'throttledUntil']);
      expect(JSON.stringify(schemas.KeyInfo!.properties.rate)).toContain('#/components/schemas/RateLimit');
      expect(Object.keys(schemas.KeyLimit!.properties)).toEqual(['key', 'limit', 'readmitted']);
      expect(Object.keys(schemas.KeyRate!.properties)).toEqual(['key', 'rate', 'readmitted']);
    });
  });
}
