import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { findRedisServer, RedisMissingError, startLocalRedis } from '../../src/node/local-redis.js';

describe('the local Redis launcher', () => {
  it('uses REDIS_URL when it is set and starts nothing', async () => {
    const redis = await startLocalRedis({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(redis).toMatchObject({ url: 'redis://127.0.0.1:1', pid: undefined });
    await redis.stop();
  });

  it('starts a private redis-server on a free loopback port and stops it by its PID', async () => {
    const redis = await startLocalRedis({ env: { PATH: process.env.PATH } });
    expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    const pid = redis.pid!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    await redis.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('says in one line how to install Redis when there is none and it may not install', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-redis-'));
    expect(findRedisServer(empty)).toBeUndefined();
    const attempt = startLocalRedis({ env: { PATH: empty }, install: false });
    await expect(attempt).rejects.toBeInstanceOf(RedisMissingError);
    await expect(attempt).rejects.toThrow(/^redis-server not found: install Redis 7\+ .* or set REDIS_URL$/);
  });
});
