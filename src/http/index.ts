export { createApp } from './app.js';
export type { AppOptions, RequestLog } from './app.js';
export { openApiDocument } from './openapi.js';
export { renderMetrics } from './metrics.js';
export { constantTimeEqual, bearerAuth } from './auth.js';
export type { ErrorBody } from './problem.js';
