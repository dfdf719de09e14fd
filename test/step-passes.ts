import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { runHandler } from '../src/handler.js';
import type { Handler } from '../src/index.js';
import type { Settled } from '../src/lease/leases.js';
import type { Queue } from '../src/queue/queue.js';
import { leases } from './helpers.js';
import { checkInvariants } from './invariants.js';

/**
 * One pass of a queue's handler, as both runtimes drive it (durable steps' tests): a beat claims
 * what is due, `handler` runs on each job with the leases' step host, one round settles them and
 * the flow news is relayed; the keyspace checker has nothing to say after it. Answers what each
 * job's settle answered, by id.
 *
 * @example
 * expect(await stepPass(redis.raw, queue, handler)).toEqual(new Map([[id, 'awaiting']]));
 */
export async function stepPass<P>(raw: Redis, queue: Queue<P>, handler: Handler<P>): Promise<Map<string, Settled>> {
  const l = leases(queue);
  const claimed = await l.beat({ n: 50, leaseMs: 30_000 });
  const finished = await Promise.all(
    claimed.jobs.map(async (job) => ({ job, outcome: await runHandler(handler, job, { controller: new AbortController(), steps: l.steps }) })),
  );
  const { settled } = await l.round({ finished, leaseMs: 30_000 });
  await l.relayed();
  expect(await checkInvariants(raw, queue.name)).toEqual([]);
  return new Map(finished.map(({ job }, i) => [job.id, settled[i]!]));
}
