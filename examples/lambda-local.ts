/**
 * `npm start -- --platform lambda`: the AWS Lambda function of the local stack, in place of the
 * Worker. The function is `createLambdaHandler` with the shipped Worker's queues and handlers
 * (workers/demo-handler.ts, printing `[lambda]`), over @upstash/redis through the local REST
 * bridge, as a deployed function over Upstash. In front of it, a Function URL on loopback: each
 * HTTP request becomes the Function URL event Lambda would deliver (payload format 2.0) and the
 * handler's result the response; `beat()` invokes it with an EventBridge scheduled event. Lambda
 * runs concurrent invocations in instances of their own; here they share one, as a Worker
 * isolate's requests do (the host is made for that).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLambdaHandler } from '../src/lambda/index.js';
import { type DemoPayload, demoHandler } from '../workers/demo-handler.js';

/** The function as the local stack drives it. */
export interface LocalLambda {
  /** Its Function URL on loopback. */
  readonly url: string;
  /** One scheduled invocation (what EventBridge sends every minute), a minute left. */
  beat(): Promise<void>;
  close(): Promise<void>;
}

/** What Lambda's Function URL delivers for `req` with `body`: an API Gateway payload format 2.0 event. */
function functionUrlEvent(req: IncomingMessage, body: string): Record<string, unknown> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]));
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers['host'] ?? 'localhost',
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: 'HTTP/1.1', sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomBytes(8).toString('hex'),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body ? { body: Buffer.from(body).toString('base64'), isBase64Encoded: true } : { isBase64Encoded: false }),
  };
}

/**
 * Starts the function on `restUrl` (the bridge) with `token`; `say` prints its handlers' lines.
 *
 * @example
 * const fn = await startLocalLambda(bridge.url, token, say);
 * setInterval(() => void fn.beat(), 10_000);
 */
export async function startLocalLambda(restUrl: string, token: string, say: (line: string) => void): Promise<LocalLambda> {
  const handler = createLambdaHandler<{ demo: DemoPayload; 'demo-parts': DemoPayload }>({
    handlers: {
      demo: (job, { progress }) => demoHandler(job, 'lambda', say, progress),
      'demo-parts': (job) => demoHandler(job, 'lambda', say),
    },
    partitions: { 'demo-parts': 8 },
    log: (entry) => {
      if (entry['msg'] === 'job') say(`[lambda] ${String(entry['outcome'])} ${String(entry['id'])}: ${String(entry['error'] ?? '')}`);
    },
    env: { UPSTASH_REDIS_REST_URL: restUrl, UPSTASH_REDIS_REST_TOKEN: token, EMQ_LOCAL_DEV: '1', EMQ_BEAT_DEADLINE_MS: '8000', EMQ_JOB_TIMEOUT_MS: '5000' },
  });
  const context = { getRemainingTimeInMillis: () => 60_000 };
  const inFlight = new Set<Promise<unknown>>();
  const invoke = (event: unknown): Promise<unknown> => {
    const run = handler(event, context);
    const tracked = run.catch(() => {}).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    return run;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      invoke(functionUrlEvent(req, Buffer.concat(chunks).toString())).then(
        (result) => {
          const answer = result as { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
          res.writeHead(answer.statusCode, answer.headers ?? {});
          res.end(answer.body === undefined ? undefined : Buffer.from(answer.body, answer.isBase64Encoded ? 'base64' : 'utf8'));
        },
        (error: unknown) => {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'EMQLAMBDA', message: String(error) } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    beat: async () => {
      await invoke({ 'detail-type': 'Scheduled Event', source: 'aws.events', resources: ['local-beat'] }).catch((error: unknown) => say(`[lambda] beat failed: ${String(error)}`));
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(inFlight);
    },
  };
}
