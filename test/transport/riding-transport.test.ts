import { describe, expect, it } from 'vitest';
import { RidingTransport } from '../../src/serverless/riding-transport.js';
import { keyspace } from '../../src/keyspace.js';
import { Leases, readRiddenRound } from '../../src/lease/leases.js';
import { Queue } from '../../src/queue/queue.js';
import type { ScriptCall } from '../../src/transport.js';
import { queueName, useRedis } from '../helpers.js';

/**
 * RidingTransport (src/serverless/riding-transport.ts), the Worker's isolate transport: a drain's first
 * beat rides behind its enqueue in one request. Over a real Redis: what rides runs after the call
 * it rode with, a request takes one ride of a lane, and `covered` tells a request whether every
 * call of the lane since its ride was made had a ride behind it that Redis ran after it.
 */
describe('RidingTransport: calls that ride in another request', () => {
  const redis = useRedis();
  const lane = (call: ScriptCall): string | undefined => (call.script.name === 'enqueue' ? call.keys[0] : undefined);

  /** A queue over a riding transport, its lane, and a ride of a claim of up to 5 behind its next enqueue. */
  const setup = async () => {
    const transport = new RidingTransport(redis.transport, lane);
    const name = queueName('ride');
    const queue = redis.queue<number>({ name });
    // the enqueue script loaded where this queue lives, and its name registered: an enqueue Redis
    // answers NOSCRIPT is sent again alone, which counts as uncovered (a case of its own below)
    await queue.remove((await queue.add(0)).id);
    const riding = new Queue<number>(transport, name);
    const leases = new Leases(queue);
    const meta = keyspace(name).fixed[0]!;
    const claimRide = () => {
      const round = leases.prepare({ claim: 5, beat: true, leaseMs: 30_000 });
      const ride = transport.ride(meta, () => round.calls);
      // a NOSCRIPT of the ride's calls (a Redis that never ran them) runs them again, as the Worker does
      return { ride, read: async () => readRiddenRound(transport, round, (await ride.replies)!) };
    };
    return { transport, queue, riding, claimRide };
  };

  it('runs what rides after the enqueue it rode with, in the same request, and hands the caller its own replies only', async () => {
    const { riding, claimRide } = await setup();
    const { ride, read } = claimRide();
    const added = await riding.add(7);
    expect(added.state).toBe('pending');
    const { claimed } = await read();
    // the claim ran after the enqueue: it has the job
    expect(claimed!.jobs.map((j) => j.id)).toEqual([added.id]);
    expect(ride.covered()).toBe(true);
  });

  it("covers a request whose enqueue took another request's ride, and not one whose enqueue went with none", async () => {
    const { riding, claimRide } = await setup();
    const first = claimRide();
    // two enqueues go, one after the other: the first takes the only ride, the second has none
    await riding.add(1);
    const { claimed } = await first.read();
    expect(claimed!.jobs).toHaveLength(1);
    expect(first.ride.covered()).toBe(true);
    await riding.add(2);
    expect(first.ride.covered()).toBe(false);
  });

  it('takes one ride a lane per request, leaves the others waiting, and withdraws one on cancel', async () => {
    const { riding, claimRide } = await setup();
    const a = claimRide();
    const b = claimRide();
    await riding.add(1);
    await a.read();
    // b still waits: the next enqueue of the lane takes it
    let bWent = false;
    void b.ride.replies.then((r) => (bWent = r !== null));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(bWent).toBe(false);
    await riding.add(2);
    const { claimed } = await b.read();
    expect(claimed!.jobs).toHaveLength(1);
    const c = claimRide();
    c.ride.cancel();
    expect(await c.ride.replies).toBeNull();
    // a cancelled ride is gone: the next enqueue goes alone, and is counted uncovered
    await riding.add(3);
    expect(c.ride.covered()).toBe(false);
  });

  it('counts an enqueue that Redis did not run where it rode as uncovered', async () => {
    const { riding, claimRide } = await setup();
    await riding.add(1, { idempotencyKey: 'one-request' });
    const { ride, read } = claimRide();
    // the same key with another job: the enqueue's script refuses it (EMQCONFLICT), the ride's claim still runs
    await expect(riding.add(2, { idempotencyKey: 'one-request' })).rejects.toMatchObject({ code: 'EMQCONFLICT' });
    await read();
    expect(ride.covered()).toBe(false);
  });
});
