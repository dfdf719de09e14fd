import { Consumer } from '../../src/node/consumer/index.js';
import type { Job } from '../../src/job.js';
import { type BenchCase, type BenchContext, benchQueueName, type Figures, type Impl, sized, type Sizes } from '../lib/context.js';
import { echoQueue } from '../lib/impls.js';
import { clockOffset } from '../lib/server-clock.js';
import { alignedCounts } from '../lib/start-windows.js';
import { bullmqSide, measureLimited, type Side } from './rate-limit.js';

/** A key-rate run: `groups` groups over `keys` concurrency keys, `perKey` jobs naming each key, each key at `limit` starts per `periodMs`. */
export interface KeyRateSpec {
  /** Groups (a user each): group g's jobs all name key `org:<g mod keys>`, so `groups / keys` groups share a key. */
  readonly groups: number;
  /** Keys (an organisation each), each with the rate limit; a multiple of it is `groups`. */
  readonly keys: number;
  /** Starts per period of one key (echomq); BullMQ gets `keys * limit` for its whole queue. */
  readonly limit: number;
  readonly periodMs: number;
  /** Aligned windows judged, from the first start: every key must be saturated through them. */
  readonly windows: number;
  /** Jobs naming each key: more than `windows * limit`, so no key runs dry in the judged windows. */
  readonly perKey: number;
  /** The consumer's slots: far more than a no-op handler needs, never the bottleneck. */
  readonly concurrency: number;
  /** How long the idle consumer is measured on the empty queue, ms. */
  readonly idleMs: number;
}

/** rate-limit's shape over keys: 20 groups, 10 keys at 50 a second, 600 jobs a key (12 s of backlog), 10 windows judged. */
export const KEY_RATE_FULL: KeyRateSpec = { groups: 20, keys: 10, limit: 50, periodMs: 1_000, windows: 10, perKey: 600, concurrency: 50, idleMs: 5_000 };
/** --quick: the same limits and idle window (one beat), 3 windows judged. */
export const KEY_RATE_QUICK: KeyRateSpec = { groups: 20, keys: 10, limit: 50, periodMs: 1_000, windows: 3, perKey: 250, concurrency: 50, idleMs: 5_000 };
/** --smoke: 4 groups over 2 keys at 5 per 400 ms, 2 windows judged, a 100 ms idle window (no beat in it). */
export const KEY_RATE_SMOKE: KeyRateSpec = { groups: 4, keys: 2, limit: 5, periodMs: 400, windows: 2, perKey: 15, concurrency: 5, idleMs: 100 };

/** The consumer's lease: a claim's server time is its jobs' `leaseUntil` less this. */
const LEASE_MS = 30_000;

/** An echomq job's payload: its index and the key it names. */
interface KeyedPayload {
  readonly i: number;
  readonly k: string;
}

/** One echomq start as the group figures need it: its group and its claim's server time. */
export interface GroupStart {
  readonly group: string;
  readonly at: number;
}

/**
 * `key-rate`: a rate limit per concurrency key (`Queue.setKeyRateLimit`), which follows an
 * organisation across its users' groups. Does it hold exactly per key, keep every key at its
 * limit, share a key's room among its groups, and cost nothing while everything waits on it?
 *
 * The rate-limit case's measurement (bench/cases/rate-limit.ts, `measureLimited`: its doc comment
 * says how every figure is taken) with the entries being keys, not groups:
 *
 * - echomq: 20 groups `g0`..`g19`, each job of group g naming one key, `org:<g mod 10>` (so two
 *   groups a key), each key `setKeyRateLimit(k, {limit: 50, periodMs: 1000})`, no group limit;
 *   600 jobs a key (300 a group) interleaved in one `addBulk`, one parked `Consumer` (concurrency
 *   50, lease 30 s, default beat) with a no-op handler. A start's time is its claim's Redis TIME
 *   (`job.leaseUntil - leaseMs`), its entry the job's key. A job claimed while its key is at its
 *   rate parks on the key, the key is throttled, and a beat at the throttle time readmits parked
 *   jobs to their lanes (docs/design/rate-limits.md, job-controls.md).
 * - BullMQ: open-source BullMQ has no per-key (nor per-group) rate limit: its queue-wide
 *   `limiter: {max: 500, duration: 1000}` on the same total, the same 6,000 jobs in one queue,
 *   concurrency 50 (rate-limit's BullMQ side, with 10 "groups" of 600 in the payload). Its figures
 *   are the anchor for the cost and for what a queue-wide fixed window does; they judge no key.
 *
 * Figures: rate-limit's, per key (`window_*`, `sliding_max`, `slack_*`, `readmit_*`, `dispatch_*`,
 * `drift_max_ms`, `start_*`, `queue_*`, `idle_` / `run_` / `throttled_*`, `goals` with the same
 * three booleans, judged per key), with one difference: `throttled_quiet` is judged on the quiet
 * spans after the first, reported as `throttled_rest_*`. A claim learns that a job's key is at its
 * rate only by popping it, so the first claims park the whole backlog beyond the first period on
 * its keys (each job popped, its row read, its order written, a ZADD: once a job), and under load
 * that work runs on past the first batch's last completion, into the first quiet span
 * (`throttled_first_commands_per_s`); waiting on the limit begins when it is done. The goal is
 * still that nothing polls: no command between readmissions.
 *
 * echomq also reports `groups`, `groups_per_key` and `group_window_min` / `group_window_max`: the
 * fewest and most starts of any group in any aligned window of the judged ones (t0 the first
 * start of all), against `group_share`, the key's limit over its groups (25): whether a key's
 * room goes round its groups. No goal on those.
 */
