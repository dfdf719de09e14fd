import { describe, expect, it } from 'vitest';
import { boundedBeat } from '../../src/serverless/bounded-beat.js';
import { RedisError } from '../../src/errors.js';
import { Queue, type Reply, type ScriptCall, type Transport } from '../../src/index.js';
import { checkInvariants } from '../invariants.js';
import { useRedis } from '../helpers.js';

/**
 * A transport that fails chosen requests (counted from 1) as a lossy network does: `lost` runs
 * the request and loses its reply, `refused` fails it before it runs. Either way the caller sees
 * a RedisError, as UpstashTransport reports a 5xx or a broken connection.
 */
class LossyTransport implements Transport {
  private sent = 0;
  constructor(
    private readonly inner: Transport,
    private readonly faults: ReadonlyMap<number, 'lost' | 'refused'>,
  ) {}

  evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.fault(() => this.inner.evalsha(calls));
  }

  eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.fault(() => this.inner.eval(calls));
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private async fault(send: () => Promise<Array<Reply | Error>>): Promise<Array<Reply | Error>> {
    const fault = this.faults.get(++this.sent);
    if (fault === 'refused') throw new RedisError('injected: refused before it ran');
    const replies = await send();
    if (fault === 'lost') throw new RedisError('injected: the reply was lost after it ran');
    return replies;
  }
}

/**
 * The edge beat sends a failed round again, the same request: every part of a round is harmless
 * twice (docs/design.md, "Requests that may run twice"), so a lost reply costs a request, not a
 * lease lapsing into a re-run.
 */
describe('a round whose request failed goes again', () => {
  const redis = useRedis();

  for (const fault of ['lost', 'refused'] as const) {
    it(`an acknowledgement whose request was ${fault} is recorded: each job runs once and completes`, async () => {
      const seed = redis.queue<number>();
      await seed.addBulk([1, 2, 3].map((payload) => ({ payload })));
      // request 1 is the beat that claims; request 2 acknowledges the three and claims again
      const queue = new Queue<number>(new LossyTransport(redis.transport, new Map([[2, fault]])), seed.name);
      const ran: number[] = [];
      const summary = await boundedBeat(queue, (job) => void ran.push(job.payload), { deadline: Date.now() + 20_000 });
      expect(ran.sort()).toEqual([1, 2, 3]);
      expect(summary).toMatchObject({ claimed: 3, completed: 3, fenced: 0 });
      expect((await seed.stats()).counts).toMatchObject({ pending: 0, active: 0, completed: 3 });
      expect(await checkInvariants(redis.raw, seed.name)).toEqual([]);
    });

    it(`a claim whose request was ${fault} answers its jobs when sent again: none stranded under a lease`, async () => {
      const seed = redis.queue<number>();
      await seed.addBulk([1, 2].map((payload) => ({ payload })));
      const queue = new Queue<number>(new LossyTransport(redis.transport, new Map([[1, fault]])), seed.name);
      const ran: number[] = [];
      const summary = await boundedBeat(queue, (job) => void ran.push(job.payload), { deadline: Date.now() + 20_000 });
      expect(ran.sort()).toEqual([1, 2]);
      expect(summary).toMatchObject({ claimed: 2, completed: 2 });
      expect((await seed.stats()).counts).toMatchObject({ pending: 0, active: 0, completed: 2 });
      expect(await checkInvariants(redis.raw, seed.name)).toEqual([]);
    });
  }

  it('gives up after three more tries and throws: the leases lapse and the jobs run again (at least once)', async () => {
    const seed = redis.queue<number>();
    await seed.add(1);
    const queue = new Queue<number>(new LossyTransport(redis.transport, new Map([2, 3, 4, 5].map((n) => [n, 'refused'] as const))), seed.name);
    await expect(boundedBeat(queue, () => {}, { deadline: Date.now() + 20_000 })).rejects.toBeInstanceOf(RedisError);
    expect((await seed.stats()).counts).toMatchObject({ active: 1, completed: 0 });
  });
});
