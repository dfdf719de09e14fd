import type { TestProject } from 'vitest/node';
import { startLocalRedis } from '../src/node/local-redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/**
 * One private redis-server for the whole run, on a free port (installed with apt-get when missing
 * on Debian as root). EMQ_TEST_REDIS_URL points the suites at another Redis instead; REDIS_URL is
 * ignored so a developer's own Redis is never touched by accident.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startLocalRedis({
    env: { REDIS_URL: process.env.EMQ_TEST_REDIS_URL, PATH: process.env.PATH },
    log: (line) => console.log(`[test redis] ${line}`),
  });
  project.provide('redisUrl', redis.url);
  return () => redis.stop();
}
