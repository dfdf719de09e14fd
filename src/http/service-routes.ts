import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import type { Transport } from '../transport.js';
import { renderMetrics } from './metrics.js';
import { failure, json, refusals } from './openapi-parts.js';
import { problem } from './problem.js';
import { healthy } from './responses.js';

/**
 * The service's own routes: whether Redis answers (`/healthz`, no token), the Prometheus text
 * (`/metrics`) and the OpenAPI document (`/v1/openapi.json`), generated from every route the app
 * declares.
 */

/** What the service routes need of the app that serves them (`E`: its hono environment). */
export interface ServiceWiring<E extends Env> {
  /** The transport to Redis for a request. */
  readonly transport: (c: Context<E>) => Transport;
}

/** The document's fixed parts; the paths come from the routes. */
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'echomq', version: '0.1.0', description: 'A job queue on Redis: enqueue, inspect and control jobs.' },
  security: [{ bearer: [] }],
};

const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'Whether Redis answers (no token needed)',
  security: [],
  responses: { 200: json(healthy, 'Redis answers'), 503: failure('Redis does not answer within 2 s (EMQREDIS)') },
});

const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus text: jobs per state, completed, dead, retried and stalled totals, the paused flag, per queue',
  responses: {
    200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain; version=0.0.4': { schema: z.string() } } },
    401: refusals[401],
    503: refusals[503],
  },
});

const openApiRoute = createRoute({
  method: 'get',
  path: '/v1/openapi.json',
  summary: 'This document',
  responses: { 200: json(z.record(z.string(), z.unknown()), 'the OpenAPI 3.1 document'), 401: refusals[401] },
});

/**
 * Serves `/healthz` on `app`: a PING answered within 2 s, else 503 EMQREDIS. Mounted before the
 * bearer token (a load balancer's health check carries none).
 *
 * @example
 * registerHealthRoute(app, { transport: options.transport });
 */
export function registerHealthRoute<E extends Env>(app: OpenAPIHono<E>, wiring: ServiceWiring<E>): void {
  app.openapi(healthRoute, async (c) => {
    try {
      await Promise.race([
        wiring.transport(c).ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 2 s')), 2_000)),
      ]);
      return c.json({ ok: true } as const, 200);
    } catch (error) {
      return problem(c, 'EMQREDIS', `Redis does not answer: ${(error as Error).message}`);
    }
  });
}

/**
 * Serves `/metrics` (the registry's queues, src/http/metrics.ts) and `/v1/openapi.json` on `app`.
 * The document is generated on first ask, from every route `app` has by then.
 *
 * @example
 * registerServiceRoutes(app, { transport: options.transport });
 */
export function registerServiceRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: ServiceWiring<E>): void {
  app.openapi(metricsRoute, async (c) => {
    const text = await renderMetrics(wiring.transport(c));
    return c.text(text, 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
  });

  // Generated once, on first ask: the routes do not change once the app is made.
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.openapi(openApiRoute, (c) => c.json((document ??= app.getOpenAPI31Document(DOCUMENT)), 200));
}
