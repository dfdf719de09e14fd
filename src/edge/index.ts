/**
 * `echomq/edge`: the Cloudflare Worker. `createWorker` (the HTTP API and the cron-triggered
 * bounded beats), `boundedBeat` for a consumer of your own, and the @upstash/redis transport.
 *
 * @module echomq/edge
 */
export { UpstashTransport } from '../serverless/upstash-transport.js';
export type { UpstashConnectOptions, UpstashEnv } from '../serverless/upstash-transport.js';
export { boundedBeat } from '../serverless/bounded-beat.js';
export type { BeatSummary, BoundedBeatOptions, FinishedJob } from '../serverless/bounded-beat.js';
export { createWorker } from './worker.js';
export type { EchomqWorker, ScheduledTrigger, WaitUntil, WorkerEnv, WorkerHandlers, WorkerOptions } from './worker.js';
export type { DrainBeatOptions } from '../serverless/drain.js';
