/**
 * `echomq/bullmq`: BullMQ's common path with BullMQ's signatures, on echomq's own Queue, Consumer,
 * Flows and events stream (never a second state machine). Swap the import:
 * `import { Queue, Worker, QueueEvents } from 'echomq/bullmq'`. What maps differently, what
 * throws, and every option's echomq meaning: docs/guides/bullmq.md.
 *
 * @example
 * import { Queue, Worker, QueueEvents } from 'echomq/bullmq';
 *
 * const connection = { host: 'localhost', port: 6379 };
 * const queue = new Queue('mail', { connection });
 * const worker = new Worker('mail', async (job) => ({ sent: job.data.to }), { connection, concurrency: 5 });
 * const events = new QueueEvents('mail', { connection });
 * const job = await queue.add('welcome', { to: 'a@example.com' }, { attempts: 3 });
 * await job.waitUntilFinished(events);
 *
 * @module echomq/bullmq
 */
export { Queue } from './queue.js';
export type { GlobalRateLimit, QueueOptions } from './queue.js';
export type { DependenciesPage, DependencyItem } from './queue-getters.js';
export { Worker } from './worker.js';
export type { Processor, WorkerOptions } from './worker.js';
export { QueueEvents } from './queue-events.js';
export type { QueueEventsOptions } from './queue-events.js';
export { FlowProducer } from './flow-producer.js';
export type { FlowJob, FlowOpts, FlowProducerOptions, FlowQueueOpts, JobNode } from './flow-producer.js';
export { Job } from './job.js';
export type { Dependencies, DependenciesCount, DependenciesOpts, DependenciesPageOpts, JobJson, JobParent, JobProgress, JobQueue, ProgressWriter } from './job-types.js';
export type { Envelope } from './envelope.js';
export type { BackoffOptions, BulkJobOptions, DeduplicationOptions, JobsOptions, KeepJobs, ParentOptions } from './options.js';
export type { FinishedStatus, JobState, JobType } from './states.js';
export type { JobSchedulerJson, JobSchedulerTemplateOptions, RepeatOptions } from './schedulers.js';
export type { ConnectionOptions, QueueBaseOptions } from './connection.js';
export { DelayedError, RateLimitError, UnrecoverableError, UnsupportedBullMQError, WaitingChildrenError, WaitingError } from './errors.js';
