/**
 * The Queue half of fuzz-options: generated `new Queue(transport, name, options)` and sequences of
 * calls to its producer and admin methods, with arguments valid, at the edges and of the wrong
 * kind, over ioredis to the run's Redis (and now and then to a Redis that is away).
 */
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { EmqError } from '../../../src/errors.js';
import type { Outcome } from '../../../src/handler.js';
import { Leases } from '../../../src/lease/leases.js';
import type { IoredisTransport } from '../../../src/node/ioredis-transport.js';
import { Queue } from '../../../src/queue/queue.js';
import { checkInvariants } from '../../../test/invariants.js';
import { describeError, type FuzzTally, shortText, within } from '../../lib/fuzz-tally.js';
import { badName, edgeNumber, jobIdLike, payloadValue, validOr, wrongValue } from '../../lib/fuzz-values.js';
import { digestBeforeCase, keyspaceDigest } from '../../lib/keyspace-digest.js';

/** The longest any one call may take. */
const CALL_LIMIT_MS = 5_000;
/** Methods that only read: they must never write, refused or not. */
const READS = new Set(['getJob', 'stats', 'listDead', 'rateLimits']);
/** A name the runner replaces with a queue name never used before (the registry's first write). */
const FRESH = '<fresh>';

const group = fc.constantFrom('g1', 'g2', 'g3');
const groupArg = fc.oneof({ arbitrary: group, weight: 6 }, { arbitrary: badName, weight: 1 }, { arbitrary: wrongValue, weight: 1 });

const backoff = fc.oneof(
  fc.integer({ min: 0, max: 1_000 }),
  fc.record(
    {
      type: validOr(fc.constantFrom('fixed', 'exponential'), 8),
      delayMs: validOr(fc.integer({ min: 0, max: 1_000 })),
      maxDelayMs: validOr(fc.integer({ min: 1_000, max: 60_000 })),
      jitter: validOr(fc.double({ min: 0, max: 1, noNaN: true })),
    },
    { requiredKeys: ['type', 'delayMs'] },
  ),
);

/** Options of add: every key of EnqueueOptions and RequestOptions, and one no one knows. */
const enqueueOptions = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 3 },
  {
    arbitrary: fc.record(
      {
        id: validOr(jobIdLike),
        group: groupArg,
        delayMs: validOr(fc.integer({ min: 0, max: 5_000 })),
        priority: validOr(fc.integer({ min: 0, max: 2_097_151 })),
        maxAttempts: validOr(fc.integer({ min: 1, max: 5 })),
        backoff: validOr(backoff),
        idempotencyKey: validOr(fc.constantFrom('k1', 'k2', 'k3', `k${'x'.repeat(199)}`, `k${'x'.repeat(200)}`, 'a b', '')),
        unknownKey: wrongValue,
      },
      { requiredKeys: [] },
    ),
    weight: 6,
  },
  // deduplication: a key (valid, empty, too long, with a control character), a ttl and replace, each valid or not
  {
    arbitrary: fc.record({
      dedupe: validOr(
        fc.record(
          {
            key: validOr(fc.constantFrom('d1', 'd2', '', 'x'.repeat(257), 'a\u0001b')),
            ttlMs: validOr(fc.constantFrom(1, 100, 60_000)),
            replace: validOr(fc.boolean()),
            unknownKey: wrongValue,
          },
          { requiredKeys: ['key'] },
        ),
      ),
      delayMs: validOr(fc.integer({ min: 0, max: 5_000 })),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ runAt: validOr(fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.date({ noInvalidDate: false }))) }), weight: 1 },
  { arbitrary: wrongValue, weight: 1 },
);

const bulkJob = fc.oneof(
  // flat, {payload, ...options}; a value that is no options object rides in the earlier nested form, which is refused
  {
    arbitrary: fc
      .tuple(payloadValue, enqueueOptions)
      .map(([payload, options]) =>
        options === undefined ? { payload } : typeof options === 'object' && options !== null && !Array.isArray(options) ? { ...options, payload } : { payload, options },
      ),
    weight: 8,
  },
  { arbitrary: wrongValue, weight: 1 },
);

/** The jobs of addBulk: a few, none, past a chunk (1000 a script call), or not an array at all. */
const bulkJobs = fc.oneof(
  { arbitrary: fc.array(bulkJob, { maxLength: 5 }), weight: 8 },
  { arbitrary: fc.integer({ min: 999, max: 1_002 }).map((n) => Array.from({ length: n }, (_, i) => ({ payload: { i } }))), weight: 1 },
  { arbitrary: wrongValue, weight: 1 },
);

