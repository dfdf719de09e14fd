import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  InvalidNameError,
  PayloadError,
  PayloadTooLargeError,
  Queue,
  type BulkJob,
} from '../../src/index.js';
import type { Transport } from '../../src/transport.js';
import { queueName, useRedis, leases } from '../helpers.js';

/** `inner`, counting the script calls sent through it (`calls`); closing it leaves `inner` open. */
function countingTransport(inner: Transport): Transport & { readonly calls: number } {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    evalsha: (sent, replication) => {
      calls += sent.length;
      return inner.evalsha(sent, replication);
    },
    eval: (sent, replication) => {
      calls += sent.length;
      return inner.eval(sent, replication);
    },
    ping: () => inner.ping(),
    close: async () => {},
  };
}

describe('bad input', () => {
  const redis = useRedis();

  /**
   * Runs `act`, expects it to throw `type`, and checks it wrote nothing: no key of any queue this
   * suite made changed and none was registered. (Other suites write to the same Redis at the same
   * time, so a global DBSIZE would race; every queue here has its own name.)
   */
  async function rejectsAndWritesNothing(act: () => Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
    const snapshot = async (): Promise<string[]> => {
      const keys = (await redis.raw.keys('emq:{bad-*')).sort();
      const values = await Promise.all(keys.map(async (key) => `${key}=${JSON.stringify(await redis.raw.dump(key))}`));
      const registered = (await redis.raw.smembers('emq:queues')).filter((name) => name.startsWith('bad-')).sort();
      return [...values, ...registered];
    };
    const before = await snapshot();
    await expect(act()).rejects.toBeInstanceOf(type);
    expect(await snapshot()).toEqual(before);
  }

  it('refuses a lease count it cannot show as JSON with its typed error, not a TypeError', async () => {
    const queue = redis.queue({ name: queueName('bad-lease') });
    const odd = Object.create(null) as unknown as number;
    await rejectsAndWritesNothing(() => leases(queue).claim(odd, 1_000), InvalidArgumentError);
    await rejectsAndWritesNothing(() => leases(queue).claim(1, odd), InvalidArgumentError);
  });

  it('refuses payloads JSON cannot carry', async () => {
    const queue = redis.queue<unknown>({ name: queueName('bad') });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const payload of [undefined, () => 1, Symbol('s'), 10n, cycle]) {
      await rejectsAndWritesNothing(() => queue.add(payload), PayloadError);
    }
  });

  it('refuses payloads over the cap, 1 MiB by default and configurable', async () => {
    const queue = redis.queue<string>({ name: queueName('bad') });
    await rejectsAndWritesNothing(() => queue.add('x'.repeat(1024 * 1024)), PayloadTooLargeError);
    // multi-byte text is measured in UTF-8 bytes, not characters
    const small = redis.queue<string>({ maxPayloadBytes: 100, name: queueName('bad') });
    await rejectsAndWritesNothing(() => small.add('é'.repeat(60)), PayloadTooLargeError);
    expect((await small.add('é'.repeat(40))).state).toBe('pending');
  });

  it('refuses bad queue and group names before any Redis call', async () => {
    for (const name of ['', 'a b', 'a{b}', 'a:b', 'x'.repeat(129), 'é']) {
      expect(() => new Queue(redis.transport, name)).toThrow(InvalidNameError);
    }
    const queue = redis.queue({ name: queueName('bad') });
    for (const group of ['', '*', 'a b', 'x'.repeat(129), '{g}']) {
      await rejectsAndWritesNothing(() => queue.add(1, { group }), InvalidNameError);
      await expect(queue.pauseGroup(group)).rejects.toBeInstanceOf(InvalidNameError);
      await expect(queue.setGroupLimit(group, 1)).rejects.toBeInstanceOf(InvalidNameError);
    }
  });

  it('refuses bad options with a typed error', async () => {
    const queue = redis.queue({ name: queueName('bad') });
    const bad = [
      { delayMs: -1 },
      { delayMs: 1.5 },
      { delayMs: 10, runAt: Date.now() },
      { runAt: -5 },
      { maxAttempts: 0 },
      { maxAttempts: 1.5 },
      { priority: -1 },
      { priority: 2_097_152 },
      { backoff: -1 },
      { backoff: { type: 'linear' as 'fixed', delayMs: 1 } },
      { backoff: { type: 'exponential' as const, delayMs: 10, jitter: 2 } },
      { id: 'has space' },
      { id: '' },
      // the kind door refuses a bare JOB:, and the registration riding with the enqueue would
      // have been written before it did
      { id: 'JOB:' },
    ];
    for (const options of bad) await rejectsAndWritesNothing(() => queue.add(1, options), InvalidArgumentError);
    await expect(queue.setGroupLimit('g', -1)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.setGroupLimit('g', 1.5)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(leases(queue).claim(0, 1000)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(leases(queue).claim(1, 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queue.getJob('no spaces allowed')).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('refuses here, before any Redis call, every id the scripts\' kind door would refuse', async () => {
    const sent = countingTransport(redis.transport);
    const queue = new Queue(sent, queueName('bad'));
    // ids outside the core's rule (1 to 200 of letters, digits and '._:-', not a bare JOB:):
    // refused here, an enqueue's registration too, with no script call sent...
    const refused = ['', 'JOB:', 'x'.repeat(201), 'JOB:' + 'x'.repeat(197), ' JOB:1', 'JOB:1 ', 'JOB:1\n', 'a b', 'x'.repeat(253)];
    // ...and ids the door refuses as they stand that the core makes JOB: ids the door passes
    const prefixed = ['JOB', 'JOB:x', 'JOB:JOB:', ':', 'job:', 'FLOW:1', '-', 'x'.repeat(200), 'JOB:' + 'x'.repeat(196)];
    for (const id of refused) {
      const before = sent.calls;
      await expect(queue.getJob(id), JSON.stringify(id)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(queue.add(1, { id }), JSON.stringify(id)).rejects.toBeInstanceOf(InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.addBulk([{ payload: 1 }, { payload: 2, id }]), InvalidArgumentError);
      expect(sent.calls - before, `${JSON.stringify(id)}: script calls sent`).toBe(0);
    }
    for (const id of prefixed) {
      // get-job.lua is read-only and checks the door: a KindError here is an id the core let through unmade
      expect(await queue.getJob(id), JSON.stringify(id)).toBeNull();
    }
  });

  it('writes nothing of a bulk enqueue when any one job is bad', async () => {
    const queue = redis.queue({ name: queueName('bad') });
    const jobs = [{ payload: 1 }, { payload: 2 }, { payload: 3, delayMs: -5 }];
    await rejectsAndWritesNothing(() => queue.addBulk(jobs), InvalidArgumentError);
    await expect(queue.addBulk(jobs)).rejects.toThrow(/^job 2: delayMs/);
  });

  it('refuses values its message cannot show as JSON (a BigInt, a cycle, no prototype, a symbol) with the typed error, not a TypeError', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const bare = Object.create(null) as object;
    for (const name of [10n, cycle, bare, Symbol('q')]) {
      expect(() => new Queue(redis.transport, name as never)).toThrow(InvalidNameError);
    }
    expect(() => new Queue(redis.transport, 'q', { maxPayloadBytes: Symbol('n') as never })).toThrow(InvalidArgumentError);
    expect(() => new Queue(redis.transport, 'q', { keepCompletedMs: bare as never })).toThrow(InvalidArgumentError);
    const queue = redis.queue({ name: queueName('bad') });
    for (const odd of [10n, cycle, bare]) {
      await rejectsAndWritesNothing(() => queue.add(1, { id: odd as never }), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.add(1, { group: odd as never }), InvalidNameError);
      await rejectsAndWritesNothing(() => queue.add(1, { idempotencyKey: odd as never }), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.add(1, { delayMs: odd as never }), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.add(1, { backoff: { type: odd as never, delayMs: 1 } }), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.addBulk([{ payload: 1, priority: odd as never }]), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.remove(odd as never), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.setGroupLimit('g', odd as never), InvalidArgumentError);
      await rejectsAndWritesNothing(() => queue.pauseGroup(odd as never), InvalidNameError);
    }
    await expect(queue.add(1, { id: 10n as never })).rejects.toThrow(/got 10n$/);
  });

  it('refuses options that are not objects, and bulk jobs that are not, with InvalidArgumentError instead of a TypeError', async () => {
    expect(() => new Queue(redis.transport, 'q', null as never)).toThrow(InvalidArgumentError);
    expect(() => new Queue(redis.transport, 'q', { defaults: 'fast' as never })).toThrow(InvalidArgumentError);
    const queue = redis.queue({ name: queueName('bad') });
    await rejectsAndWritesNothing(() => queue.addBulk([{ payload: 1 }], null as never), InvalidArgumentError);
    await rejectsAndWritesNothing(() => queue.addBulk([{ payload: 1 }, null as never]), InvalidArgumentError);
    await rejectsAndWritesNothing(() => queue.addBulk([{ payload: 1 }, 5 as never]), InvalidArgumentError);
    await expect(queue.addBulk([{ payload: 1 }, null as never])).rejects.toThrow(/^job 1: a bulk job must be an object, got null$/);
    await expect(queue.listDead(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('refuses bad job defaults when the queue is made, not at each add', () => {
    for (const defaults of [{ maxAttempts: -1 }, { maxAttempts: 0 }, { maxAttempts: 1.5 }, { maxAttempts: Number.NaN }, { backoff: null as never }]) {
      expect(() => new Queue(redis.transport, 'q', { defaults }), JSON.stringify(defaults)).toThrow(/^defaults: /);
    }
    // a job of the defaults alone is checked whatever the payload cap
    expect(new Queue(redis.transport, 'q', { maxPayloadBytes: 1, defaults: { maxAttempts: 1 } }).name).toBe('q');
  });

  it('refuses the earlier nested bulk form rather than enqueue without its options', async () => {
    const queue = redis.queue({ name: queueName('nested') });
    // what a caller of the old shape holds: the types refuse it, so this is a JavaScript caller's view
    const nested = [{ payload: 1 }, { payload: 2, options: { group: 'g', delayMs: 5000 } }] as unknown as Array<BulkJob<number>>;
    await rejectsAndWritesNothing(() => queue.addBulk(nested), InvalidArgumentError);
    await expect(queue.addBulk(nested)).rejects.toThrow(/^job 1: a bulk job takes its options beside the payload/);
    await expect(queue.addBulk([null] as unknown as Array<BulkJob<number>>)).rejects.toThrow(/^job 0: a bulk job must be an object, got null$/);
  });

  it('refuses bad queue options', () => {
    expect(() => new Queue(redis.transport, 'q', { maxPayloadBytes: 0 })).toThrow(InvalidArgumentError);
    expect(() => new Queue(redis.transport, 'q', { keepCompletedMs: -2 })).toThrow(InvalidArgumentError);
    expect(() => new Queue(redis.transport, 'q', { defaults: { backoff: { type: 'fixed', delayMs: -1 } } })).toThrow(
      InvalidArgumentError,
    );
  });
});
