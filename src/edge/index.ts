export { UpstashTransport } from './upstash-transport.js';
export type { UpstashConnectOptions, UpstashEnv } from './upstash-transport.js';
export { boundedBeat } from './bounded-beat.js';
export type { BeatSummary, BoundedBeatOptions, FinishedJob } from './bounded-beat.js';
export { createWorker } from './worker.js';
export type { EchomqWorker, ScheduledTrigger, WaitUntil, WorkerEnv, WorkerHandlers, WorkerOptions } from './worker.js';
