import { createInterface } from 'node:readline';
import lambdaLocal from 'lambda-local';

/**
 * One warm Lambda instance: lambda-local running test/platforms/lambda-app.ts, invoked once per
 * line of stdin (`{"event": ..., "timeoutMs": ...}`), each answer a line of stdout (`{"result"}` or
 * `{"error"}`, and `ms`, the invocation's wall time). Its invocations share the module, as a warm
 * instance's do: the same transport, what it knows of each queue. Killed by its PID to stand for
 * an invocation cut off mid-beat.
 */
lambdaLocal.setLogger({ log() {}, info() {}, warn() {}, error() {}, debug() {}, level: 'error', transports: [] } as never);
const app = await import('./lambda-app.js');
process.stdout.write('{"ready":true}\n');
for await (const line of createInterface({ input: process.stdin })) {
  const { event, timeoutMs } = JSON.parse(line) as { event: unknown; timeoutMs: number };
  const t0 = Date.now();
  const answer = await lambdaLocal
    .execute({ lambdaFunc: app, lambdaHandler: 'handler', event, timeoutMs, verboseLevel: 0 })
    .then((result: unknown) => ({ result }), (error: unknown) => ({ error: String((error as { errorMessage?: string }).errorMessage ?? error) }));
  process.stdout.write(`${JSON.stringify({ ...answer, ms: Date.now() - t0 })}\n`);
}
process.exit(0);
