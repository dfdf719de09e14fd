import type { Redis } from 'ioredis';

/**
 * Total Redis commands executed so far, from INFO commandstats (commands run inside scripts
 * count too: that is the point). The bench's own INFO and CONFIG calls are left out.
 */
export async function commandTotal(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const [, name, calls] of info.matchAll(/cmdstat_([\w|-]+):calls=(\d+)/g)) {
    if (name !== 'info' && name !== 'config') total += Number(calls);
  }
  return total;
}

/** used_memory from INFO memory, in bytes. */
export async function usedMemory(admin: Redis): Promise<number> {
  const info = await admin.info('memory');
  const match = /used_memory:(\d+)/.exec(info);
  if (!match) throw new Error('bench: INFO memory has no used_memory');
  return Number(match[1]);
}

/** The server's version, e.g. "7.0.15". */
export async function serverVersion(admin: Redis): Promise<string> {
  const info = await admin.info('server');
  return /redis_version:([\w.]+)/.exec(info)?.[1] ?? 'unknown';
}

/**
 * Empties what the benchmarks wrote. On the private server the bench started this is FLUSHALL;
 * on a Redis given with --redis-url only keys under the bench's own prefixes go, so a shared
 * server keeps everything else.
 */
export async function cleanup(admin: Redis, privateServer: boolean): Promise<void> {
  if (privateServer) {
    await admin.flushall();
    return;
  }
  for (const pattern of ['emq:{bench-*', 'bull:bench-*', 'groupmq:bench-*']) {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await admin.unlink(...keys);
    } while (cursor !== '0');
  }
}
