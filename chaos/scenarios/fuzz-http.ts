import fc from 'fast-check';
import { Redis } from 'ioredis';
import { createApp } from '../../src/http/app.js';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import type { Scenario, ScenarioContext, ScenarioResult } from '../lib/scenario.js';

const TOKEN = 'fuzz-token';

/** Strings a route may meet in a path segment, a query value or a header. */
const segment = fc.oneof(
  { arbitrary: fc.constantFrom('q', 'fuzz', '1', 'a.b-c_d', 'JOB:1'), weight: 3 },
  { arbitrary: fc.constantFrom('JOB:', '', ' ', '%00', '..', '%2F', 'é', '𝕏', 'x'.repeat(129), 'x'.repeat(201)), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
);

/** JSON values, from small to the edges of the schemas. */
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, -1, 0, 1.5, 2 ** 53, 'x'.repeat(1000), [], {}),
);

const enqueueBody = fc.record(
  {
    payload: value,
    id: segment,
    group: segment,
    delayMs: value,
    runAt: fc.oneof(value, fc.constantFrom('2026-12-01T00:00:00Z', 'not a date')),
    priority: value,
    maxAttempts: value,
    backoffMs: value,
    backoff: value,
    dedupe: fc.oneof(value, fc.record({ key: fc.oneof(segment, value), ttlMs: value, replace: value, unknown: value }, { requiredKeys: [] })),
    unknown: value,
  },
  { requiredKeys: [] },
);

/** Flow trees (POST /v1/flows): valid ones, and mutated ones (bad names, policies, shapes, depth). */
const { flowTree } = fc.letrec((tie) => ({
  flowTree: fc.record(
    {
      queue: fc.oneof({ arbitrary: fc.constantFrom('fq', 'fr'), weight: 4 }, { arbitrary: segment, weight: 1 }),
      payload: value,
      id: segment,
      group: segment,
      priority: value,
      delayMs: value,
      onFailure: fc.oneof(fc.constantFrom('fail-parent', 'ignore', 'remove'), value),
      children: fc.oneof({ arbitrary: fc.array(tie('flowTree'), { maxLength: 3 }), weight: 3 }, { arbitrary: value, weight: 1 }),
      unknown: value,
    },
    { requiredKeys: ['queue', 'payload'] },
  ),
}));

