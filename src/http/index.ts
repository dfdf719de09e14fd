export { createApp } from './app.js';
export type { AppContext, AppEnv, AppOptions, RequestLog } from './app.js';
export { renderMetrics } from './metrics.js';
export { constantTimeEqual, bearerAuth } from './auth.js';
export type { ErrorBody } from './problem.js';
