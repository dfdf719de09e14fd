import { createRoute, z } from '@hono/zod-openapi';
import { body, failure, json, partitionRefusal, refusals } from './openapi-parts.js';
import {
  deadJobs,
  duplicate,
  enqueued,
  enqueuedBulk,
  eventsPage,
  groupLimit,
  groupPaused,
  groupResumed,
  healthy,
  jobView,
  queueList,
  queuePaused,
  queueResumed,
  queueStats,
  removed,
  reprocessed,
  waitedCompleted,
  waitedDead,
  waitedNot,
} from './responses.js';
import {
  bulkBody,
  deadQuery,
  enqueueBody,
  enqueueQuery,
  eventsQuery,
  eventsStreamHeaders,
  eventsStreamQuery,
  groupParams,
  idempotencyHeaders,
  jobParams,
  limitBody,
  queueParams,
} from './schemas.js';

/**
 * Every route of the HTTP API with its request and response schemas: the one list the app
 * validates by and the OpenAPI document is generated from (design.md, "External contract").
 */

const noSuchJob = { 404: failure('no such job (EMQNOTFOUND)') };

export const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'Whether Redis answers (no token needed)',
  security: [],
  responses: { 200: json(healthy, 'Redis answers'), 503: failure('Redis does not answer within 2 s (EMQREDIS)') },
});

export const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus text: jobs per state, completed, dead, retried and stalled totals, the paused flag, per queue',
  responses: {
    200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain; version=0.0.4': { schema: z.string() } } },
    401: refusals[401],
    503: refusals[503],
  },
});

export const openApiRoute = createRoute({
  method: 'get',
  path: '/v1/openapi.json',
  summary: 'This document',
  responses: { 200: json(z.record(z.string(), z.unknown()), 'the OpenAPI 3.1 document'), 401: refusals[401] },
});

export const enqueueRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs',
  summary: 'Enqueue one job; with ?wait=MS, wait up to MS for it to finish',
  request: { params: queueParams, query: enqueueQuery, headers: idempotencyHeaders, body: body(enqueueBody) },
  responses: {
    201: json(enqueued, 'created (or, with an Idempotency-Key seen before, created by the first request)'),
    200: json(
      z.union([duplicate, waitedCompleted, waitedDead]),
      'a job with this id or holding this dedupe key exists: nothing was written (`duplicate`, its id), or it took this payload and delay (`replaced`, `dedupe.replace`); with ?wait, the job (a duplicate or a replace: that job) finished within it: completed with its result, or dead with its error',
    ),
    202: json(waitedNot, 'with ?wait: the job did not finish within it (it may still); its state then'),
    409: failure('the Idempotency-Key was used with other jobs (EMQCONFLICT): nothing was written'),
    413: failure('the body or the payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

export const bulkRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs/bulk',
  summary: 'Enqueue up to 1000 jobs: all of them, or none when any is bad',
  request: { params: queueParams, headers: idempotencyHeaders, body: body(bulkBody) },
  responses: {
    201: json(enqueuedBulk, 'created; `duplicate` for an id or a dedupe key that exists, `replaced` for a job a dedupe key replaced'),
    409: failure('the Idempotency-Key was used with other jobs (EMQCONFLICT): nothing was written'),
    413: failure('the body or a payload is over the cap (EMQTOOLARGE)'),
    ...refusals,
  },
});

export const queuesRoute = createRoute({
  method: 'get',
  path: '/v1/queues',
  summary: 'Every queue of the registry, sorted by name, with its counts per state, the paused flag and its counters',
  description:
    'The registry holds every queue that has had a job enqueued (until it is obliterated). A partitioned queue is one row under its name, its partitions summed, with `partitions` (its count); every route taking `{queue}` addresses it by that name. One round trip to Redis per 100 queues (or partitions): in the Worker, one subrequest each.',
  responses: { 200: json(queueList, 'the queues'), 401: refusals[401], 503: refusals[503] },
});

export const statsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}',
  summary: 'Counts per state, the paused flag, and the rate limits with what is throttled now',
  request: { params: queueParams },
  responses: { 200: json(queueStats, 'the counts'), ...refusals },
});

export const getJobRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/jobs/{id}',
  summary: 'Read a job',
  request: { params: jobParams },
  responses: { 200: json(jobView, 'the job'), ...noSuchJob, ...refusals },
});

export const removeJobRoute = createRoute({
  method: 'delete',
  path: '/v1/queues/{queue}/jobs/{id}',
  summary: 'Remove a job in any state',
  request: { params: jobParams },
  responses: { 200: json(removed, 'removed'), ...noSuchJob, ...refusals },
});

export const reprocessRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/jobs/{id}/reprocess',
  summary: 'Send a dead job back to be claimed',
  request: { params: jobParams },
  responses: {
    200: json(reprocessed, 'pending again'),
    ...noSuchJob,
    409: failure('the job is not dead (EMQSTATE)'),
    ...refusals,
  },
});

export const deadRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/dead',
  summary: 'Dead jobs, newest first',
  request: { params: queueParams, query: deadQuery },
  responses: { 200: json(deadJobs, 'the page of dead jobs'), ...refusals },
});

export const pauseRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/pause',
  summary: 'Pause the queue: nothing is claimed until it resumes',
  request: { params: queueParams },
  responses: { 200: json(queuePaused, 'paused'), ...refusals },
});

export const resumeRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/resume',
  summary: 'Resume the queue',
  request: { params: queueParams },
  responses: { 200: json(queueResumed, 'resumed'), ...refusals },
});

export const pauseGroupRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/groups/{group}/pause',
  summary: "Pause a group: its jobs wait, the queue's other groups run",
  request: { params: groupParams },
  responses: { 200: json(groupPaused, 'paused'), ...refusals },
});

export const resumeGroupRoute = createRoute({
  method: 'post',
  path: '/v1/queues/{queue}/groups/{group}/resume',
  summary: 'Resume a group',
  request: { params: groupParams },
  responses: { 200: json(groupResumed, 'resumed'), ...refusals },
});

export const groupLimitRoute = createRoute({
  method: 'put',
  path: '/v1/queues/{queue}/groups/{group}/limit',
  summary: "Set a group's limit of jobs active at once, or lift it with null",
  request: { params: groupParams, body: body(limitBody) },
  responses: { 200: json(groupLimit, 'the limit now'), ...refusals },
});

export const eventsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/events',
  summary: "A page of the queue's events, oldest first: whole entries (the events of one script call share an id)",
  request: { params: queueParams, query: eventsQuery },
  responses: { 200: json(eventsPage, 'the page: pass `next` as the next `after`'), ...partitionRefusal, ...refusals },
});

export const eventsStreamRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/events/stream',
  summary: "The queue's events as Server-Sent Events: one message an entry (`event: events`, its id, its events as a JSON array), resumable with Last-Event-ID",
  description:
    'On Node the response stays open for as long as the client does, parked on the one XREAD BLOCK the server shares per queue. In the Worker it reads the stream every second and closes after 25 s (an EventSource reconnects with Last-Event-ID): about 60 requests to Redis a minute per open stream.',
  request: { params: queueParams, query: eventsStreamQuery, headers: eventsStreamHeaders },
  responses: {
    200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } },
    ...partitionRefusal,
    ...refusals,
  },
});
