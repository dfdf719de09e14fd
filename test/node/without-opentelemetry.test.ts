import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { queueName } from '../helpers.js';

const root = join(import.meta.dirname, '..', '..');

/**
 * `@opentelemetry/api` is an optional peer: without it the package loads and works, and a
 * caller's traceparent still travels with its jobs. A child process hides the package from Node's
 * resolver (test/fixtures/hide-opentelemetry.mjs) and runs a producer, a Node consumer and the
 * edge's bounded beat.
 */
describe('without @opentelemetry/api', () => {
  it('enqueues and runs jobs on both runtimes, carrying a given traceparent', async () => {
    const name = queueName('no-otel');
    const child = spawn(
      process.execPath,
      ['--import', './test/fixtures/hide-opentelemetry.mjs', '--import', 'tsx', 'test/fixtures/without-opentelemetry.ts', inject('redisUrl'), name],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const out = JSON.parse(stdout) as { api: string; ids: string[]; seen: Record<string, string | null>; rows: Record<string, string | null>; edgeCompleted: number };
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const [plain, traced, edge] = out.ids as [string, string, string];
    expect(out.api).toBe('missing (ERR_MODULE_NOT_FOUND)');
    expect(out.rows).toEqual({ [plain]: null, [traced]: tp, [edge]: tp });
    expect(out.seen).toEqual({ [plain]: null, [traced]: tp, [edge]: tp });
    expect(out.edgeCompleted).toBe(1);
    const raw = new Redis(inject('redisUrl'));
    const keys = await raw.keys(`emq:{${name}}:*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
  });
});
