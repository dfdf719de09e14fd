/**
 * `echomq/http`: the HTTP API as one hono app (`createApp`), the same on Node and in the Worker,
 * with its metrics and bearer-token pieces.
 *
 * @module echomq/http
 */
export { BOUNDED_STREAMING, createApp, NODE_STREAMING } from './app.js';
export type { AppContext, AppEnv, AppOptions, RequestLog, StreamingLimits } from './app.js';
export { renderMetrics } from './metrics.js';
export { constantTimeEqual, bearerAuth } from './auth.js';
export type { ErrorBody } from './problem.js';
