import type { Redis } from 'ioredis';

/** What Redis has done so far: commands, time inside scripts, and its own CPU. */
export interface ServerWork {
  /** Commands executed, from INFO commandstats (commands run inside scripts count too: that is the point); the bench's own INFO and CONFIG left out. */
  readonly commands: number;
  /** Microseconds inside scripts: the usec of EVAL, EVALSHA and FCALL (and their _RO forms) in INFO commandstats, each including the commands it ran. */
  readonly scriptUs: number;
  /** Microseconds of the server's CPU, user and system (INFO cpu): everything it did, the network's reads and writes included. */
  readonly cpuUs: number;
}

const SCRIPT_CALLS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** {@link ServerWork} now, from one INFO of two sections. */
export async function serverWork(admin: Redis): Promise<ServerWork> {
  const info = await admin.info('commandstats', 'cpu');
  let commands = 0;
  let scriptUs = 0;
  for (const [, name, calls, usec] of info.matchAll(/cmdstat_([\w|-]+):calls=(\d+),usec=(\d+)/g)) {
    if (name === 'info' || name === 'config') continue;
    commands += Number(calls);
    if (SCRIPT_CALLS.has(name!)) scriptUs += Number(usec);
  }
  const seconds = (field: string): number => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return { commands, scriptUs, cpuUs: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6 };
}

/** Total Redis commands executed so far ({@link ServerWork}'s `commands`). */
export async function commandTotal(admin: Redis): Promise<number> {
  return (await serverWork(admin)).commands;
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
export async function cleanup(admin: Redis, privateServer: boolean, label = ''): Promise<void> {
  if (privateServer) {
    await admin.flushall();
    return;
  }
  // with a label, only the queues of that case (benchQueueName(label)): a test that runs one case
  // on a shared Redis must not take the keys of another case running beside it
  for (const pattern of [`emq:{bench-${label}*`, `bull:bench-${label}*`, `groupmq:bench-${label}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await admin.unlink(...keys);
    } while (cursor !== '0');
  }
}
