import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Every name a package entry exports, values and types alike, sorted. */
function exportsOf(entries: readonly string[]): Record<string, string[]> {
  const files = entries.map((entry) => join(root, 'src', entry));
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    entries.map((entry, i) => {
      const symbol = checker.getSymbolAtLocation(program.getSourceFile(files[i]!)!)!;
      return [entry, checker.getExportsOfModule(symbol).map((s) => s.getName()).sort()];
    }),
  );
}

/**
 * The package's public surface, entry by entry (package.json `exports`): a name added or removed
 * here is a decision about the API, made on purpose, not a side effect of a refactor. Internals
 * (the script gateway, the keyspace, the generated scripts, runHandler) stay out.
 */
describe('the public API', () => {
  it('exports exactly these names', () => {
    expect(exportsOf(['index.ts', 'node/index.ts', 'edge/index.ts', 'http/index.ts'])).toMatchInlineSnapshot(`
      {
        "edge/index.ts": [
          "BeatSummary",
          "BoundedBeatOptions",
          "DrainBeatOptions",
          "EchomqWorker",
          "FinishedJob",
          "ScheduledTrigger",
          "UpstashConnectOptions",
          "UpstashEnv",
          "UpstashTransport",
          "WaitUntil",
          "WorkerEnv",
          "WorkerHandlers",
          "WorkerOptions",
          "boundedBeat",
          "createWorker",
        ],
        "http/index.ts": [
          "AppContext",
          "AppEnv",
          "AppOptions",
          "BOUNDED_STREAMING",
          "ErrorBody",
          "NODE_STREAMING",
          "RequestLog",
          "StreamingLimits",
          "bearerAuth",
          "constantTimeEqual",
          "createApp",
          "renderMetrics",
        ],
        "index.ts": [
          "AddAndWaitOptions",
          "BackoffOptions",
          "BeatOptions",
          "BlockingTransport",
          "BulkJob",
          "ClaimCall",
          "Claimed",
          "CompleteItem",
          "ConnectionError",
          "ConnectionFailure",
          "DEFAULT_JOB_DEFAULTS",
          "DEFAULT_MAX_PAYLOAD_BYTES",
          "DEFAULT_MAX_RESULT_BYTES",
          "DeadRetention",
          "EmqError",
          "EmqErrorCode",
          "EmqErrorContext",
          "EnqueueOptions",
          "EnqueueResult",
          "EventBatch",
          "EventsOptions",
          "EventsPage",
          "EventsSettings",
          "FailItem",
          "Finished",
          "Handler",
          "HandlerContext",
          "HandlerTimeoutError",
          "Held",
          "IdempotencyConflictError",
          "InvalidArgumentError",
          "InvalidNameError",
          "Job",
          "JobDefaults",
          "JobEventBase",
          "JobFailedError",
          "JobNotFoundError",
          "JobOutcome",
          "JobRecord",
          "JobState",
          "JobStateError",
          "KindError",
          "Leases",
          "MAX_PRIORITY",
          "MAX_PROGRESS_BYTES",
          "Outcome",
          "PageOptions",
          "ParkedReply",
          "PayloadError",
          "PayloadTooLargeError",
          "PreparedRound",
          "Queue",
          "QueueCounts",
          "QueueEvent",
          "QueueEventBase",
          "QueueEventName",
          "QueueOptions",
          "QueueOverview",
          "QueueStats",
          "ReadEventsOptions",
          "RedisError",
          "Reply",
          "RequestOptions",
          "RetryAfterError",
          "RetryItem",
          "RetryOutcome",
          "Round",
          "RoundResult",
          "ScriptCall",
          "ScriptSource",
          "Settled",
          "StreamEntry",
          "Transport",
          "UnrecoverableError",
          "WaitForOptions",
          "WaitTimeoutError",
          "errorCodes",
          "listQueues",
          "queueOverviews",
        ],
        "node/index.ts": [
          "ApiServer",
          "BatchConsumer",
          "BatchConsumerOptions",
          "BatchHandler",
          "BatchOutcome",
          "Bridge",
          "BridgeOptions",
          "BridgeStats",
          "ConnectOptions",
          "ConnectQueueOptions",
          "Consumer",
          "ConsumerHooks",
          "ConsumerOptions",
          "ConsumerStoppedError",
          "IoredisConnectOptions",
          "IoredisTransport",
          "IoredisTransportOptions",
          "LeaseLostError",
          "LocalRedis",
          "LocalRedisOptions",
          "ParkedLoopOptions",
          "RedisMissingError",
          "RunningBridge",
          "ServeApiOptions",
          "StartBridgeOptions",
          "TransportOwnership",
          "connectQueue",
          "createBridge",
          "findRedisServer",
          "freePort",
          "serveApi",
          "startBridge",
          "startLocalRedis",
        ],
      }
    `);
  });
});
