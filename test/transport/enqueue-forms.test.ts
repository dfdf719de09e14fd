import { describe, expect, it } from 'vitest';
import { DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES, encodeJob } from '../../src/encode.js';
import { InvalidArgumentError, KindError } from '../../src/errors.js';
import { scripts } from '../../src/generated/scripts.js';
import type { EnqueueResult } from '../../src/job.js';
import { enqueueOp } from '../../src/ops/enqueue.js';
import type { ScriptOp } from '../../src/ops/op.js';
import { asArray, asString } from '../../src/ops/reply.js';
import { checkInvariants } from '../invariants.js';
import { queueName, scriptsOf, useRedis } from '../helpers.js';

/**
 * enqueue.lua takes its jobs in two forms (its ARGV[7]): "p", plain jobs as their payload and group
 * alone, which enqueueOp sends when every job's other fields are the defaults, and "f", every job
 * as its 13 fields. The two must be one enqueue: the same rows, the same reply, and for a
 * caller's idempotency key the same fingerprint.
 */
describe('enqueue: the plain and the full form of the same jobs', () => {
  const redis = useRedis();

  /** The same jobs as enqueueOp would send them (in `form`, checked), but in the full form. */
  const fullForm = (
    payloads: ReadonlyArray<{ payload: unknown; group?: string; id?: string }>,
    request: { key: string; callerKey: boolean } = { key: '', callerKey: false },
    form = 'p',
  ): ScriptOp<EnqueueResult[]> => {
    const jobs = payloads.map(({ payload, ...options }) => encodeJob(payload, options, DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES));
    const sent = enqueueOp(jobs, { ...request, ttlMs: 60_000 });
    expect(sent.args[5], `enqueueOp sends these jobs in form ${form}`).toBe(form);
    return { ...sent, args: [...sent.args.slice(0, 5), 'f', ...jobs.flat()] };
  };

  /** A queue's rows, their times and the queue's name put aside. */
  const rowsOf = async (name: string, ids: readonly string[]): Promise<Array<Record<string, string>>> =>
    Promise.all(ids.map(async (id) => ({ ...(await redis.raw.hgetall(`emq:{${name}}:job:${id}`)), c: 'T' })));

  it('writes the same rows and answers the same in either form', async () => {
    const jobs = [{ payload: { n: 1 } }, { payload: 'two', group: 'g' }, { payload: [3], group: 'g' }, { payload: null }];
    const plainQueue = redis.queue({ name: queueName('forms-p') });
    const fullQueue = redis.queue({ name: queueName('forms-f') });
    const plain = await plainQueue.addBulk(jobs);
    const full = await scriptsOf(fullQueue).run(fullForm(jobs));
    expect(full).toEqual(plain.map(({ id, state }) => ({ id, state })));
    const ids = plain.map((r) => r.id);
    expect(await rowsOf(fullQueue.name, ids)).toEqual(await rowsOf(plainQueue.name, ids));
    expect((await fullQueue.stats()).counts).toEqual((await plainQueue.stats()).counts);
    expect(await checkInvariants(redis.raw, plainQueue.name)).toEqual([]);
    expect(await checkInvariants(redis.raw, fullQueue.name)).toEqual([]);
  });

  it('writes the same rows for jobs with ids sent linked (form l) as sent in full', async () => {
    const jobs = [{ payload: { n: 1 }, id: 'order-1' }, { payload: 'two', group: 'g', id: 'order-2' }, { payload: 3 }];
    const linkedQueue = redis.queue({ name: queueName('forms-l') });
    const fullQueue = redis.queue({ name: queueName('forms-lf') });
    const linked = await linkedQueue.addBulk(jobs);
    const full = await scriptsOf(fullQueue).run(fullForm(jobs, undefined, 'l'));
    expect(full).toEqual(linked.map(({ id, state }) => ({ id, state })));
    const ids = linked.map((r) => r.id);
    expect(await rowsOf(fullQueue.name, ids)).toEqual(await rowsOf(linkedQueue.name, ids));
    // a duplicate id answers the same in either form
    expect((await linkedQueue.addBulk([jobs[0]!]))[0]!.state).toBe('duplicate');
    expect(await checkInvariants(redis.raw, linkedQueue.name)).toEqual([]);
    expect(await checkInvariants(redis.raw, fullQueue.name)).toEqual([]);
  });

  it("fingerprints a caller's key the same in either form: the repeat answers the first reply", async () => {
    const queue = redis.queue({ name: queueName('forms-key') });
    const jobs = [{ payload: 1 }, { payload: 2, group: 'g' }];
    const first = await scriptsOf(queue).run(fullForm(jobs, { key: 'order-7', callerKey: true }));
    const encoded = jobs.map(({ payload, group }) => encodeJob(payload, group === undefined ? {} : { group }, DEFAULT_JOB_DEFAULTS, DEFAULT_MAX_PAYLOAD_BYTES));
    const again = await scriptsOf(queue).run(enqueueOp(encoded, { key: 'order-7', ttlMs: 60_000, callerKey: true }));
    expect(again).toEqual(first);
    expect((await queue.stats()).counts.pending).toBe(2);
  });

  it('refuses an unknown form, a job of the wrong count of values and a linked job of the wrong kind, writing nothing', async () => {
    const queue = redis.queue({ name: queueName('forms-bad') });
    const raw = (args: Array<string | number>): ScriptOp<string[]> => ({
      script: scripts.enqueue,
      args,
      read: (reply) => asArray(reply, 'enqueue').map((v) => asString(v, 'enqueue')),
    });
    for (const args of [
      ['', 0, '0', '', 1, 'x', '{}', ''],
      ['', 0, '0', '', 2, 'p', '{}', '', '{}'],
      ['', 0, '0', '', 1, 'p', '{}'],
      ['', 0, '0', '', 1, 'p', '{}', '', 'extra'],
      ['', 0, '0', '', 1, 'l', 'JOB:1', '{}', '', ''],
    ]) {
      await expect(scriptsOf(queue).run(raw(args)), JSON.stringify(args)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    // a linked job's id goes through the kind door as a full one's does
    await expect(scriptsOf(queue).run(raw(['', 0, '0', '', 1, 'l', 'FLOW:1', '{}', '', '', '']))).rejects.toBeInstanceOf(KindError);
    expect(await redis.raw.keys(`emq:{${queue.name}}:*`)).toEqual([]);
  });
});
