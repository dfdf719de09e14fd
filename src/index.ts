/**
 * The public API of `echomq`: produce, inspect and control jobs (Queue), the lease protocol a
 * consumer runs on (Leases), the registry of queues, the types a transport adapter implements,
 * and the error table. The runtimes live in `echomq/node`, `echomq/edge` and `echomq/http`.
 * test/public-api.test.ts pins this list: a name added or removed here is a decision.
 *
 * @module echomq
 */
export { Queue } from './queue/queue.js';
export type { QueueOptions, BulkJob, QueueStats, RequestOptions, EventsOptions, WaitForOptions, AddAndWaitOptions, JobOutcome } from './queue/queue.js';
export type { CancelOptions, CancelResult, CancelJobsOptions, CancelJobsResult, CancellableState } from './queue/cancels.js';
export { CANCELLABLE_STATES } from './queue/cancels.js';
export type { KeyInfo } from './queue/key-limits.js';
export { MAX_JOB_KEYS } from './encode.js';
export { PartitionedQueue } from './partitions/partitioned-queue.js';
export type { PartitionedQueueOptions } from './partitions/partitioned-queue.js';
export type { GroupSweep, QueuePartition, QueueSurface } from './queue/surface.js';
export { MAX_PARTITIONS, partitionName, partitionOf } from './partitions/partition-of.js';
export type { EventBatch } from './events/subscribe.js';
export { MIN_EVERY_MS } from './schedulers/schedulers.js';
export type { SchedulerSpec, SchedulerJob, SchedulerRecord, UpsertSchedulerResult } from './schedulers/schedulers.js';
export type { EventsPage, EventsSettings, JobEventBase, QueueEvent, QueueEventBase, QueueEventName, ReadEventsOptions } from './events/events.js';
export { Flows, MAX_FLOW_JOBS, MAX_FLOW_DEPTH, MAX_FLOW_CHILDREN } from './flows/flows.js';
export type { FlowJob, FlowNode, FlowsOptions } from './flows/flows.js';
export type { ChildOutcome, ChildrenCount, OnFailure, ParentRef } from './flows/flow.js';
export { Leases } from './lease/leases.js';
export type { BeatOptions, Claimed, ClaimCall, Completed, Finished, PreparedRound, Round, RoundResult, Settled } from './lease/leases.js';
export type { CompleteItem } from './ops/complete.js';
export type { FailItem } from './ops/fail.js';
export type { FireResult } from './ops/fire-schedulers.js';
export type { Held } from './ops/op.js';
export type { ReleaseItem } from './ops/release.js';
export type { RetryItem, RetryOutcome } from './ops/retry.js';
export type { ReleaseOutcome } from './ops/release.js';
export type { Renewal } from './ops/extend.js';
export type { CompleteOutcome } from './ops/complete.js';
export type { RateLimit, RateLimits, Throttled } from './queue/rate-limits.js';
export type { GroupInfo, GroupsOptions, GroupsPage } from './queue/groups.js';
export type { DueScheduler } from './schedulers/schedulers.js';
export { listQueues, queueOverviews } from './queue/registry.js';
export type { OverviewsOptions, QueueOverview } from './queue/registry.js';
export type { LastHour } from './queue/last-hour.js';
export type {
  BackoffOptions,
  DeadRetention,
  DedupeOptions,
  EnqueueOptions,
  EnqueueResult,
  FiredBy,
  Job,
  JobRecord,
  JobState,
  FinishedState,
  PageOptions,
  QueueCounts,
} from './job.js';
export type { Transport, BlockingTransport, ParkedReply, Replication, ScriptCall, Reply, StreamEntry } from './transport.js';
export { DEFAULT_REPLICATION_TIMEOUT_MS } from './durability.js';
export type { Durability, DurabilityOptions } from './durability.js';
export type { ScriptSource } from './generated/scripts.js';
export { MAX_PRIORITY, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_MAX_RESULT_BYTES, MAX_PROGRESS_BYTES, DEFAULT_JOB_DEFAULTS } from './encode.js';
export type { JobDefaults } from './encode.js';
export {
  EmqError,
  KindError,
  InvalidArgumentError,
  InvalidNameError,
  PayloadError,
  PayloadTooLargeError,
  JobNotFoundError,
  JobFailedError,
  JobExpiredError,
  StepError,
  JobStateError,
  WaitTimeoutError,
  IdempotencyConflictError,
  RedisError,
  ConnectionError,
  ReplicationError,
  PartitionError,
  errorCodes,
} from './errors.js';
export type { EmqErrorCode, EmqErrorContext, ConnectionFailure } from './errors.js';
export { UnrecoverableError, RetryAfterError, RateLimitedError, HandlerTimeoutError, JobTimeoutError, JobCancelledError } from './handler.js';
export type { Handler, HandlerContext, Outcome } from './handler.js';
export { InvokedJobError } from './steps/job-steps.js';
export type { StepHost, StepWrite, InvokeChild, Suspension } from './steps/job-steps.js';
export type { Steps, WaitForEventOptions, InvokeOptions, StepKind, StepState, StepRecord, SentEvent, SendEventOptions } from './steps/steps.js';
export { MAX_STEPS, MAX_STEP_BYTES, DEFAULT_EVENT_KEEP_MS, MAX_EVENT_KEEP_MS } from './steps/steps.js';
