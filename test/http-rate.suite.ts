import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../src/errors.js';
import { Leases } from '../src/lease/leases.js';
import { checkHoldMs, checkRateLimit, MAX_RATE_MS } from '../src/queue/rate-limits.js';
import type { ApiTarget } from './http-call.js';
import { asJson, useHttpFixture } from './http-fixture.js';
import { checkInvariants } from './invariants.js';

/** The message the core's check refuses `value` with (what a refused body must answer). */
function coreMessage(check: (value: unknown) => unknown, value: unknown): string {
  try {
    check(value);
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
  throw new Error(`the core takes ${JSON.stringify(value)}`);
}

/**
 * The rate-limit and hold routes of the HTTP contract (docs/design.md, "Rate limits and holds"),
 * against any target (the Node server, the Worker under miniflare; both with a token): each
 * route's answer and the keys it wrote, read back in Redis; the limits and what is throttled in
 * `GET /v1/queues/:queue`, the same as `Queue.stats()`; `emq_rate_limited_total` counting in
 * `/metrics`; bad bodies answered 400 with the core's own message and nothing written (every key
 * of the queue, and its registry entry, compared before and after); the bearer token; and the
 * routes in the OpenAPI document. `redisUrl` is the Redis behind the target.
 */
export function describeHttpRate(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-rate', redisUrl, start });
    const { call, queueName: q, queueOf, stateOf } = fx;
    const meta = (queue: string): string => `emq:{${queue}}:meta`;
    const key = (queue: string, name: string): string => `emq:{${queue}}:${name}`;

    /** The request fails with 400 EMQARG and a message that is `says` (or matches it), and the queue's keys and registry entry are untouched. */
    async function refused(queue: string, says: string | RegExp, method: string, path: string, body?: unknown, rawBody?: string): Promise<void> {
      const before = await stateOf(queue);
      const answer = await call(method, path, body, rawBody);
      const what = `${method} ${path} ${JSON.stringify(body) ?? rawBody}: ${JSON.stringify(answer.body)}`;
      expect(answer.status, what).toBe(400);
      expect(answer.body.error?.code, what).toBe('EMQARG');
      if (typeof says === 'string') expect(answer.body.error?.message, what).toBe(says);
      else expect(answer.body.error?.message, what).toMatch(says);
      expect(await stateOf(queue)).toEqual(before);
    }

    it("sets and lifts the queue's and a group's rate limit, and GET /v1/queues/:queue shows them as Queue.stats() does", async () => {
      const queue = q();
      expect(await call('PUT', `/v1/queues/${queue}/rate`, { limit: 100, periodMs: 60_000 })).toEqual({
        status: 200,
        body: { queue, rate: { limit: 100, periodMs: 60_000 } },
      });
      expect(await fx.raw.hget(meta(queue), 'rate')).toBe('100:60000');
      expect(await call('PUT', `/v1/queues/${queue}/groups/g1/rate`, { limit: 3, periodMs: 1_000 })).toEqual({
        status: 200,
        body: { queue, group: 'g1', rate: { limit: 3, periodMs: 1_000 } },
      });
      expect(await call('PUT', `/v1/queues/${queue}/groups/g2/rate`, { limit: 1, periodMs: MAX_RATE_MS })).toMatchObject({ status: 200 });
      expect(await fx.raw.hgetall(key(queue, 'grate'))).toEqual({ g1: '3:1000', g2: `1:${MAX_RATE_MS}` });
      expect(await fx.raw.hget(meta(queue), 'grates')).toBe('2');

      const stats = await call('GET', `/v1/queues/${queue}`);
      expect(stats.status).toBe(200);
      expect(stats.body).toEqual(asJson(await queueOf(queue).stats()));
      expect(stats.body.rateLimits).toEqual({
        queue: { limit: 100, periodMs: 60_000 },
        groups: { g1: { limit: 3, periodMs: 1_000 }, g2: { limit: 1, periodMs: MAX_RATE_MS } },
        throttled: [],
      });
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);

      // the same again changes nothing; null lifts, and the log of starts goes with it
      expect((await call('PUT', `/v1/queues/${queue}/rate`, { limit: 100, periodMs: 60_000 })).status).toBe(200);
      expect(await call('PUT', `/v1/queues/${queue}/rate`, null)).toEqual({ status: 200, body: { queue, rate: null } });
      expect(await fx.raw.hexists(meta(queue), 'rate')).toBe(0);
      expect(await fx.raw.exists(key(queue, 'starts'))).toBe(0);
      expect(await call('PUT', `/v1/queues/${queue}/groups/g1/rate`, null)).toEqual({ status: 200, body: { queue, group: 'g1', rate: null } });
      expect(await call('PUT', `/v1/queues/${queue}/groups/g2/rate`, null)).toMatchObject({ status: 200 });
      expect(await fx.raw.exists(key(queue, 'grate'))).toBe(0);
      expect(await fx.raw.hexists(meta(queue), 'grates')).toBe(0);
      expect((await call('GET', `/v1/queues/${queue}`)).body.rateLimits).toEqual({ queue: null, groups: {}, throttled: [] });
      // the changes are events, as from TypeScript
      const events = (await call('GET', `/v1/queues/${queue}/events?after=0&limit=1000`)).body.events as Array<Record<string, unknown>>;
      expect(events.filter((e) => e.event === 'rate').map(({ group, rate }) => ({ group, rate }))).toEqual([
        { group: undefined, rate: { limit: 100, periodMs: 60_000 } },
        { group: 'g1', rate: { limit: 3, periodMs: 1_000 } },
        { group: 'g2', rate: { limit: 1, periodMs: MAX_RATE_MS } },
        { group: undefined, rate: null },
        { group: 'g1', rate: null },
        { group: 'g2', rate: null },
      ]);
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
    });

    it('holds a group and the ungrouped jobs: off the ring and throttled until the hold ends, shown in GET', async () => {
      const queue = q();
      await queueOf(queue).addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'h' }, { payload: 3 }]);
      const held = await call('POST', `/v1/queues/${queue}/groups/g/hold`, { ms: 60_000 });
      expect(held.status, JSON.stringify(held.body)).toBe(200);
      expect(held.body).toEqual({ queue, group: 'g', heldUntil: expect.any(Number) });
      const gUntil = held.body.heldUntil as number;
      expect(Number(await fx.raw.hget(key(queue, 'holds'), 'g'))).toBe(gUntil);
      expect(Number(await fx.raw.zscore(key(queue, 'throttled'), 'g'))).toBe(gUntil);
      expect(await fx.raw.lrange(key(queue, 'ring'), 0, -1)).not.toContain('g');
      // a shorter hold keeps the longer one
      expect((await call('POST', `/v1/queues/${queue}/groups/g/hold`, { ms: 10 })).body).toEqual({ queue, group: 'g', heldUntil: gUntil });

      const ungrouped = await call('POST', `/v1/queues/${queue}/ungrouped/hold`, { ms: 30_000 });
      expect(ungrouped.status, JSON.stringify(ungrouped.body)).toBe(200);
      expect(ungrouped.body).toEqual({ queue, group: null, heldUntil: expect.any(Number) });
      const starUntil = ungrouped.body.heldUntil as number;
      expect(Number(await fx.raw.hget(key(queue, 'holds'), '*'))).toBe(starUntil);
      expect(Number(await fx.raw.zscore(key(queue, 'throttled'), '*'))).toBe(starUntil);
      expect(await fx.raw.lrange(key(queue, 'ring'), 0, -1)).toEqual(['h']);
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);

      const stats = await call('GET', `/v1/queues/${queue}`);
      expect(stats.body).toEqual(asJson(await queueOf(queue).stats()));
      expect(stats.body.rateLimits).toEqual({
        queue: null,
        groups: {},
        throttled: [
          { group: null, ungrouped: true, until: starUntil, heldUntil: starUntil },
          { group: 'g', ungrouped: false, until: gUntil, heldUntil: gUntil },
        ],
      });
      // only h's job starts
      const claimed = await new Leases(queueOf(queue)).claim(5, 30_000);
      expect(claimed.jobs.map((j) => j.group)).toEqual(['h']);
      const events = (await call('GET', `/v1/queues/${queue}/events?after=0&limit=1000`)).body.events as Array<Record<string, unknown>>;
      expect(events.filter((e) => e.event === 'held').map(({ group, heldUntil }) => ({ group, heldUntil }))).toEqual([
        { group: 'g', heldUntil: gUntil },
        { group: 'g', heldUntil: gUntil },
        { group: undefined, heldUntil: starUntil },
      ]);
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
    });

    it('shows a group throttled at its rate limit, and /metrics counts it (emq_rate_limited_total)', async () => {
      const queue = q();
      const metric = async (): Promise<string | undefined> => {
        const res = await fetch(`${fx.target.baseUrl}/metrics`, { headers: fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {} });
        expect(res.status).toBe(200);
        return new RegExp(`^emq_rate_limited_total\\{queue="${queue}"\\} (\\d+)$`, 'm').exec(await res.text())?.[1];
      };
      expect((await call('PUT', `/v1/queues/${queue}/groups/g/rate`, { limit: 1, periodMs: 60_000 })).status).toBe(200);
      await queueOf(queue).addBulk([{ payload: 1, group: 'g' }, { payload: 2, group: 'g' }]);
      expect(await metric()).toBe('0');
      const claimed = await new Leases(queueOf(queue)).claim(5, 30_000);
      expect(claimed.jobs).toHaveLength(1);
      const until = Number(await fx.raw.zscore(key(queue, 'throttled'), 'g'));
      expect(until).toBe(claimed.now + 60_000);
      expect((await call('GET', `/v1/queues/${queue}`)).body.rateLimits).toEqual({
        queue: null,
        groups: { g: { limit: 1, periodMs: 60_000 } },
        throttled: [{ group: 'g', ungrouped: false, until, heldUntil: null }],
      });
      expect(await metric()).toBe('1');
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
    });

    it("refuses bad bodies with 400 and the core's own message, and writes nothing", async () => {
      const queue = q();
      // limits and a hold already there: a refused request must not change them either
      await call('PUT', `/v1/queues/${queue}/rate`, { limit: 10, periodMs: 1000 });
      await call('PUT', `/v1/queues/${queue}/groups/g/rate`, { limit: 2, periodMs: 1000 });
      await call('POST', `/v1/queues/${queue}/groups/g/hold`, { ms: 60_000 });
      const badRates: unknown[] = [
        { limit: 0, periodMs: 1000 },
        { limit: -1, periodMs: 1000 },
        { limit: 1.5, periodMs: 1000 },
        { limit: 1, periodMs: 0 },
        { limit: 1, periodMs: -1 },
        { limit: 1, periodMs: 0.5 },
        { limit: 1, periodMs: MAX_RATE_MS + 1 },
        { limit: '5', periodMs: 1000 },
        { limit: 5 },
        { periodMs: 1000 },
        {},
        { limit: 5, periodMs: 1000, burst: 2 },
        [5, 1000],
        5,
        'fast',
        true,
      ];
      for (const path of [`/v1/queues/${queue}/rate`, `/v1/queues/${queue}/groups/g/rate`, `/v1/queues/${queue}/groups/other/rate`]) {
        for (const body of badRates) await refused(queue, coreMessage(checkRateLimit, body), 'PUT', path, body);
        await refused(queue, /JSON|body/i, 'PUT', path, undefined, '{not json');
        await refused(queue, /JSON|body/i, 'PUT', path, undefined, '');
      }
      const badHolds: Array<[unknown, string | RegExp]> = [
        ...[0, -5, 1.5, '100', MAX_RATE_MS + 1, null].map((ms): [unknown, string] => [{ ms }, coreMessage(checkHoldMs, ms)]),
        [{}, coreMessage(checkHoldMs, undefined)],
        [{ ms: 1000, extra: 1 }, /extra|unrecognized/i],
        [null, /body/],
        [5, /body/],
        [[1000], /body/],
      ];
      for (const path of [`/v1/queues/${queue}/groups/g/hold`, `/v1/queues/${queue}/groups/h/hold`, `/v1/queues/${queue}/ungrouped/hold`]) {
        for (const [body, says] of badHolds) await refused(queue, says, 'POST', path, body);
      }
      // names: the path's queue and group
      await refused(queue, /group/, 'PUT', `/v1/queues/${queue}/groups/a%20b/rate`, { limit: 1, periodMs: 1000 });
      await refused(queue, /group/, 'POST', `/v1/queues/${queue}/groups/*/hold`, { ms: 1000 });
      await refused(queue, /group/, 'POST', `/v1/queues/${queue}/groups/${'x'.repeat(129)}/hold`, { ms: 1000 });
      await refused(queue, /queue/, 'PUT', '/v1/queues/bad%20name/rate', { limit: 1, periodMs: 1000 });
      // a body that is not JSON
      const form = await fetch(`${fx.target.baseUrl}/v1/queues/${queue}/rate`, {
        method: 'PUT',
        headers: { 'Content-Type': 'text/plain', ...(fx.target.token ? { Authorization: `Bearer ${fx.target.token}` } : {}) },
        body: 'limit=1',
      });
      expect(form.status).toBe(400);
      expect(await fx.raw.hget(meta(queue), 'rate')).toBe('10:1000');
      expect(await checkInvariants(fx.raw, queue)).toEqual([]);
      // and nothing on a queue that has none: no key, no registration
      const fresh = q();
      await refused(fresh, coreMessage(checkRateLimit, { limit: 0, periodMs: 1000 }), 'PUT', `/v1/queues/${fresh}/rate`, { limit: 0, periodMs: 1000 });
      await refused(fresh, coreMessage(checkHoldMs, 0), 'POST', `/v1/queues/${fresh}/ungrouped/hold`, { ms: 0 });
      expect(await fx.raw.keys(`emq:{${fresh}}:*`)).toEqual([]);
      expect(await fx.raw.sismember('emq:queues', fresh)).toBe(0);
    });

    it('requires the bearer token, as every route but /healthz does', async () => {
      const queue = q();
      const requests: Array<[string, string, unknown]> = [
        ['PUT', `/v1/queues/${queue}/rate`, { limit: 1, periodMs: 1000 }],
        ['PUT', `/v1/queues/${queue}/groups/g/rate`, { limit: 1, periodMs: 1000 }],
        ['POST', `/v1/queues/${queue}/groups/g/hold`, { ms: 1000 }],
        ['POST', `/v1/queues/${queue}/ungrouped/hold`, { ms: 1000 }],
      ];
      for (const [method, path, body] of requests) {
        for (const auth of fx.target.token ? [undefined, 'wrong'] : []) {
          const res = await fetch(fx.target.baseUrl + path, {
            method,
            headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: `Bearer ${auth}` } : {}) },
            body: JSON.stringify(body),
          });
          expect(res.status, `${method} ${path}`).toBe(401);
          expect(((await res.json()) as { error: { code: string } }).error.code).toBe('EMQAUTH');
        }
      }
      expect(await fx.raw.keys(`emq:{${queue}}:*`)).toEqual([]);
      // with it, each answers
      for (const [method, path, body] of requests) expect((await call(method, path, body)).status, `${method} ${path}`).toBe(200);
    });

    it('documents the rate routes and the limits in the stats answer in the OpenAPI document', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
      expect(Object.keys(paths['/v1/queues/{queue}/rate']!)).toEqual(['put']);
      expect(Object.keys(paths['/v1/queues/{queue}/groups/{group}/rate']!)).toEqual(['put']);
      expect(Object.keys(paths['/v1/queues/{queue}/groups/{group}/hold']!)).toEqual(['post']);
      expect(Object.keys(paths['/v1/queues/{queue}/ungrouped/hold']!)).toEqual(['post']);
      expect(JSON.stringify(paths['/v1/queues/{queue}/rate']!.put!.requestBody)).toContain('{"anyOf":[{"$ref":"#/components/schemas/RateLimit"},{"type":"null"}]');
      expect(Object.keys(paths['/v1/queues/{queue}/groups/{group}/hold']!.post!.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, { description?: string }>; additionalProperties?: boolean }> }).schemas;
      expect(Object.keys(schemas.RateLimit!.properties)).toEqual(['limit', 'periodMs']);
      expect(schemas.RateLimit!.additionalProperties).toBe(false);
      expect(Object.keys(schemas.RateLimits!.properties)).toEqual(['queue', 'groups', 'throttled']);
      expect(Object.keys(schemas.Throttled!.properties)).toEqual(['group', 'ungrouped', 'until', 'heldUntil']);
      for (const schema of [schemas.RateLimit!, schemas.RateLimits!, schemas.Throttled!]) {
        for (const [name, property] of Object.entries(schema.properties)) expect(property.description, name).toBeTruthy();
      }
      expect(JSON.stringify(paths['/v1/queues/{queue}']!.get!.responses['200'])).toContain('"rateLimits":{"$ref":"#/components/schemas/RateLimits"');
    });
  });
}
