import type { Redis } from 'ioredis';
import type { Job, Leases, Queue } from '../src/index.js';
import { checkInvariants } from './invariants.js';
import { keysOf } from './helpers.js';

/**
 * The end of a concurrency keys property run, its keys' limits and rates lifted by the caller:
 * completes what is held and claims (`claim`, which judges each claim as the run does) until
 * nothing is pending, at most 50 times; then every job has ended, no key counts a job, and the
 * keyspace checker holds. Answers what is wrong, or undefined.
 *
 * @example
 * for (const k of KEYS) await queue.setKeyLimit(k, null);
 * return await runDry(redis.raw, queue, leases(queue), held, claim);
 */
export async function runDry<P>(raw: Redis, queue: Queue<P>, l: Leases<P>, held: Array<Job<P>>, claim: (n: number) => Promise<void>): Promise<string | undefined> {
  for (let i = 0; i < 50 && (held.length > 0 || (await queue.stats()).counts.pending > 0); i++) {
    if (held.length > 0) await l.complete(held.splice(0));
    await claim(20);
  }
  const counts = (await queue.stats()).counts;
  if (counts.pending + counts.active > 0) return `jobs left: ${JSON.stringify(counts)}`;
  const left = await raw.hgetall(`${keysOf(queue as Queue<unknown>).prefix}kactive`);
  if (Object.keys(left).length > 0) return `key counts left: ${JSON.stringify(left)}`;
  const broken = await checkInvariants(raw, queue.name);
  return broken.length > 0 ? broken.join('; ') : undefined;
}
