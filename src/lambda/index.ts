/**
 * `echomq/lambda`: AWS Lambda. `createLambdaHandler` answers EventBridge schedules with bounded
 * beats and API Gateway, Function URL and ALB events with the HTTP API (docs/guides/lambda.md).
 *
 * @module echomq/lambda
 */
export { createLambdaHandler, isScheduledEvent } from './handler.js';
export type { EchomqLambdaHandler, LambdaEnv, LambdaHandlerOptions, LambdaInvocationContext, LambdaScheduledEvent } from './handler.js';
