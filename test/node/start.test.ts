import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('npm start', () => {
  it('brings up a private Redis, the bridge, the Worker under wrangler dev and a consumer, and runs the mix on both', async () => {
    // REDIS_URL unset: the stack must start its own redis-server
    const env = { ...process.env };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'examples', 'local-stack.ts'), '--once'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, out).toBe(0);
    const pid = /\(pid (\d+)\)/.exec(out)?.[1];
    expect(pid, out).toBeDefined();
    expect(() => process.kill(Number(pid), 0)).toThrow(); // its redis-server is gone
    const counts = [...out.matchAll(/counts +(\{.*\})/g)].map((m) => JSON.parse(m[1]!) as Record<string, number>);
    expect(counts.at(-1)).toEqual({ pending: 0, scheduled: 0, active: 0, dead: 1, completed: 30, waiting: 0 });
    // the demo prints which runtime ran each attempt: both served the one queue
    expect(out).toMatch(/\[edge\] JOB:\d+ attempt 1/);
    expect(out).toMatch(/\[node\] JOB:\d+ attempt 1/);
    // a scheduler's three slots on the Node consumer's timer, then another's three from the Worker's beat alone
    expect([...out.matchAll(/\[node\] JOB:heartbeat@\d+ attempt 1/g)]).toHaveLength(3);
    expect([...out.matchAll(/\[edge\] JOB:edge-heartbeat@\d+ attempt 1/g)]).toHaveLength(3);
    expect(out).toMatch(/emq_scheduler_fired_total\{queue="demo"\} 6/);
    // a held, rate-limited group: nothing before the hold's end, then 3 starts a second
    expect(out).toMatch(/rate: partner-api held 1.5 s, then 3 starts a second: 6 starts, none before the hold ended \(true\), per second after it \[3,3\]/);
  }, 90_000);
});