/** One call to a Queue method, by name, with its arguments; `#churn` and `#hold` claim and settle (no fuzz). */
export interface QueueCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

const call = (method: string, ...args: Array<fc.Arbitrary<unknown>>): fc.Arbitrary<QueueCall> =>
  fc.tuple(...args).map((values) => ({ method, args: values }));

/** A rate limit: null (lift), one in range, or one with a field at the edge, missing, extra or of the wrong kind. */
const rateArg = fc.oneof(
  fc.constant(null),
  fc.record({ limit: fc.integer({ min: 1, max: 5 }), periodMs: fc.integer({ min: 1, max: 2_000 }) }),
  fc.record({ limit: validOr(fc.oneof(fc.integer({ min: 1, max: 5 }), edgeNumber)), periodMs: validOr(fc.oneof(fc.integer({ min: 1, max: 2_000 }), edgeNumber)), unknownKey: wrongValue }, { requiredKeys: [] }),
  wrongValue,
);

const queueCall: fc.Arbitrary<QueueCall> = fc.oneof(
  { arbitrary: call('add', payloadValue, enqueueOptions), weight: 10 },
  { arbitrary: call('addBulk', bulkJobs, fc.oneof(fc.constant(undefined), fc.record({ idempotencyKey: validOr(fc.constantFrom('b1', 'b2')) }), wrongValue)), weight: 4 },
  { arbitrary: call('getJob', validOr(jobIdLike)), weight: 2 },
  { arbitrary: call('remove', validOr(jobIdLike)), weight: 2 },
  { arbitrary: call('reprocess', validOr(jobIdLike)), weight: 2 },
  { arbitrary: call('moveToGroup', validOr(jobIdLike), fc.oneof(fc.constant(null), groupArg)), weight: 2 },
  { arbitrary: call('stats'), weight: 1 },
  { arbitrary: call('listDead', fc.oneof(fc.constant(undefined), fc.record({ offset: validOr(fc.integer({ min: 0, max: 10 })), limit: validOr(fc.integer({ min: 1, max: 1_000 })) }, { requiredKeys: [] }), wrongValue)), weight: 2 },
  { arbitrary: call('pause'), weight: 1 },
  { arbitrary: call('resume'), weight: 1 },
  { arbitrary: call('pauseGroup', groupArg), weight: 1 },
  { arbitrary: call('resumeGroup', groupArg), weight: 1 },
  { arbitrary: call('setGroupLimit', groupArg, fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 3 }), edgeNumber, wrongValue)), weight: 2 },
  { arbitrary: call('sweepGroup', groupArg), weight: 1 },
  // rate limits and holds: {limit, periodMs} valid, at the edges, or of the wrong kind; a hold's ms likewise
  { arbitrary: call('setRateLimit', rateArg), weight: 1 },
  { arbitrary: call('setGroupRateLimit', groupArg, rateArg), weight: 2 },
  { arbitrary: call('holdGroup', fc.oneof(fc.constant(null), groupArg), fc.oneof(fc.integer({ min: 1, max: 2_000 }), edgeNumber, wrongValue)), weight: 1 },
  { arbitrary: call('rateLimits'), weight: 1 },
  { arbitrary: fc.constantFrom({ method: '#churn', args: [] }, { method: '#hold', args: [] }), weight: 2 },
);

/** Queue options: none, each key valid or not (and one no one knows), or not an object. */
const queueOptions = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  {
    arbitrary: fc.record(
      {
        maxPayloadBytes: validOr(fc.constantFrom(100, 1_000, 1_048_576, 2_000_000)),
        defaults: validOr(fc.record({ maxAttempts: validOr(fc.integer({ min: 1, max: 5 })), backoff: validOr(backoff) }, { requiredKeys: [] })),
        keepCompletedMs: validOr(fc.constantFrom(-1, 0, 1, 60_000, 3_600_000)),
        idempotencyTtlMs: validOr(fc.constantFrom(1, 1_000, 86_400_000)),
        unknownKey: wrongValue,
      },
      { requiredKeys: [] },
    ),
    weight: 4,
  },
  { arbitrary: wrongValue, weight: 1 },
);

const queueName = fc.oneof(
  { arbitrary: fc.constantFrom('fz-1', 'fz-2', 'fz.3_x', 'x'.repeat(128)), weight: 12 },
  { arbitrary: fc.constant(FRESH), weight: 2 },
  { arbitrary: badName, weight: 1 },
  { arbitrary: wrongValue, weight: 1 },
);

