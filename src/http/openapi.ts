import { z } from 'zod';
import { bulkBody, deadQuery, enqueueBody, limitBody } from './schemas.js';

const json = (schema: z.ZodType): Record<string, unknown> => ({ 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } });

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

const ok = (description: string): Record<string, unknown> => ({ description, content: { 'application/json': { schema: { type: 'object' } } } });
const fail = (description: string): Record<string, unknown> => ({ description, content: { 'application/json': { schema: errorSchema } } });

const queue = { name: 'queue', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' } };
const group = { name: 'group', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' } };
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' } };
const common = { '400': fail('bad input: nothing was written'), '401': fail('missing or wrong bearer token'), '503': fail('Redis does not answer') };

/** The OpenAPI 3.1 document of the HTTP API, built from the same zod schemas that validate it. */
export function openApiDocument(): Record<string, unknown> {
  const deadParams = Object.entries(z.toJSONSchema(deadQuery, { io: 'input' }).properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
  }));
  return {
    openapi: '3.1.0',
    info: { title: 'echomq', version: '0.1.0', description: 'A job queue on Redis: enqueue, inspect and control jobs.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/v1/queues/{queue}/jobs': {
        post: {
          summary: 'Enqueue one job',
          parameters: [queue],
          requestBody: { required: true, content: json(enqueueBody) },
          responses: { '201': ok('created: {id, state}'), '200': ok('a job with this id exists: {id, duplicate: true}'), '413': fail('payload over the cap'), ...common },
        },
      },
      '/v1/queues/{queue}/jobs/bulk': {
        post: {
          summary: 'Enqueue up to 1000 jobs',
          parameters: [queue],
          requestBody: { required: true, content: json(bulkBody) },
          responses: { '201': ok('created: {ids, states}'), '413': fail('body or a payload over the cap'), ...common },
        },
      },
      '/v1/queues/{queue}': { get: { summary: 'Counts and paused flag', parameters: [queue], responses: { '200': ok('{queue, paused, counts}'), ...common } } },
      '/v1/queues/{queue}/jobs/{id}': {
        get: { summary: 'Read a job', parameters: [queue, id], responses: { '200': ok('the job'), '404': fail('no such job'), ...common } },
        delete: { summary: 'Remove a job in any state', parameters: [queue, id], responses: { '200': ok('{id, removed: true}'), '404': fail('no such job'), ...common } },
      },
      '/v1/queues/{queue}/jobs/{id}/reprocess': {
        post: {
          summary: 'Send a dead job back to be claimed',
          parameters: [queue, id],
          responses: { '200': ok('{id, state: "pending"}'), '404': fail('no such job'), '409': fail('the job is not dead'), ...common },
        },
      },
      '/v1/queues/{queue}/dead': { get: { summary: 'Dead jobs, newest first', parameters: [queue, ...deadParams], responses: { '200': ok('{jobs}'), ...common } } },
      '/v1/queues/{queue}/pause': { post: { summary: 'Pause the queue', parameters: [queue], responses: { '200': ok('{queue, paused: true}'), ...common } } },
      '/v1/queues/{queue}/resume': { post: { summary: 'Resume the queue', parameters: [queue], responses: { '200': ok('{queue, paused: false}'), ...common } } },
      '/v1/queues/{queue}/groups/{group}/pause': { post: { summary: 'Pause a group', parameters: [queue, group], responses: { '200': ok('{queue, group, paused: true}'), ...common } } },
      '/v1/queues/{queue}/groups/{group}/resume': { post: { summary: 'Resume a group', parameters: [queue, group], responses: { '200': ok('{queue, group, paused: false}'), ...common } } },
      '/v1/queues/{queue}/groups/{group}/limit': {
        put: { summary: "Set or lift a group's limit", parameters: [queue, group], requestBody: { required: true, content: json(limitBody) }, responses: { '200': ok('{queue, group, limit}'), ...common } },
      },
      '/healthz': { get: { summary: 'Redis answers', security: [], responses: { '200': ok('{ok: true}'), '503': fail('Redis does not answer') } } },
      '/metrics': { get: { summary: 'Prometheus text', responses: { '200': { description: 'text/plain; version=0.0.4' }, '401': fail('missing or wrong bearer token') } } },
    },
  };
}
