/**
 * `echomq/deno`: Deno Deploy and self-hosted Deno. `serveDeno` registers a `Deno.cron` whose
 * beats drain every queue with a handler, and serves the HTTP API with `Deno.serve`
 * (docs/guides/deno.md).
 *
 * @module echomq/deno
 */
export { serveDeno } from './serve.js';
export type { DenoEnv, DenoListenAddress, EchomqDenoServer, ServeDenoOptions } from './serve.js';
export { DenoRuntimeError } from './runtime.js';
export type { DenoMissing } from './runtime.js';
