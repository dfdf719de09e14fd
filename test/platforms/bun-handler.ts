import { Redis } from 'ioredis';
import type { Job } from '../../src/job.js';

/**
 * The handler module `emq consume --handler` loads in test/platforms/bun.test.ts, as TypeScript
 * that Bun runs without a build step: it counts each run in `<queue>:seen` (a hash by job id, on
 * `SEEN_REDIS_URL`, queue `SEEN_QUEUE`), sleeps `payload.sleepMs`, and returns `{ ran, runtime }`.
 */
const queue = process.env['SEEN_QUEUE'] ?? 'bun';
// lazy, and not waited on at exit: the CLI exits once its consumer has stopped
const seen = new Redis(process.env['SEEN_REDIS_URL'] ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
const runtime = process.versions['bun'] ? `bun ${process.versions['bun']}` : `node ${process.version}`;

export default async function handler(job: Job<{ sleepMs?: number } | null>): Promise<{ ran: string; runtime: string }> {
  await seen.hincrby(`${queue}:seen`, job.id, 1);
  if (job.payload?.sleepMs) await new Promise((resolve) => setTimeout(resolve, job.payload!.sleepMs));
  return { ran: job.id, runtime };
}