const request = fc.record({
  method: fc.oneof({ arbitrary: fc.constant('POST'), weight: 3 }, { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'), weight: 2 }),
  path: fc.oneof(
    fc.tuple(segment).map(([q]) => `/v1/queues/${encodeURIComponent(q)}/jobs`),
    fc.tuple(segment).map(([q]) => `/v1/queues/${encodeURIComponent(q)}/jobs/bulk`),
    fc.tuple(segment, segment).map(([q, id]) => `/v1/queues/${encodeURIComponent(q)}/jobs/${encodeURIComponent(id)}`),
    fc.tuple(segment, segment).map(([q, id]) => `/v1/queues/${encodeURIComponent(q)}/jobs/${encodeURIComponent(id)}/reprocess`),
    fc.tuple(segment, segment).map(([q, g]) => `/v1/queues/${encodeURIComponent(q)}/groups/${encodeURIComponent(g)}/limit`),
    // rate limits and holds
    fc.tuple(segment, fc.oneof(segment, fc.constant('')), fc.constantFrom('rate', 'hold')).map(([q, g, what]) => `/v1/queues/${encodeURIComponent(q)}${g === '' ? (what === 'hold' ? '/ungrouped' : '') : `/groups/${encodeURIComponent(g)}`}/${what}`),
    fc.tuple(segment).map(([q]) => `/v1/queues/${encodeURIComponent(q)}/dead`),
    // admin in bulk (the admin routes)
    fc.tuple(segment, fc.constantFrom('', '/clean', '/drain', '/dead/reprocess', '/dead/retention')).map(([q, rest]) => `/v1/queues/${encodeURIComponent(q)}${rest}`),
    fc.tuple(segment, segment, fc.constantFrom('priority', 'payload')).map(([q, id, what]) => `/v1/queues/${encodeURIComponent(q)}/jobs/${encodeURIComponent(id)}/${what}`),
    fc.tuple(segment, fc.oneof(segment, fc.constant(''))).map(([q, id]) => `/v1/queues/${encodeURIComponent(q)}/schedulers${id === '' ? '' : `/${encodeURIComponent(id)}`}`),
    { arbitrary: fc.constant('/v1/flows'), weight: 2 },
    fc.constantFrom('/healthz', '/metrics', '/v1/openapi.json', '/', '/v1', '/v1/queues'),
    fc.string({ maxLength: 30 }).map((p) => `/${p}`),
  ),
  query: fc.oneof(
    fc.constant(''),
    fc.tuple(segment, segment).map(([a, b]) => `?limit=${encodeURIComponent(a)}&offset=${encodeURIComponent(b)}`),
    fc.tuple(fc.constantFrom('pending', 'dead', 'completed', 'waiting'), segment).map(([s, f]) => `?state=${s}&force=${encodeURIComponent(f)}`),
  ),
  body: fc.oneof(
    // well-formed often enough that requests get past validation and write
    { arbitrary: fc.record({ payload: value }, { requiredKeys: ['payload'] }).map((b) => JSON.stringify(b)), weight: 3 },
    fc.constant(undefined),
    enqueueBody.map((b) => JSON.stringify(b)),
    fc.array(enqueueBody, { maxLength: 3 }).map((jobs) => JSON.stringify({ jobs })),
    value.map((v) => JSON.stringify(v)),
    flowTree.map((t) => JSON.stringify(t)),
    fc.string({ maxLength: 50 }),
    fc.record({ limit: value, periodMs: value, ms: value, unknown: value }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    fc.constantFrom('{"payload":1', '{"limit":null}', '{"limit":-1}', 'null', '{"limit":5,"periodMs":1000}', '{"ms":500}', '{"payload":"' + 'x'.repeat(1_100_000) + '"}'),
    fc.record({ state: fc.constantFrom('dead', 'completed', 'pending'), olderThanMs: value, limit: value, priority: value, maxAgeMs: value, maxCount: value }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    // a scheduler's body: a spec (cron with odd patterns and zones, every, bounds) and its job
    fc
      .record(
        {
          cron: fc.oneof(value, fc.constantFrom('* * * * *', '*/2 * * * * *', '0 0 30 2 *', '61 * * * *', '@daily', '* * *')),
          tz: fc.oneof(value, fc.constantFrom('Europe/Berlin', 'Mars/Phobos', '')),
          every: fc.oneof(value, fc.constantFrom(99, 100, 1000, 60_000)),
          startAt: fc.oneof(value, fc.constantFrom('2026-12-01T00:00:00Z', 'soon')),
          endAt: value,
          limit: value,
          job: fc.oneof(value, fc.record({ payload: value, group: segment, priority: value, maxAttempts: value, backoff: value }, { requiredKeys: ['payload'] })),
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
  ),
  contentType: fc.constantFrom('application/json', 'text/plain', '', 'application/json; charset=utf-8'),
  auth: fc.oneof({ arbitrary: fc.constant(`Bearer ${TOKEN}`), weight: 8 }, { arbitrary: fc.constantFrom('Bearer wrong', '', 'Basic abc'), weight: 1 }),
  idempotencyKey: fc.oneof(fc.constant(undefined), segment),
});

/**
 * Fuzzed input over the HTTP API (the hono app on Node, in process): generated methods, paths,
 * query strings, bodies (valid, mutated, malformed, at and past the size limits), content types,
 * tokens and idempotency keys. Never a 5xx (Redis is up), every error in the `{error: {code,
 * message}}` shape, no refused request that adds or removes a key (the keys and the registry
 * compared before and after), no request that takes more than 5 s.
 */
export const fuzzHttp: Scenario = {
  name: 'fuzz-http',
  async run(ctx: ScenarioContext): Promise<ScenarioResult> {
    const runs = ctx.quick ? 400 : 4_000;
    const started = performance.now();
    const raw = new Redis(ctx.redisUrl);
    const transport = IoredisTransport.connect(ctx.redisUrl);
    const app = createApp({ transport: () => transport, token: () => TOKEN, log: () => {} });
    let serverErrors = 0;
    let badShapes = 0;
    let refusedWrites = 0;
    let hangs = 0;
    const statuses: Record<string, number> = {};
    const keys = async (): Promise<string> => [...(await raw.keys('emq:*'))].sort().join('\n');
    try {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          if (r.auth) headers.Authorization = r.auth;
          if (r.contentType) headers['Content-Type'] = r.contentType;
          if (r.idempotencyKey !== undefined) headers['Idempotency-Key'] = r.idempotencyKey.replace(/[\r\n]/g, '');
          const before = await keys();
          let res: Response | undefined;
          try {
            res = await Promise.race([
              app.request(`${r.path}${r.query}`, { method: r.method, headers, ...(r.body !== undefined && r.method !== 'GET' ? { body: r.body } : {}) }),
              new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
            ]);
          } catch {
            // an invalid header value thrown by the Request constructor: the client's error, not ours
            return;
          }
          if (!res) {
            hangs++;
            return;
          }
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          const text = await res.text();
          if (res.status >= 500) serverErrors++;
          if (res.status >= 400) {
            let shaped = false;
            try {
              const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
              shaped = typeof body.error?.code === 'string' && typeof body.error.message === 'string';
            } catch {
              shaped = false;
            }
            if (!shaped) badShapes++;
            if ((await keys()) !== before) refusedWrites++;
          }
        }),
        { numRuns: runs, seed: ctx.seed },
      );
    } finally {
      await transport.close();
      raw.disconnect();
    }
    return {
      scenario: 'fuzz-http',
      jobs: runs,
      faults: `${runs} generated requests (seed ${ctx.seed})`,
      statuses: statuses as Record<string, number>,
      server_errors: serverErrors,
      error_bodies_malformed: badShapes,
      refused_requests_that_wrote: refusedWrites,
      hangs,
      jobs_lost: 0,
      duplicate_jobs: 0,
      invariant_violations: 0,
      not_finished: 0,
      duration_s: Math.round((performance.now() - started) / 100) / 10,
    };
  },
};
