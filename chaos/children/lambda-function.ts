// A warm AWS Lambda instance for the chaos scenarios, killed by its parent (SIGKILL by PID) at
// random, mid-beat or mid-request: `createLambdaHandler` over the REST endpoint given (the fault
// proxy), invoked once per line of stdin ({"id", "event"}), each answer a line of stdout ({"id",
// "result"} or {"id", "error"}). Each handler run prints {"run": jobId, "at": ms} before it works,
// so the parent counts every run; a run returns the payload's n doubled, the result it checks.
import { createInterface } from 'node:readline';
import { createLambdaHandler } from '../../src/lambda/index.js';

const [restUrl, token, queue] = process.argv.slice(2);
const handler = createLambdaHandler({
  handlers: {
    [queue!]: (job: { id: string; payload: { n: number } }) => {
      process.stdout.write(`${JSON.stringify({ run: job.id, at: Date.now() })}\n`);
      return { n: job.payload.n * 2 };
    },
  },
  log: () => {},
  env: {
    UPSTASH_REDIS_REST_URL: restUrl,
    UPSTASH_REDIS_REST_TOKEN: token,
    EMQ_TOKEN: 'chaos',
    EMQ_BEAT_DEADLINE_MS: '3000',
    EMQ_JOB_TIMEOUT_MS: '500',
    EMQ_LEASE_MARGIN_MS: '1000',
    EMQ_REAP_EVERY_MS: '500',
  },
});
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const { id, event } = JSON.parse(line) as { id: number; event: unknown };
  // invocations of one instance overlap here (Lambda would serialize them): the parent sends one at a time
  const answer = await handler(event, { getRemainingTimeInMillis: () => 10_000 }).then(
    (result) => ({ id, result }),
    (error: unknown) => ({ id, error: String(error) }),
  );
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
