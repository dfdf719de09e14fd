import { describe, expect, it } from 'vitest';
import { checkInvariants, findViolations, snapshotQueue } from '../invariants.js';
import { queueName, useRedis } from '../helpers.js';

/**
 * A generated id is `JOB:<seq>`. An enqueue of generated ids alone asks Redis for no EXISTS while
 * meta `ng` says no row can hold one (lua/includes/take_seq.lua): set with a queue's first sequence
 * numbers, taken away for good by a caller's id of that form numbered past the sequence. These
 * tests hold a caller's row safe from being overwritten, and the checker to the flag.
 */
describe('generated ids: new without an EXISTS while meta ng holds', () => {
  const redis = useRedis();

  it('sets ng with a queue first sequence numbers, and generated ids follow the sequence', async () => {
    const queue = redis.queue({ name: queueName('ng') });
    const added = await queue.addBulk([{ payload: 1 }, { payload: 2 }]);
    expect(added.map((a) => a.id)).toEqual(['JOB:1', 'JOB:2']);
    expect(await redis.raw.hget(`emq:{${queue.name}}:meta`, 'ng')).toBe('1');
    expect((await queue.add(3)).id).toBe('JOB:3');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("takes ng away when a caller's id is numbered past the sequence, and never overwrites that row", async () => {
    const queue = redis.queue({ name: queueName('ng-given') });
    await queue.add('first');
    // JOB:4 is past seq (2 once this add took its number): a generated id will reach it
    expect((await queue.add('mine', { id: 'JOB:4' })).id).toBe('JOB:4');
    expect(await redis.raw.hget(`emq:{${queue.name}}:meta`, 'ng')).toBeNull();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await queue.add(`gen ${i}`)).id);
    expect(ids).not.toContain('JOB:4');
    expect(new Set(ids).size).toBe(4);
    expect((await queue.getJob('JOB:4'))?.payload).toBe('mine');
    // in one call, the caller's id first and generated ids after it
    const bulk = await queue.addBulk([{ payload: 'mine too', id: 'JOB:12' }, { payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    expect(bulk.map((b) => b.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(new Set(bulk.map((b) => b.id)).size).toBe(4);
    expect((await queue.getJob('JOB:12'))?.payload).toBe('mine too');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it("keeps ng for a caller's id at or below the sequence, or not of a generated id's form", async () => {
    const queue = redis.queue({ name: queueName('ng-kept') });
    await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await queue.remove('JOB:2');
    // numbered at or below seq: no generated id is ever that number again
    expect((await queue.add('again', { id: 'JOB:2' })).id).toBe('JOB:2');
    for (const id of ['JOB:007', 'JOB:x9', 'JOB:99a']) await queue.add(id, { id });
    expect(await redis.raw.hget(`emq:{${queue.name}}:meta`, 'ng')).toBe('1');
    expect((await queue.add('next')).id).toBe('JOB:8');
    expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);
  });

  it('the checker names a row a generated id may overwrite while ng holds', async () => {
    const queue = redis.queue({ name: queueName('ng-check') });
    await queue.add('first');
    await queue.add('mine', { id: 'JOB:9' });
    // as if the flag had been left: the checker must see the row in a generated id's way
    await redis.raw.hset(`emq:{${queue.name}}:meta`, 'ng', '1');
    const violations = findViolations(await snapshotQueue(redis.raw, queue.name));
    expect(violations.join('\n')).toMatch(/meta ng is 1 while row JOB:9 is numbered above seq 2/);
  });
});
