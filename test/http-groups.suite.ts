import { describe, expect, it } from 'vitest';
import { Leases } from '../src/lease/leases.js';
import { PartitionedQueue } from '../src/partitions/partitioned-queue.js';
import { Queue } from '../src/queue/queue.js';
import type { Answer, ApiTarget } from './http-call.js';
import { asJson, useHttpFixture } from './http-fixture.js';
import { snapshotKeys } from './helpers.js';

/**
 * `GET /v1/queues/:queue/groups` (the dashboard's groups table), against any target (the Node
 * server, the Worker under miniflare; both with a token): each group's numbers as `Queue.groups`
 * answers them, as JSON; a walk of pages by the cursor; a prefix; a partitioned queue by its
 * name; bad queries answered 400 EMQARG with nothing written; the token; the OpenAPI document.
 */
export function describeHttpGroups(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-groups', redisUrl, start, removeQueues: true });
    const { call, queueName: q } = fx;
    const groupNames = (answer: Answer): string[] => (answer.body.groups as Array<{ group: string }>).map((g) => g.group);

    /** Every page from the start, `query` added to each request. */
    async function walk(path: string, query: string): Promise<Answer[]> {
      const pages: Answer[] = [];
      let cursor: string | null = null;
      do {
        const page = await call('GET', `${path}?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        pages.push(page);
        cursor = page.body.cursor as string | null;
      } while (cursor !== null);
      return pages;
    }

    it("answers each group's numbers, null for none, as Queue.groups does", async () => {
      const queue = q();
      const code = new Queue(fx.transport, queue);
      await code.addBulk([...[1, 2, 3].map((i) => ({ payload: i, group: 'a' })), { payload: 1, group: 'b' }, { payload: 1, group: 'c' }]);
      await code.setGroupLimit('a', 2);
      await code.setGroupRateLimit('b', { limit: 5, periodMs: 1_000 });
      await code.pauseGroup('c');
      const heldUntil = await code.holdGroup('b', 60_000);
      await new Leases(code).claim(10, 30_000);

      const answer = await call('GET', `/v1/queues/${queue}/groups`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        groups: [
          { group: 'a', active: 2, limit: 2, rate: null, paused: false, heldUntil: null, throttledUntil: null, waiting: 1 },
          { group: 'b', active: 0, limit: null, rate: { limit: 5, periodMs: 1_000 }, paused: false, heldUntil, throttledUntil: heldUntil, waiting: 1 },
          { group: 'c', active: 0, limit: null, rate: null, paused: true, heldUntil: null, throttledUntil: null, waiting: 1 },
        ],
        cursor: null,
      });
      expect(answer.body).toEqual(asJson(await code.groups()));
      // a queue with no group, or none of the name, answers an empty page
      expect((await call('GET', `/v1/queues/${q()}/groups`)).body).toEqual({ groups: [], cursor: null });
      expect((await call('GET', `/v1/queues/${queue}/groups?prefix=z`)).body).toEqual({ groups: [], cursor: null });
    });

    it('walks many groups by the cursor, and keeps a prefix', async () => {
      const queue = q();
      const all = Array.from({ length: 200 }, (_, i) => `g-${String(i).padStart(3, '0')}`);
      await new Queue(fx.transport, queue).addBulk(all.map((group) => ({ payload: 1, group })));
      const pages = await walk(`/v1/queues/${queue}/groups`, 'limit=40');
      expect(pages.length).toBeGreaterThan(2);
      expect([...new Set(pages.flatMap(groupNames))].sort()).toEqual(all);
      const some = await walk(`/v1/queues/${queue}/groups`, 'limit=10&prefix=g-1');
      expect([...new Set(some.flatMap(groupNames))].sort()).toEqual(all.filter((g) => g.startsWith('g-1')));
    });

    it("walks a partitioned queue's groups by its name, partition after partition", async () => {
      const queue = q();
      const code = new PartitionedQueue(fx.transport, queue, { partitions: 3 });
      const all = Array.from({ length: 30 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
      await code.addBulk(all.map((group) => ({ payload: 1, group })));
      const pages = await walk(`/v1/queues/${queue}/groups`, 'limit=7');
      for (const page of pages.slice(0, -1)) expect(page.body.cursor).toMatch(/^[0-2]:\d+$/);
      expect([...new Set(pages.flatMap(groupNames))].sort()).toEqual(all);
      const bad = await call('GET', `/v1/queues/${queue}/groups?cursor=3:0`);
      expect(bad.status).toBe(400);
      expect(bad.body.error?.code).toBe('EMQARG');
    });

    it('refuses a bad query with 400 EMQARG, writing nothing', async () => {
      const queue = q();
      await new Queue(fx.transport, queue).add(1, { group: 'g' });
      const before = await snapshotKeys(fx.raw, `emq:{${queue}}:*`);
      for (const query of ['limit=0', 'limit=1001', 'limit=x', 'limit=1.5', 'prefix=a*', 'prefix=a%20b', `prefix=${'x'.repeat(129)}`, 'cursor=abc', 'cursor=-1', 'cursor=18446744073709551616', 'cursor=0:0', 'other=1']) {
        const answer = await call('GET', `/v1/queues/${queue}/groups?${query}`);
        expect(answer.status, query).toBe(400);
        expect(answer.body.error?.code, query).toBe('EMQARG');
      }
      expect((await call('GET', '/v1/queues/a%20b/groups')).status).toBe(400);
      expect(await snapshotKeys(fx.raw, `emq:{${queue}}:*`)).toEqual(before);
    });

    it('requires the token when one is set', async () => {
      if (!fx.target.token) return;
      const res = await fetch(`${fx.target.baseUrl}/v1/queues/${q()}/groups`);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('EMQAUTH');
    });

    it('documents the route in the OpenAPI document', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, { parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown> }>>;
      const route = paths['/v1/queues/{queue}/groups']!;
      expect(Object.keys(route)).toEqual(['get']);
      expect(route.get!.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['path:queue', 'query:cursor', 'query:limit', 'query:prefix']);
      expect(Object.keys(route.get!.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
      expect(Object.keys(schemas.GroupInfo!.properties)).toEqual(['group', 'active', 'limit', 'rate', 'paused', 'heldUntil', 'throttledUntil', 'waiting']);
    });
  });
}
