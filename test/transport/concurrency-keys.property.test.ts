import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Job, Queue } from '../../src/index.js';
import { type ClaimResult, claimOp } from '../../src/ops/claim.js';
import type { ScriptOp } from '../../src/ops/op.js';
import { checkInvariants } from '../invariants.js';
import { mutantFailure, mutantOf } from '../mutant-script.js';
import { runDry } from '../keys-run-dry.js';
import { leases, scriptsOf, useRedis } from '../helpers.js';

const KEYS = ['k1', 'k2', 'k3'] as const;
const GROUPS = ['a', 'b'] as const;

/** One step: plain data, so a failing run shrinks to a readable list. */
type Op =
  | { op: 'enqueue'; jobs: Array<{ group: string | null; keys: string[] }> }
  | { op: 'claim'; n: number }
  | { op: 'settle'; how: 'complete' | 'retry' | 'fail' | 'release'; pick: number }
  | { op: 'limit'; key: string; limit: number | null }
  | { op: 'remove'; pick: number }
  | { op: 'cancel'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('enqueue' as const),
      jobs: fc.array(
        fc.record({ group: fc.option(fc.constantFrom(...GROUPS), { nil: null }), keys: fc.subarray([...KEYS], { minLength: 0, maxLength: 2 }) }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('claim' as const), n: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('settle' as const), how: fc.constantFrom('complete' as const, 'retry' as const, 'fail' as const, 'release' as const), pick: fc.nat({ max: 10 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('limit' as const), key: fc.constantFrom(...KEYS), limit: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null, freq: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat({ max: 10 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat({ max: 10 }) }) },
);

/** The claim script with its key check made to skip each job's first key: what the property must catch. */
const mutantClaim = (n: number, leaseMs: number): ScriptOp<ClaimResult> =>
  mutantOf(
    claimOp(n, leaseMs),
    'claim-ignoring-a-key',
    'local full = r[at.ck] and key_slots().take(r[at.ck], ',
    "local full = r[at.ck] and key_slots().take(string.match(r[at.ck], ',(.*)$') or '', ",
  );

/**
 * Concurrency keys over random jobs, keys, limits and claims (docs/design/job-controls.md): after
 * every step the keyspace checker holds (its (t): each key's count equals its running jobs), and
 * no claim takes a key over its limit (a claim that raised a key's running jobs left them within
 * it). At the end, the limits lifted and everything run, every job has ended and no key counts a
 * job. The same run with a claim that ignores a key is caught.
 */
describe('concurrency keys, property', () => {
  const redis = useRedis();

  async function run(ops: readonly Op[], mutant: boolean): Promise<string | undefined> {
    const queue: Queue<number> = redis.queue<number>();
    const l = leases(queue);
    const gateway = scriptsOf(queue as Queue<unknown>);
    const held: Array<Job<number>> = [];
    const limits = new Map<string, number>();
    const jobKeys = new Map<string, string[]>();
    let seq = 0;
    const running = async (): Promise<Map<string, number>> => {
      const counts = new Map<string, number>();
      for (const h of held) for (const k of jobKeys.get(h.id) ?? []) counts.set(k, (counts.get(k) ?? 0) + 1);
      return counts;
    };
    const claim = async (n: number): Promise<void> => {
      const before = await running();
      const claimed = mutant ? await gateway.run(mutantClaim(n, 60_000)) : null;
      const jobs = claimed ? claimed.jobs.map((j) => ({ id: j.id, token: j.token }) as unknown as Job<number>) : (await l.claim(n, 60_000)).jobs;
      held.push(...jobs);
      const after = await running();
      for (const [k, count] of after) {
        const limit = limits.get(k);
        if (limit !== undefined && count > (before.get(k) ?? 0) && count > limit) throw new Error(`key ${k} runs ${count} jobs over its limit ${limit}`);
      }
    };
    const take = (pick: number): Job<number> | undefined => (held.length === 0 ? undefined : held.splice(pick % held.length, 1)[0]);
    try {
      for (const step of ops) {
        if (step.op === 'enqueue') {
          for (const job of step.jobs) {
            const { id } = await queue.add(seq++, { ...(job.group ? { group: job.group } : {}), ...(job.keys.length > 0 ? { keys: job.keys } : {}) });
            jobKeys.set(id, job.keys);
          }
        } else if (step.op === 'claim') {
          await claim(step.n);
        } else if (step.op === 'settle') {
          const h = take(step.pick);
          if (h && step.how === 'complete') await l.complete([h]);
          if (h && step.how === 'retry') await l.retry([{ id: h.id, token: h.token, error: 'x', delayMs: 0 }]);
          if (h && step.how === 'fail') await l.fail([{ id: h.id, token: h.token, error: 'x' }]);
          if (h && step.how === 'release') await l.release([h]);
        } else if (step.op === 'limit') {
          await queue.setKeyLimit(step.key, step.limit);
          if (step.limit === null) limits.delete(step.key);
          else limits.set(step.key, step.limit);
        } else if (step.op === 'remove') {
          const h = take(step.pick);
          if (h) await queue.remove(h.id);
        } else {
          const h = take(step.pick);
          if (h) {
            await queue.cancel(h.id);
            await l.complete([h]);
          }
        }
        const broken = await checkInvariants(redis.raw, queue.name);
        if (broken.length > 0) return `after ${JSON.stringify(step)}: ${broken.join('; ')}`;
      }
      // everything runs once the limits are lifted
      for (const k of KEYS) await queue.setKeyLimit(k, null);
      limits.clear();
      return await runDry(redis.raw, queue, l, held, claim);
    } catch (error) {
      return String(error);
    }
  }

  it('never runs a key over its limit, keeps every key count exact, and loses no job', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), async (ops) => {
        expect(await run(ops, false)).toBeUndefined();
      }),
      { numRuns: 30 },
    );
  }, 240_000);

  it('fails with a claim that ignores a key: the first random run finds it', async () => {
    // seeded: the first random run already breaks it
    expect(await mutantFailure(fc.array(opArb, { minLength: 5, maxLength: 40 }), (ops) => run(ops, true), 35, 30)).toMatch(/Property failed after 1 tests/);
  }, 240_000);

  it('catches a claim that ignores a key, on the first run', async () => {
    // a fixed run that a claim ignoring each job's first key breaks: one slot for k1, two jobs on it
    const ops: Op[] = [
      { op: 'limit', key: 'k1', limit: 1 },
      { op: 'enqueue', jobs: [{ group: null, keys: ['k1'] }, { group: 'a', keys: ['k1'] }] },
      { op: 'claim', n: 4 },
    ];
    expect(await run(ops, false)).toBeUndefined();
    expect(await run(ops, true)).toMatch(/key k1 runs 2 jobs over its limit 1|kactive/);
  }, 60_000);
});
