/**
 * `echomq/netlify`: Netlify Functions. `createNetlifyFunction` is the HTTP API's function (the
 * drain after an enqueue kept alive by `context.waitUntil`), `createNetlifyScheduledFunction` the
 * scheduled function that beats every queue within Netlify's 30 s (docs/guides/netlify.md).
 *
 * @module echomq/netlify
 */
export { createNetlifyFunction, createNetlifyScheduledFunction } from './functions.js';
export type { EchomqNetlifyFunction, NetlifyContext, NetlifyEnv, NetlifyFunctionOptions } from './functions.js';
