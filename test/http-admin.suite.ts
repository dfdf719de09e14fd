import { describe, expect, it } from 'vitest';
import { Leases } from '../src/lease/leases.js';
import { Queue } from '../src/queue/queue.js';
import type { ApiTarget } from './http-call.js';
import { useHttpFixture } from './http-fixture.js';
import { checkInvariants } from './invariants.js';

/**
 * The admin routes of the HTTP contract (docs/design.md, "Admin in bulk"), against any target (the
 * Node server, the Worker under miniflare): each route's success, its typed refusals (nothing
 * written: the queue's keys and values and its registry entry compared before and after), and its
 * effect read in Redis. `redisUrl` is the Redis behind the target.
 */
export function describeHttpAdmin(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-admin', redisUrl, start });
    const { call, queueName: q } = fx;

    /** Every key of the queue with its value, and its registry entry. */
    async function stateOf(queue: string): Promise<unknown> {
      const out: Record<string, unknown> = {};
      for (const key of (await fx.raw.keys(`emq:{${queue}}:*`)).sort()) out[key] = [await fx.raw.type(key), await fx.raw.dump(key)];
      return { keys: out, registered: await fx.raw.sismember('emq:queues', queue) };
    }

    /** The request fails with `status` and `code`, and the queue's keyspace and registry entry are untouched. */
    async function refused(queue: string, status: number, code: string, method: string, path: string, body?: unknown, rawBody?: string): Promise<void> {
      const before = await stateOf(queue);
      const answer = await call(method, path, body, rawBody);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.error?.code).toBe(code);
      expect(await stateOf(queue)).toEqual(before);
    }

    /** A consumer's side of `queue`: what a Node process would claim and settle with. */
    const consumer = (queue: string) => {
      const side = new Queue(fx.transport, queue, { keepCompletedMs: -1 });
      return { queue: side, leases: new Leases(side) };
    };

    /** `n` jobs sent to dead the way a consumer does. */
    async function bury(queue: string, n: number): Promise<string[]> {
      const { queue: side, leases } = consumer(queue);
      await side.addBulk(Array.from({ length: n }, (_, i) => ({ payload: i, maxAttempts: 1})));
      const { jobs } = await leases.claim(n, 30_000);
      await leases.fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'boom' })));
      return jobs.map((j) => j.id);
    }

    it('lists a state\'s jobs a page at a time', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 'u1' }, { payload: 'g1', group: 'g' }, { payload: 'u2' }, { payload: 's', delayMs: 60_000 }] });
      const pending = await call('GET', `/v1/queues/${queue}/jobs?state=pending&limit=2`);
      expect(pending.status).toBe(200);
      expect((pending.body.jobs as Array<{ payload: string }>).map((j) => j.payload)).toEqual(['u1', 'u2']);
      const next = await call('GET', `/v1/queues/${queue}/jobs?state=pending&limit=2&offset=2`);
      expect(next.body.jobs).toMatchObject([{ payload: 'g1', group: 'g', state: 'pending', attempt: 0 }]);
      expect((await call('GET', `/v1/queues/${queue}/jobs?state=scheduled`)).body.jobs).toMatchObject([{ payload: 's', state: 'scheduled' }]);
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/jobs`);
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/jobs?state=parked`);
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/jobs?state=dead&limit=1001`);
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/jobs?state=dead&offset=-1`);
      await refused(queue, 400, 'EMQARG', 'GET', `/v1/queues/${queue}/jobs?state=dead&other=1`);
    });

    it('cleans finished jobs, answering their ids and whether it stopped at its limit', async () => {
      const queue = q();
      const ids = await bury(queue, 3);
      const first = await call('POST', `/v1/queues/${queue}/clean`, { state: 'dead', limit: 2 });
      expect(first).toMatchObject({ status: 200, body: { more: true } });
      expect(first.body.ids).toHaveLength(2);
      const rest = await call('POST', `/v1/queues/${queue}/clean`, { state: 'dead' });
      expect(rest.body).toMatchObject({ more: false });
      expect([...(first.body.ids as string[]), ...(rest.body.ids as string[])].sort()).toEqual([...ids].sort());
      expect(await fx.raw.exists(`emq:{${queue}}:dead`)).toBe(0);
      expect(await call('POST', `/v1/queues/${queue}/clean`, { state: 'dead' })).toMatchObject({ status: 200, body: { ids: [], more: false } });
      await bury(queue, 1);
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/clean`, { state: 'pending' });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/clean`, { state: 'dead', olderThanMs: -1 });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/clean`, { state: 'dead', limit: 100_001 });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/clean`, { state: 'dead', age: 5 });
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/clean`, undefined, '{not json');
    });

    it('drains waiting jobs and keeps the queue consistent', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2, group: 'g' }, { payload: 3, delayMs: 60_000 }] });
      expect(await call('POST', `/v1/queues/${queue}/drain?limit=2`)).toMatchObject({ status: 200, body: { removed: 2, more: true } });
      expect(await call('POST', `/v1/queues/${queue}/drain`)).toMatchObject({ status: 200, body: { removed: 1, more: false } });
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 0, scheduled: 0 } });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/drain?limit=0`);
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/drain?limit=lots`);
    });

    it('obliterates a queue: refused with 409 while jobs are active, forced it goes', async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 1 }, { payload: 2 }] });
      const { leases } = consumer(queue);
      await leases.claim(1, 30_000);
      await refused(queue, 409, 'EMQSTATE', 'DELETE', `/v1/queues/${queue}`);
      await refused(queue, 409, 'EMQSTATE', 'DELETE', `/v1/queues/${queue}?force=false`);
      await refused(queue, 400, 'EMQARG', 'DELETE', `/v1/queues/${queue}?force=yes`);
      expect(await call('DELETE', `/v1/queues/${queue}?force=true`)).toMatchObject({ status: 200, body: { queue, obliterated: true } });
      // only request records are left, each to expire
      for (const key of await fx.raw.keys(`emq:{${queue}}:*`)) {
        expect(key).toContain(':req:');
        expect(await fx.raw.pttl(key)).toBeGreaterThan(0);
      }
      expect(await fx.raw.sismember('emq:queues', queue)).toBe(0);
      // twice: still gone
      expect(await call('DELETE', `/v1/queues/${queue}`)).toMatchObject({ status: 200, body: { obliterated: true } });
    });

    it('reprocesses dead jobs in bulk', async () => {
      const queue = q();
      await bury(queue, 3);
      expect(await call('POST', `/v1/queues/${queue}/dead/reprocess?limit=2`)).toMatchObject({ status: 200, body: { reprocessed: 2, more: true } });
      expect(await call('POST', `/v1/queues/${queue}/dead/reprocess`)).toMatchObject({ status: 200, body: { reprocessed: 1, more: false } });
      expect((await call('GET', `/v1/queues/${queue}`)).body).toMatchObject({ counts: { pending: 3, dead: 0 } });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
      await refused(queue, 400, 'EMQARG', 'POST', `/v1/queues/${queue}/dead/reprocess?limit=-1`);
    });

    it("changes a waiting job's priority and payload, with 404, 409 and 413 where they fit", async () => {
      const queue = q();
      await call('POST', `/v1/queues/${queue}/jobs/bulk`, { jobs: [{ payload: 'a', id: 'a' }, { payload: 'b', id: 'b' }] });
      expect(await call('PUT', `/v1/queues/${queue}/jobs/a/priority`, { priority: 3 })).toMatchObject({ status: 200, body: { id: 'JOB:a', priority: 3 } });
      expect((await call('GET', `/v1/queues/${queue}/jobs?state=pending`)).body.jobs).toMatchObject([{ id: 'JOB:b' }, { id: 'JOB:a', priority: 3 }]);
      expect(await call('PUT', `/v1/queues/${queue}/jobs/JOB:b/payload`, { payload: { to: 'new' } })).toMatchObject({ status: 200, body: { id: 'JOB:b', updated: true } });
      expect((await call('GET', `/v1/queues/${queue}/jobs/b`)).body).toMatchObject({ payload: { to: 'new' } });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);

      await refused(queue, 404, 'EMQNOTFOUND', 'PUT', `/v1/queues/${queue}/jobs/nope/priority`, { priority: 1 });
      await refused(queue, 404, 'EMQNOTFOUND', 'PUT', `/v1/queues/${queue}/jobs/nope/payload`, { payload: 1 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/jobs/a/priority`, { priority: -1 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/jobs/a/priority`, { priority: 2_097_152 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/jobs/a/payload`, {});
      await refused(queue, 413, 'EMQTOOLARGE', 'PUT', `/v1/queues/${queue}/jobs/a/payload`, { payload: 'x'.repeat(1024 * 1024 + 10) });
      const { leases } = consumer(queue);
      await leases.claim(1, 30_000);
      await refused(queue, 409, 'EMQSTATE', 'PUT', `/v1/queues/${queue}/jobs/b/priority`, { priority: 1 });
      await refused(queue, 409, 'EMQSTATE', 'PUT', `/v1/queues/${queue}/jobs/b/payload`, { payload: 1 });
    });

    it('sets and reads the dead-job retention', async () => {
      const queue = q();
      expect(await call('GET', `/v1/queues/${queue}/dead/retention`)).toMatchObject({ status: 200, body: { maxAgeMs: null, maxCount: null } });
      expect(await call('PUT', `/v1/queues/${queue}/dead/retention`, { maxCount: 2 })).toMatchObject({ status: 200, body: { maxAgeMs: null, maxCount: 2 } });
      await bury(queue, 4);
      expect(await fx.raw.zcard(`emq:{${queue}}:dead`)).toBe(2);
      expect(await call('GET', `/v1/queues/${queue}/dead/retention`)).toMatchObject({ body: { maxAgeMs: null, maxCount: 2 } });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/dead/retention`, { maxCount: -1 });
      await refused(queue, 400, 'EMQARG', 'PUT', `/v1/queues/${queue}/dead/retention`, { keep: 5 });
    });

    it('documents the admin routes in the OpenAPI document', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, unknown>>;
      expect(Object.keys(paths['/v1/queues/{queue}/jobs']!).sort()).toEqual(['get', 'post']);
      expect(Object.keys(paths['/v1/queues/{queue}']!).sort()).toEqual(['delete', 'get']);
      for (const path of ['/v1/queues/{queue}/clean', '/v1/queues/{queue}/drain', '/v1/queues/{queue}/dead/reprocess']) expect(paths[path]).toHaveProperty('post');
      for (const path of ['/v1/queues/{queue}/jobs/{id}/priority', '/v1/queues/{queue}/jobs/{id}/payload']) expect(paths[path]).toHaveProperty('put');
      expect(Object.keys(paths['/v1/queues/{queue}/dead/retention']!).sort()).toEqual(['get', 'put']);
    });
  });
}