/** One run: a Queue made with generated options, then a few calls on it; `away` runs on a Redis that is not there. */
const queueRun = fc.record({
  name: queueName,
  options: queueOptions,
  calls: fc.array(queueCall, { minLength: 1, maxLength: 6 }),
  away: fc.oneof({ arbitrary: fc.constant(false), weight: 19 }, { arbitrary: fc.constant(true), weight: 1 }),
});

/** Claims up to three jobs and completes or fails them (`#churn`), or claims one and keeps it (`#hold`), so the admin calls meet every state. */
async function settleSome(queue: Queue, method: string): Promise<void> {
  const leases = new Leases(queue);
  const { claimed } = await leases.round({ claim: method === '#hold' ? 1 : 3, leaseMs: 30_000 });
  if (method === '#hold' || !claimed) return;
  const finished = claimed.jobs.map((job, i) => ({
    job,
    outcome: (i % 2 === 0 ? { kind: 'fail', error: 'fuzz: dead on purpose' } : { kind: 'complete' }) satisfies Outcome,
  }));
  if (finished.length > 0) await leases.round({ finished, leaseMs: 30_000 });
}

/** What the Queue fuzzer needs: its database (raw, for digests and invariants) and two transports. */
export interface QueueFuzzContext {
  readonly raw: Redis;
  readonly transport: IoredisTransport;
  /** A transport to a port nothing listens on, failing fast. */
  readonly away: IoredisTransport;
  readonly runs: number;
  readonly seed: number;
  readonly tally: FuzzTally;
}

/**
 * Runs `runs` generated Queue runs. Promises checked: a refusal (at construction or of a call) is
 * an EmqError with a code, never a TypeError, a RangeError or a raw Redis error (EMQREDIS while
 * Redis is up counts as a server error; with Redis away it is the answer); a refused call, and any
 * read, leaves every key and value of the database as it was; an accepted call that writes leaves
 * the queue's invariants clean; no call takes over 5 s.
 */
export async function fuzzQueueCalls(ctx: QueueFuzzContext): Promise<void> {
  const { raw, tally } = ctx;
  let fresh = 0;
  await fc.assert(
    fc.asyncProperty(queueRun, async (run) => {
      if (!run.away) await digestBeforeCase(raw);
      const name = run.name === FRESH ? `fz-new-${fresh++}` : run.name;
      const transport = run.away ? ctx.away : ctx.transport;
      tally.ran('queue_constructs');
      let queue: Queue;
      try {
        queue = new Queue(transport, name as string, run.options as never);
      } catch (error) {
        if (error instanceof EmqError) tally.refused(error.code);
        else tally.broke('server_errors', `new Queue(${shortText(name)}, ${shortText(run.options)}) threw ${describeError(error)}`);
        return;
      }
      for (const { method, args } of run.calls) {
        const shown = `${method}(${args.map(shortText).join(', ')}) on ${shortText(name)}${run.away ? ' (Redis away)' : ''}`;
        if (method.startsWith('#')) {
          if (run.away) continue;
          const ended = await within(CALL_LIMIT_MS, () => settleSome(queue, method));
          if (ended.kind === 'hung') tally.broke('hangs', shown);
          else if (ended.kind === 'threw') tally.broke('server_errors', `${shown} threw ${describeError(ended.error)}`);
          continue;
        }
        tally.ran(run.away ? 'queue_calls_redis_away' : 'queue_calls');
        const before = run.away ? undefined : await keyspaceDigest(raw);
        const ended = await within(CALL_LIMIT_MS, () => (queue as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!.apply(queue, [...args]));
        if (ended.kind === 'hung') {
          tally.broke('hangs', `${shown} took over ${CALL_LIMIT_MS} ms`);
          continue;
        }
        if (ended.kind === 'threw') {
          const { error } = ended;
          if (!(error instanceof EmqError)) tally.broke('server_errors', `${shown} threw ${describeError(error)}`);
          else if (error.code === 'EMQREDIS' && !run.away) tally.broke('server_errors', `${shown} threw ${describeError(error)} with Redis up`);
          else tally.refused(error.code);
        }
        if (before === undefined) continue;
        const wrote = (await keyspaceDigest(raw, before)).sha1 !== before.sha1;
        if (wrote && (ended.kind === 'threw' || READS.has(method))) {
          tally.broke('refused_requests_that_wrote', `${shown} ${ended.kind === 'threw' ? `refused (${describeError(ended.error)})` : 'only reads'}, but the keyspace changed`);
        }
        if (wrote && ended.kind === 'resolved') {
          const violations = await checkInvariants(raw, queue.name);
          if (violations.length > 0) tally.broke('invariant_violations', `after ${shown}: ${violations.join('; ')}`);
        }
      }
    }),
    { numRuns: ctx.runs, seed: ctx.seed },
  );
}
