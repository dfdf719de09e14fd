export { Queue } from './queue.js';
export type { QueueOptions, BulkJob, Claimed, QueueStats, BeatOptions, SettlePlan, SettleReplies } from './queue.js';
export type {
  BackoffOptions,
  EnqueueOptions,
  EnqueueResult,
  Job,
  JobRecord,
  JobState,
  QueueCounts,
} from './job.js';
export type { Transport, BlockingTransport, ScriptCall, Reply } from './transport.js';
export type { ClaimResult, Held, RetryItem, FailItem, RetryOutcome, ScriptOp } from './scripts.js';
export { Scripts, listQueues, QUEUE_REGISTRY } from './scripts.js';
export { keyspace, assertName, FIXED_KEYS } from './keyspace.js';
export type { Keyspace, FixedKey } from './keyspace.js';
export { toJobId, MAX_PRIORITY, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_JOB_DEFAULTS } from './encode.js';
export {
  EmqError,
  KindError,
  InvalidArgumentError,
  InvalidNameError,
  PayloadError,
  PayloadTooLargeError,
  JobNotFoundError,
  JobStateError,
  RedisError,
  errorCodes,
} from './errors.js';
export type { EmqErrorCode } from './errors.js';
export { UnrecoverableError, RetryAfterError, HandlerTimeoutError, runHandler, outcomeOf, errorText } from './handler.js';
export type { Handler, HandlerContext, Outcome } from './handler.js';
export { scripts } from './generated/scripts.js';
export type { ScriptName, ScriptSource } from './generated/scripts.js';
