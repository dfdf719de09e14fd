import { join } from 'node:path';

/**
 * The SAM `template.yaml` `emq init lambda` writes: one function answering its Function URL with
 * the HTTP API and an EventBridge Scheduler schedule (a beat a minute) with bounded beats.
 */
export function samTemplate(name: string): string {
  return `# echomq on AWS Lambda: the HTTP API on a Function URL, a beat a minute from EventBridge Scheduler.
# Deploy: sam build && sam deploy --guided (docs/guides/lambda.md in echomq).
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Description: ${name}, echomq queues on Lambda

Parameters:
  UpstashRedisRestUrl:
    Type: String
    Description: Your Upstash Redis REST URL (or leave both Upstash parameters empty and set RedisUrl)
    Default: ''
  UpstashRedisRestToken:
    Type: String
    NoEcho: true
    Default: ''
  RedisUrl:
    Type: String
    Description: redis:// or rediss:// URL of a Redis the function reaches over TCP (used when set)
    NoEcho: true
    Default: ''
  EmqToken:
    Type: String
    Description: The bearer token the HTTP API requires
    NoEcho: true

Resources:
  QueueFunction:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: ${name}
      CodeUri: src/
      Handler: handler.handler
      Runtime: nodejs20.x
      Architectures: [arm64]
      MemorySize: 512
      # a scheduled event drains until EMQ_BEAT_DEADLINE_MS (50 s) or this less 2 s, whichever is first
      Timeout: 60
      Environment:
        Variables:
          UPSTASH_REDIS_REST_URL: !Ref UpstashRedisRestUrl
          UPSTASH_REDIS_REST_TOKEN: !Ref UpstashRedisRestToken
          REDIS_URL: !Ref RedisUrl
          EMQ_TOKEN: !Ref EmqToken
          EMQ_BEAT_DEADLINE_MS: '50000'
          # an answer waits for the jobs its enqueue made claimable (Lambda freezes after it): 0 answers at once
          EMQ_DRAIN_ON_ENQUEUE_MS: '1000'
      FunctionUrlConfig:
        # the API checks EMQ_TOKEN on every request itself
        AuthType: NONE
      Events:
        Beat:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: rate(1 minute)
            # the input that tells the handler a beat from an HTTP event
            Input: '{"emq":"beat"}'
    Metadata:
      BuildMethod: esbuild
      BuildProperties:
        EntryPoints: [handler.ts]
        Target: node20
        Minify: true
        Sourcemap: true

Outputs:
  ApiUrl:
    Description: 'The HTTP API: POST /v1/queues/mail/jobs with the header Authorization, Bearer and your EmqToken'
    Value: !GetAtt QueueFunctionUrl.FunctionUrl
`;
}

/** The `src/handler.ts` `emq init lambda` writes: one typed queue to start from. */
export const LAMBDA_ENTRY = `/**
 * The echomq function: EventBridge's beat (template.yaml) drains the queues below, and Function
 * URL requests are the HTTP API. A queue is its payload type in Payloads and its handler in handlers.
 */
import { UnrecoverableError } from 'echomq';
import { createLambdaHandler } from 'echomq/lambda';

/** Each queue's payload type, by queue name. */
interface Payloads {
  mail: { to: string; subject?: string };
}

export const handler = createLambdaHandler<Payloads>({
  handlers: {
    // resolve: completed; throw: retried with its backoff; UnrecoverableError: dead at once
    mail: async (job) => {
      if (!job.payload.to.includes('@')) throw new UnrecoverableError(\`not an address: \${job.payload.to}\`);
      console.log(\`mail to \${job.payload.to} (attempt \${job.attempt} of \${job.maxAttempts})\`);
    },
  },
});
`;

/** The files `emq init lambda` writes, by path relative to the project. */
export function lambdaFiles(name: string): ReadonlyMap<string, string> {
  return new Map([
    ['template.yaml', samTemplate(name)],
    [join('src', 'handler.ts'), LAMBDA_ENTRY],
  ]);
}
