/**
 * `echomq/vercel`: Vercel Functions, on the Node and the Edge runtime, and Next.js App Router route
 * files. `createVercelHandlers` gives the HTTP API as route handlers (`GET`, `POST`...) and the
 * route a Vercel Cron calls for bounded beats (docs/guides/vercel.md).
 *
 * @module echomq/vercel
 */
export { createVercelHandlers } from './handlers.js';
export type { VercelEnv, VercelHandlers, VercelHandlersOptions, VercelRouteHandler } from './handlers.js';
