import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { EnqueueOptions, Queue } from '../src/index.js';
import { leases, snapshotKeys } from './helpers.js';

/**
 * Helpers of the bulk admin suites (getJobs, clean, drain, obliterate, reprocessDead,
 * changePriority, updateData, the dead-job retention): jobs made the way consumers make them, and
 * "nothing was written".
 */

/** Enqueues one job per payload and sends each to dead the way a consumer does (claim, fail). */
export async function buryJobs<P>(queue: Queue<P>, payloads: readonly P[], options: EnqueueOptions = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < payloads.length; i += 1000) {
    const part = payloads.slice(i, i + 1000);
    await queue.addBulk(part.map((payload) => ({ payload, maxAttempts: 1, ...options})));
    const { jobs } = await leases(queue).claim(part.length, 30_000);
    expect(await leases(queue).fail(jobs.map((j) => ({ id: j.id, token: j.token, error: 'boom' })))).toEqual(jobs.map(() => 'dead'));
    ids.push(...jobs.map((j) => j.id));
  }
  return ids;
}

/** Enqueues one job per payload, claims and completes them; resolves with their ids in claim order. */
export async function completeJobs<P>(queue: Queue<P>, payloads: readonly P[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < payloads.length; i += 1000) {
    const part = payloads.slice(i, i + 1000);
    await queue.addBulk(part.map((payload) => ({ payload })));
    const { jobs } = await leases(queue).claim(part.length, 30_000);
    expect((await leases(queue).complete(jobs)).completed.every(Boolean)).toBe(true);
    ids.push(...jobs.map((j) => j.id));
  }
  return ids;
}

/** Every key of the queue with its value, and whether the registry of queues holds its name. */
export async function queueState(raw: Redis, queue: { name: string }): Promise<unknown> {
  return { keys: await snapshotKeys(raw, `emq:{${queue.name}}:*`), registered: await raw.sismember('emq:queues', queue.name) };
}

/** `action` rejects with an error matching `error`, and the queue's keys and registry entry are as they were. */
export async function refusedUnchanged(raw: Redis, queue: { name: string }, action: () => Promise<unknown>, error: object): Promise<void> {
  const before = await queueState(raw, queue);
  await expect(action()).rejects.toMatchObject(error);
  expect(await queueState(raw, queue)).toEqual(before);
}
