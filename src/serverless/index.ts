/**
 * `echomq/serverless`: the core every serverless platform's adapter is made of, for a platform
 * echomq has no adapter for. `createBeatHost` answers the platform's HTTP requests (the API, with
 * a short drain after an enqueue) and its scheduled events (bounded beats until a deadline);
 * `boundedBeat` is one beat of one queue; `UpstashTransport` reaches Redis over REST.
 *
 * @module echomq/serverless
 */
export { createBeatHost } from './host.js';
export type { AcknowledgedLater, BeatHost, BeatHostOptions, Platform, QueueHandlers, ScheduledEvent, ScheduledReport, WaitUntil } from './host.js';
export type { PlatformDefaults, ServerlessEnv } from './settings.js';
export type { DrainBeatOptions } from './drain.js';
export { boundedBeat } from './bounded-beat.js';
export type { BeatSummary, BoundedBeatOptions, FinishedJob } from './bounded-beat.js';
export { UpstashTransport } from './upstash-transport.js';
export type { UpstashConnectOptions, UpstashEnv } from './upstash-transport.js';