export function keyRateCase(specs: Sizes<KeyRateSpec>): BenchCase {
  return {
    name: 'key-rate',
    impls: ['echomq', 'bullmq'],
    run: (ctx, impl) => measureKeyRate(ctx, impl, sized(ctx, specs)),
  };
}

/** The registered case: 10 windows judged, 3 with --quick, 2 with --smoke. */
export const keyRate: BenchCase = keyRateCase({ full: KEY_RATE_FULL, quick: KEY_RATE_QUICK, smoke: KEY_RATE_SMOKE });

/** The key a job of group index `g` names. */
const keyOf = (g: number, spec: KeyRateSpec): string => `org:${g % spec.keys}`;

/** Runs one implementation: see keyRateCase. */
export async function measureKeyRate(ctx: BenchContext, impl: Impl, spec: KeyRateSpec): Promise<Figures> {
  if (spec.groups % spec.keys !== 0) throw new Error(`key-rate: ${spec.groups} groups do not split evenly over ${spec.keys} keys`);
  const name = benchQueueName('krate');
  if (impl !== 'echomq') {
    // the queue-wide limiter on the same total: keys * limit a period, keys * perKey jobs
    const asGroups = { groups: spec.keys, limit: spec.limit, periodMs: spec.periodMs, windows: spec.windows, perGroup: spec.perKey, concurrency: spec.concurrency, idleMs: spec.idleMs };
    return measureLimited(ctx, spec, (onStart, onCompleted) => bullmqSide(ctx, name, asGroups, onStart, onCompleted), { afterFirst: true });
  }
  const groupStarts: GroupStart[] = [];
  const figures = await measureLimited(ctx, spec, (onStart, onCompleted) =>
    echomqSide(ctx, name, spec, (key, group, at) => {
      groupStarts.push({ group, at });
      onStart(key, at);
    }, onCompleted),
    // the first claims park the backlog on its keys, and may still be at it in the first quiet span
    { afterFirst: true },
  );
  return { ...figures, groups: spec.groups, groups_per_key: spec.groups / spec.keys, ...groupFigures(groupStarts, spec) };
}

/**
 * How the starts of each key split among its groups: each group's starts in each aligned window
 * [t0 + k * period, t0 + (k + 1) * period), k < windows, t0 the first start of all. A key whose
 * room goes round its groups gives each `limit / (groups / keys)` of them.
 */
export function groupFigures(starts: readonly GroupStart[], spec: Pick<KeyRateSpec, 'groups' | 'keys' | 'limit' | 'periodMs' | 'windows'>): Figures {
  const t0 = Math.min(...starts.map((s) => s.at));
  const byGroup = new Map<string, number[]>();
  for (const s of starts) {
    const list = byGroup.get(s.group) ?? [];
    list.push(s.at);
    byGroup.set(s.group, list);
  }
  const counts: number[] = [];
  for (const times of byGroup.values()) counts.push(...alignedCounts(times, t0, spec.periodMs, spec.windows));
  // a group that never started counts 0 in every window
  for (let g = byGroup.size; g < spec.groups; g++) counts.push(...new Array<number>(spec.windows).fill(0));
  return {
    group_share: spec.limit / (spec.groups / spec.keys),
    group_window_min: counts.length > 0 ? Math.min(...counts) : null,
    group_window_max: counts.length > 0 ? Math.max(...counts) : null,
  };
}

/** echomq: the keys' rate limits set; each consumer a parked Consumer with the no-op handler. */
async function echomqSide(
  ctx: BenchContext,
  name: string,
  spec: KeyRateSpec,
  onStart: (key: string, group: string, at: number) => void,
  onCompleted: () => void,
): Promise<Side> {
  const producer = echoQueue(ctx, name);
  for (let k = 0; k < spec.keys; k++) await producer.queue.setKeyRateLimit(keyOf(k, spec), { limit: spec.limit, periodMs: spec.periodMs });
  const { offset } = await clockOffset(ctx.admin);
  return {
    entries: spec.keys,
    limit: spec.limit,
    offset,
    consume: async () => {
      const { transport, queue } = echoQueue(ctx, name);
      await transport.ping();
      // a claimed job carries no keys: its payload names the one it was added with
      const consumer = new Consumer(transport, queue, (job: Job) => onStart((job.payload as KeyedPayload).k, job.group ?? '*', job.leaseUntil - LEASE_MS), {
        concurrency: spec.concurrency,
        leaseMs: LEASE_MS,
        hooks: { onCompleted, onError: (error) => console.error('echomq consumer error:', error) },
      }).start();
      return async () => {
        await consumer.stop();
        await transport.close();
      };
    },
    enqueue: async () => {
      await producer.queue.addBulk(
        Array.from({ length: spec.keys * spec.perKey }, (_, i) => {
          const g = i % spec.groups;
          const k = keyOf(g, spec);
          return { payload: { i, k } satisfies KeyedPayload, group: `g${g}`, keys: [k] };
        }),
      );
    },
    close: () => producer.transport.close(),
  };
}
