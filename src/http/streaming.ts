import { MAX_WAIT_MS } from './schemas.js';

/**
 * How long the routes that follow the events stream (SSE, `?wait`) may hold a request, and how
 * often they read where they cannot park (docs/design.md, "Subscribing").
 */
export interface StreamingLimits {
  /**
   * How long an SSE response lasts before the server closes it (the client's EventSource
   * reconnects with Last-Event-ID), in ms; undefined: for as long as the client stays.
   */
  readonly streamMs?: number;
  /** The longest `?wait` of the enqueue route, in ms (a larger one is cut to it), at most 30,000. */
  readonly maxWaitMs: number;
  /** How often the stream (or a job's row, with events off) is read on a transport that cannot park, in ms. */
  readonly pollMs: number;
  /**
   * How often an SSE response with nothing to send carries a comment line (`: keep-alive`), in ms
   * (default 15,000): proxies drop a response that is silent for long (often 60 s).
   */
  readonly heartbeatMs?: number;
}

/**
 * Node (`emq serve`): an SSE response stays open while its client does, and every SSE client and
 * waiter of a queue shares one parked XREAD BLOCK of the server's.
 */
export const NODE_STREAMING: StreamingLimits = { maxWaitMs: MAX_WAIT_MS, pollMs: 1000 };

/**
 * The Worker: it cannot park, so it reads every second, and an SSE response closes after 25 s (25
 * reads, about 60 requests to Redis a minute per stream kept open by its client's reconnects); a
 * `?wait` is cut to 20 s (at most 20 reads beside the enqueue and its drain: within a request's
 * subrequests, and far inside Cloudflare's 100 s for a response to begin).
 */
export const BOUNDED_STREAMING: StreamingLimits = { streamMs: 25_000, maxWaitMs: 20_000, pollMs: 1000 };
