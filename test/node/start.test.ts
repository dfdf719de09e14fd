import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, type ExpectStatic, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
/** Why the `deno` npm package's binary cannot run here, or undefined when it can: its run then skips itself, saying so. */
const denoCannotRun = ((): string | undefined => {
  const version = spawnSync(join(root, 'node_modules', '.bin', 'deno'), ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (version.error) return `it did not start: ${version.error.message}`;
  return version.status === 0 ? undefined : `deno --version exited ${version.status}: ${version.stderr.trim()}`;
})();
if (denoCannotRun) console.warn(`[start.test.ts] the --platform deno run is skipped: the deno binary cannot run here (${denoCannotRun})`);

/** `npm start -- --once ...flags` with neither REDIS_URL nor REDIS_CLUSTER_NODES: its exit code and output. */
async function runStack(flags: string[]): Promise<{ code: number | null; out: string }> {
  // unset: the stack must start its own Redis
  const env = { ...process.env };
  delete env.REDIS_URL;
  delete env.REDIS_CLUSTER_NODES;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'examples', 'local-stack.ts'), '--once', ...flags], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out };
}

/** What the mix, the schedulers, the rate limit and the flow print, on one Redis or a cluster alike. */
function expectTheDemo(expect: ExpectStatic, out: string, platform: 'edge' | 'lambda' | 'deno' | 'vercel' = 'edge'): void {
  const counts = [...out.matchAll(/counts +(\{.*\})/g)].map((m) => JSON.parse(m[1]!) as Record<string, number>);
  expect(counts.at(-1)).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 1, completed: 35, waiting: 0, awaiting: 0, sleeping: 0, cancelled: 0 });
  expect(out).toMatch(new RegExp(`\\[${platform}\\] JOB:\\d+ attempt 1`));
  expect(out).toMatch(/\[node\] JOB:\d+ attempt 1/);
  expect([...out.matchAll(/\[node\] JOB:heartbeat@\d+ attempt 1/g)]).toHaveLength(3);
  expect([...out.matchAll(new RegExp(`\\[${platform}\\] JOB:edge-heartbeat@\\d+ attempt 1`, 'g'))]).toHaveLength(3);
  expect(out).toMatch(/emq_scheduler_fired_total\{queue="demo"\} 6/);
  expect(out).toMatch(/flow: pdf-1 merged \{"merged":4\} from pages \[1,2,3,4\], run 1 time\(s\), after the last page \(true\)/);
  // durable steps: the signup flow verified by an event over HTTP, and one reminded when its wait timed out
  expect(out).toMatch(/steps: JOB:\d+ verified: create account done \(\w+\), give them a day done, email verified done, welcome done \(\w+\); JOB:\d+ reminded: create account done \(\w+\), give them a day done, email verified timed-out, send a reminder done \(\w+\)/);
  // a timeout per job: aborted at its own 200 ms, beside a job under the consumer's
  expect(out).toMatch(/timeouts: JOB:\d+ \(its own timeoutMs 200\) dead: JobTimeoutError: the job ran past its own timeout of 200 ms; JOB:\d+ \(the consumer's, none\) completed with \{"worked":1000\}/);
  // cancel and expiry: a running job's handler aborted within milliseconds, a pending one ended at once, one not started in time dead
  // concurrency keys: org 7's 8 jobs never more than 2 at once, at most 4 starts in any second by
  // their claims' server times, over at least a second; org 8's not held back
  expect(out).toMatch(/keys: org:7 \(limit 2, 4 starts a second\) ran its 8 jobs at most [12] at once and [1-4] in any second, over [1-9]\.\d s; org:8's 2 started within \d+ ms/);
  // BullMQ code on echomq, and bull-board's own API counting what it ran
  expect(out).toMatch(/echomq\/bullmq: "sent to ada@example\.com" after a retry \(attempts 2\); a flow of 2 children ran its parent; a parent whose child failed waited \(waiting-children\) until job\.retry\(\), then merged 1 part/);
  expect(out).toMatch(/bull-board at http:\/\/127\.0\.0\.1:\d+\/board shows "bullmq-emails": \{"completed":6\}/);
  expect(out).toMatch(/cancel: JOB:\d+ cancelling -> cancelled, its handler aborted with JobCancelledError \(the user left\) after \d+ ms; JOB:\d+ cancelled before it started; expiry: JOB:\d+ dead: EMQEXPIRED: not started by its expiry at \d+/);
  expect(out).toMatch(/rate: partner-api held 1.5 s, then 3 starts a second: 6 starts, none before the hold ended \(true\), per second after it \[3,3\]/);
  // the dashboard's queues page on Node shows what the API answers, and the Worker's the same
  expect(out).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\/ui \(Node, live over SSE\)/);
  expect(out).toMatch(/dashboard: \/ui shows "demo" with pending 0, scheduled 0, sleeping 0, active 0, waiting 0, awaiting 0, completed 35, dead 1, cancelled 0; the same as GET \/v1\/queues \(true\)( and as (the Worker|the Lambda function|the Deno app|the Vercel function)'s \/ui \(true\))?/);
}

// the two stacks side by side: each waits on its demo's clocks (heartbeats a second apart, a
// rate limit's hold) far more than it uses the CPU, and each takes free ports and a Redis of its own
describe.concurrent('npm start', () => {
  it('runs it all over a private Redis Cluster with --cluster (three masters, a replica each), and stops every node', async ({ expect }) => {
    const { code, out } = await runStack(['--cluster']);
    expect(code, out).toBe(0);
    expect(out).toMatch(/started a Redis Cluster of 3 masters with 1 replica\(s\) each/);
    expect(out).toMatch(/redis: Redis Cluster 127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+ \(private\)/);
    expect(out).toMatch(/bridge: Upstash REST over the Redis Cluster on /);
    expectTheDemo(expect, out);
    // its six redis-servers are gone: nothing answers on their ports
    const ports = /each on 127\.0\.0\.1:([\d,]+)/.exec(out)![1]!.split(',').map(Number);
    expect(ports).toHaveLength(6);
    const answers = (port: number): Promise<boolean> =>
      new Promise((resolve) => {
        const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
        socket.on('error', () => resolve(false));
      });
    expect(await Promise.all(ports.map(answers))).toEqual(Array(6).fill(false));
  }, 120_000);

  it('brings up a private Redis, the bridge, the Worker under wrangler dev and a consumer, and runs the mix on both', async ({ expect }) => {
    const { code, out } = await runStack([]);
    expect(code, out).toBe(0);
    const pid = /\(pid (\d+)\)/.exec(out)?.[1];
    expect(pid, out).toBeDefined();
    expect(() => process.kill(Number(pid), 0)).toThrow(); // its redis-server is gone
    // the demo prints which runtime ran each attempt: both served the one queue; a scheduler's
    // three slots on the Node consumer's timer, then another's three from the Worker's beat alone;
    // a held, rate-limited group: nothing before the hold's end, then 3 starts a second; a flow:
    // four pages, then their parent merges them once, after the last page
    expectTheDemo(expect, out);
    expect(out).toMatch(/\[(node|edge)\] JOB:pdf-1 merges 4 children/);
  }, 90_000);

  it('runs the Lambda function in place of the Worker with --platform lambda: its Function URL takes half the mix, its EventBridge beat fires a scheduler alone', async ({ expect }) => {
    const { code, out } = await runStack(['--platform', 'lambda']);
    expect(code, out).toBe(0);
    expect(out).toMatch(/lambda: createLambdaHandler behind a Function URL on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).not.toMatch(/wrangler dev/);
    expectTheDemo(expect, out, 'lambda');
    expect(out).toMatch(/each slot fired by the Lambda function's beat/);
  }, 90_000);

  it.skipIf(denoCannotRun !== undefined)(
    'runs a Deno app under the deno binary in place of the Worker with --platform deno: serveDeno takes half the mix, its beats (stdin) fire a scheduler alone, and it is stopped by its PID',
    async ({ expect }) => {
      const { code, out } = await runStack(['--platform', 'deno']);
      expect(code, out).toBe(0);
      const pid = /deno: serveDeno under the deno binary \(process (\d+)\) on http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[1];
      expect(pid, out).toBeDefined();
      expect(() => process.kill(Number(pid), 0)).toThrow(); // the deno process is gone
      expect(out).not.toMatch(/wrangler dev/);
      expectTheDemo(expect, out, 'deno');
      expect(out).toMatch(/each slot fired by the Deno app's beat/);
      expect(out).toMatch(/\[deno\] beat: \d+ requests, [1-9]\d* scheduler slot\(s\) fired/);
      expect(out).toMatch(/and as the Deno app's \/ui \(true\)/);
    },
    90_000,
  );

  it('runs a Vercel function in the Edge runtime in place of the Worker with --platform vercel: createVercelHandlers takes half the mix, its cron route (CRON_SECRET) fires a scheduler alone', async ({ expect }) => {
    const { code, out } = await runStack(['--platform', 'vercel']);
    expect(code, out).toBe(0);
    expect(out).toMatch(/vercel: createVercelHandlers in the Edge runtime \(edge-runtime\) on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).not.toMatch(/wrangler dev/);
    expect(out).not.toMatch(/the cron route (answered|failed)/);
    expectTheDemo(expect, out, 'vercel');
    expect(out).toMatch(/each slot fired by the Vercel function's beat/);
    expect(out).toMatch(/\[vercel\] beat: \d+ requests, [1-9]\d* scheduler slot\(s\) fired/);
    expect(out).toMatch(/and as the Vercel function's \/ui \(true\)/);
  }, 90_000);

  it('refuses an unknown --platform with exit 2 and one line naming the platforms', async ({ expect }) => {
    const { code, out } = await runStack(['--platform', 'fly']);
    expect(code).toBe(2);
    expect(out.trim()).toBe('npm start: --platform takes cloudflare, lambda, deno or vercel, not "fly"');
  }, 30_000);
});
