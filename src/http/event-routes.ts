import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { streamSSE } from 'hono/streaming';
import { streamOwner } from '../queue/surface.js';
import { startInterval, startTimer } from '../timers.js';
import { json, partitionRefusal, refusals } from './openapi-parts.js';
import { problem } from './problem.js';
import type { QueueOf } from './queue-cache.js';
import { eventsPage } from './responses.js';
import { eventsQuery, eventsStreamHeaders, eventsStreamQuery, queueParams } from './schemas.js';
import type { StreamingLimits } from './streaming.js';

/**
 * The routes of a queue's events stream (docs/design.md, "Subscribing"): a page of it, and the
 * stream as Server-Sent Events, resumable with Last-Event-ID.
 */

/** What the events routes need of the app that serves them (`E`: its hono environment). */
export interface EventWiring<E extends Env> {
  readonly queueOf: QueueOf<E>;
  /** How long an SSE response may stay open, how often it reads where it cannot park, its heartbeat. */
  readonly streaming: StreamingLimits;
}

const eventsRoute = createRoute({
  method: 'get',
  path: '/v1/queues/{queue}/events',
  summary: "A page of the queue's events, oldest first: whole entries (the events of one script call share an id)",
  request: { params: queueParams, query: eventsQuery },
  responses: { 200: json(eventsPage, 'the page: pass `next` as the next `after`'), ...partitionRefusal, ...refusals },
});

const eventsStreamRoute = createRoute({
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

/** Why the events routes refuse a partitioned queue, and what to do instead. */
const eventsRefusal = (queue: string, partitions: number): string =>
  `queue ${queue} has ${partitions} partitions, each with its own events stream, and an entry id is a place in one of them: follow them from TypeScript (PartitionedQueue.events() interleaves them; parts[i].readEvents reads one)`;

/**
 * Serves the events routes on `app`. A partitioned queue is refused with 409 EMQPARTITION before
 * anything is read: an entry id is a place in one partition's stream.
 *
 * @example
 * registerEventRoutes(app, { queueOf, streaming: NODE_STREAMING });
 */
export function registerEventRoutes<E extends Env>(app: OpenAPIHono<E>, wiring: EventWiring<E>): void {
  const { queueOf, streaming } = wiring;

  app.openapi(eventsRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const { after, limit } = c.req.valid('query');
    const q = await queueOf(c, queue);
    const owner = streamOwner(q);
    if (!owner) return problem(c, 'EMQPARTITION', eventsRefusal(queue, q.partitions));
    return c.json(await owner.readEvents({ after, limit }), 200);
  });

  app.openapi(eventsStreamRoute, async (c) => {
    const { queue } = c.req.valid('param');
    const after = c.req.valid('header')['last-event-id'] ?? c.req.valid('query').after;
    const q = await queueOf(c, queue);
    // refused before the stream opens: an entry id (Last-Event-ID) is a place in one partition's stream
    const owner = streamOwner(q);
    if (!owner) return problem(c, 'EMQPARTITION', eventsRefusal(queue, q.partitions));
    // One message an entry: an EventSource takes its id as Last-Event-ID only once the whole
    // message has arrived, so a connection dropped inside an entry resumes before it, and the
    // cursor stays the stream's own entry id, the one `after` everywhere takes.
    return streamSSE(
      c,
      async (stream) => {
        const stop = new AbortController();
        stream.onAbort(() => stop.abort());
        const timer = streaming.streamMs === undefined ? undefined : startTimer(() => stop.abort(), streaming.streamMs);
        // one write a comment, as writeSSE is one write a message: the two never interleave mid-message
        const heartbeat = startInterval(() => void stream.write(': keep-alive\n\n'), streaming.heartbeatMs ?? 15_000);
        try {
          for await (const entry of owner.eventEntries({ ...(after === undefined ? {} : { after }), signal: stop.signal, pollMs: streaming.pollMs })) {
            if (entry.events.length === 0) continue;
            await stream.writeSSE({ id: entry.id, event: 'events', data: JSON.stringify(entry.events) });
          }
        } finally {
          timer?.cancel();
          heartbeat.cancel();
        }
      },
      async (error, stream) => {
        await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: { code: 'EMQREDIS', message: error.message } }) });
      },
    );
  });
}
